//! The stack as git-spice records it: checked after every parallel phase and at the end,
//! reported when the run finishes.

use std::collections::HashMap;
use std::path::Path;

use super::EngineError;
use super::event::StackEntry;
use super::run::Run;
use super::workspace::Workspace;
use crate::git::Repo;
use crate::plan::Plan;
use crate::spice::Spice;
use crate::spice::state;

/// Checks that the stack from the base through `phase`'s last task is linear in plan order
/// (one pass over git-spice's state covers the whole chain).
pub fn check_stack_through(run: &Run, phase: usize) -> Result<(), EngineError> {
    let branches = run.plan.phases.iter().take(phase).flat_map(|p| &p.tasks).map(|t| t.branch.as_str());
    let chain = std::iter::once(run.manifest.base.as_str()).chain(branches);
    check_linear(&run.ws, phase, chain)
}

/// Checks that each branch after the first sits directly on the one before it and needs no
/// restack: from git-spice's state ref and the commits when its layout is known (no process),
/// else with `git-spice log short --all --json`. The first link may sit on an older commit of the
/// base: you may have committed on it while the run worked (`base_moved` says so at the end).
pub fn check_linear<'a>(
    ws: &Workspace,
    phase: usize,
    chain: impl IntoIterator<Item = &'a str>,
) -> Result<(), EngineError> {
    let chain: Vec<&str> = chain.into_iter().collect();
    let problem = match problem_in_state(&ws.repo, &chain)? {
        Verdict::Known(problem) => problem,
        Verdict::AskGitSpice => problem_in_log(&ws.spice, &ws.main_worktree(), &chain)?,
    };
    match problem {
        Some(detail) => Err(EngineError::NotLinear { phase, detail }),
        None => Ok(()),
    }
}

enum Verdict {
    /// The first break in the chain, or None when it is linear.
    Known(Option<String>),
    AskGitSpice,
}

fn problem_in_state(repo: &Repo, chain: &[&str]) -> Result<Verdict, EngineError> {
    let Some((_, branches)) = chain.split_first() else { return Ok(Verdict::Known(None)) };
    let Some(bases) = state::recorded_bases(repo, branches)? else { return Ok(Verdict::AskGitSpice) };
    let tips = chain.iter().map(|branch| repo.branch_commit(branch)).collect::<Result<Vec<_>, _>>()?;
    for (i, recorded) in bases.into_iter().enumerate() {
        let (below, branch) = (chain[i], chain[i + 1]);
        let Some(recorded) = recorded else {
            return Ok(Verdict::Known(Some(format!("git-spice does not track {branch} on {below}"))));
        };
        if recorded.name != below {
            return Ok(Verdict::Known(Some(format!("{branch} sits on {}, not on {below}", recorded.name))));
        }
        let (Some(below_tip), Some(tip)) = (&tips[i], &tips[i + 1]) else {
            return Ok(Verdict::AskGitSpice);
        };
        let on_below = match i {
            0 => repo.is_ancestor(&recorded.hash, below_tip)?,
            _ => recorded.hash == *below_tip,
        };
        if !on_below || !repo.is_ancestor(&recorded.hash, tip)? {
            return Ok(Verdict::Known(Some(format!("{branch} needs a restack onto {below}"))));
        }
    }
    Ok(Verdict::Known(None))
}

fn problem_in_log(spice: &Spice, dir: &Path, chain: &[&str]) -> Result<Option<String>, EngineError> {
    let logged = spice.log_all(dir)?;
    let by_name: HashMap<&str, _> = logged.iter().map(|branch| (branch.name.as_str(), branch)).collect();
    for (i, pair) in chain.windows(2).enumerate() {
        let (below, branch) = (pair[0], pair[1]);
        let problem = match by_name.get(branch).and_then(|b| b.down.as_ref()) {
            None => Some(format!("git-spice does not track {branch} on {below}")),
            Some(down) if down.name != below => {
                Some(format!("{branch} sits on {}, not on {below}", down.name))
            }
            // The base moving on under the first branch is not a break (see `check_linear`).
            Some(down) if down.needs_restack && i > 0 => {
                Some(format!("{branch} needs a restack onto {below}"))
            }
            Some(_) => None,
        };
        if problem.is_some() {
            return Ok(problem);
        }
    }
    Ok(None)
}

