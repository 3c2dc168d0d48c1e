//! The stack as git-spice sees it: checked after every phase, reported at the end.

use std::collections::HashMap;

use super::EngineError;
use super::event::StackEntry;
use super::workspace::Workspace;
use crate::plan::Plan;

/// Checks, with `git-spice log short --all --json`, that each branch after the first sits
/// directly on the one before it and needs no restack.
pub fn check_linear<'a>(
    ws: &Workspace,
    phase: usize,
    chain: impl IntoIterator<Item = &'a str>,
) -> Result<(), EngineError> {
    let logged = ws.spice.log_all(&ws.main_worktree())?;
    let by_name: HashMap<&str, _> = logged.iter().map(|branch| (branch.name.as_str(), branch)).collect();
    let chain: Vec<&str> = chain.into_iter().collect();
    for pair in chain.windows(2) {
        let (below, branch) = (pair[0], pair[1]);
        let problem = match by_name.get(branch).and_then(|b| b.down.as_ref()) {
            None => Some(format!("git-spice does not track {branch} on {below}")),
            Some(down) if down.name != below => {
                Some(format!("{branch} sits on {}, not on {below}", down.name))
            }
            Some(down) if down.needs_restack => Some(format!("{branch} needs a restack onto {below}")),
            Some(_) => None,
        };
        if let Some(detail) = problem {
            return Err(EngineError::NotLinear { phase, detail });
        }
    }
    Ok(())
}

/// The run's branches bottom first, with their tip and number of own commits.
pub fn stack_entries(ws: &Workspace, plan: &Plan, base: &str) -> Result<Vec<StackEntry>, EngineError> {
    let mut below = ws.repo.branch_commit(base)?.unwrap_or_default();
    let mut entries = Vec::new();
    for task in plan.tasks() {
        let Some(commit) = ws.repo.branch_commit(&task.branch)? else { break };
        let commits = if below.is_empty() { 0 } else { ws.repo.count_commits(&below, &commit)? };
        entries.push(StackEntry {
            task: task.id.to_string(),
            name: task.name.clone(),
            branch: task.branch.clone(),
            commit: commit[..commit.len().min(12)].to_owned(),
            commits,
        });
        below = commit;
    }
    Ok(entries)
}