/// How many commits the base gained that the stack's bottom branch `first` does not sit on
/// (someone committed on the base while the run worked); None when it has none.
pub fn base_moved(ws: &Workspace, base: &str, first: &str) -> Result<Option<usize>, EngineError> {
    let (Some(base_tip), Some(first_tip)) = (ws.repo.branch_commit(base)?, ws.repo.branch_commit(first)?)
    else {
        return Ok(None);
    };
    let gained = ws.repo.count_commits(&first_tip, &base_tip)?;
    Ok((gained > 0).then_some(gained))
}

/// The run's branches bottom first, with their tip and number of own commits.
pub fn stack_entries(ws: &Workspace, plan: &Plan, base: &str) -> Result<Vec<StackEntry>, EngineError> {
    let mut below = ws.repo.branch_commit(base)?.unwrap_or_default();
    let mut entries = Vec::new();
    for task in plan.tasks() {
        let Some(commit) = ws.repo.branch_commit(&task.branch)? else { break };
        let commits = if below.is_empty() { 0 } else { ws.repo.count_commits(&below, &commit)? };
        entries.push(StackEntry {
            task: task.id,
            name: task.name.clone(),
            branch: task.branch.clone(),
            commit: commit[..commit.len().min(12)].to_owned(),
            commits,
        });
        below = commit;
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Cmd;

    /// A repository with git-spice's stack main ← b1 ← b2, one commit each.
    fn stack() -> (tempfile::TempDir, Repo, Spice) {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().canonicalize().unwrap();
        let git = |args: &[&str]| Cmd::new("git").args(args).dir(&dir).read().unwrap();
        git(&["init", "--quiet", "--initial-branch=main"]);
        git(&["config", "user.name", "t"]);
        git(&["config", "user.email", "t@example.com"]);
        git(&["commit", "--quiet", "--allow-empty", "-m", "init"]);
        let spice = Spice::discover().unwrap();
        spice.repo_init(&dir, "main").unwrap();
        for (branch, below) in [("b1", "main"), ("b2", "b1")] {
            spice.branch_create(&dir, branch, below).unwrap();
            git(&["commit", "--quiet", "--allow-empty", "-m", branch]);
        }
        let repo = Repo::discover(&dir).unwrap();
        (temp, repo, spice)
    }

    /// The verdicts of the state ref and of `git-spice log`, which must agree.
    fn verdicts(repo: &Repo, spice: &Spice, chain: &[&str]) -> (Option<String>, Option<String>) {
        let Verdict::Known(fast) = problem_in_state(repo, chain).unwrap() else {
            panic!("git-spice's state layout is not the one this driver reads")
        };
        (fast, problem_in_log(spice, repo.root(), chain).unwrap())
    }

    #[test]
    fn the_state_ref_and_git_spice_log_agree_on_every_kind_of_break() {
        let (_temp, repo, spice) = stack();
        let dir = repo.root().to_owned();
        let git = |args: &[&str]| Cmd::new("git").args(args).dir(&dir).read().unwrap();
        assert_eq!(verdicts(&repo, &spice, &["main", "b1", "b2"]), (None, None));

        git(&["checkout", "--quiet", "b1"]);
        git(&["commit", "--quiet", "--allow-empty", "-m", "b1 moves on"]);
        let restack = Some("b2 needs a restack onto b1".to_owned());
        assert_eq!(verdicts(&repo, &spice, &["main", "b1", "b2"]), (restack.clone(), restack));

        spice.upstack_onto(&dir, "b2", "main").unwrap();
        let moved = Some("b2 sits on main, not on b1".to_owned());
        assert_eq!(verdicts(&repo, &spice, &["main", "b1", "b2"]), (moved.clone(), moved));

        git(&["branch", "b3", "b1"]);
        let untracked = Some("git-spice does not track b3 on b1".to_owned());
        assert_eq!(verdicts(&repo, &spice, &["main", "b1", "b3"]), (untracked.clone(), untracked));

        git(&["checkout", "--quiet", "main"]);
        git(&["commit", "--quiet", "--allow-empty", "-m", "the trunk moves on"]);
        assert_eq!(verdicts(&repo, &spice, &["main", "b1"]), (None, None), "the trunk moving on is no break");
    }
}
