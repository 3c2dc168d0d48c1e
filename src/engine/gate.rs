//! Completion gates for wt workers (Claude Code's TeammateIdle and TaskCompleted hooks): a worker
//! is not done while its branch has no commit of its own or its worktree has uncommitted files.

use std::path::Path;

use crate::agent::parse_agent_name;
use crate::git::{self, Repo};
use crate::store::{RunManifest, StateLayout};

/// The first `wt-<runId>-task-<p>-<t>` name among the hook input's string fields.
pub fn worker_name(input: &serde_json::Value) -> Option<String> {
    let fields = input.as_object()?;
    fields.values().filter_map(|v| v.as_str()).find(|v| parse_agent_name(v).is_some()).map(str::to_owned)
}

/// Why the worker `name` is not done yet, or None when it may stop.
pub fn refusal(cwd: &Path, name: &str) -> Result<Option<String>, String> {
    let Some((run_id, id)) = parse_agent_name(name) else { return Ok(None) };
    let number = id.to_string();
    let repo = Repo::discover(cwd).map_err(|err| err.to_string())?;
    let manifest = RunManifest::load(&StateLayout::new(repo.common_dir()).manifest(run_id))
        .map_err(|err| err.to_string())?;
    let Some(task) = manifest.task(id) else {
        return Err(format!("run {run_id} has no task {number}"));
    };
    let worktree = &task.worktree;
    let changed = git::status_paths(worktree).map_err(|err| err.to_string())?;
    if !changed.is_empty() {
        return Ok(Some(format!(
            "task {number} has uncommitted files in {}: {}; commit them on {} (git add -A && git commit -m …) \
             before finishing",
            worktree.display(),
            changed.join(", "),
            task.branch
        )));
    }
    let head = git::head_commit(worktree).map_err(|err| err.to_string())?;
    let base = task.base_commit.clone().unwrap_or_default();
    let commits =
        if base.is_empty() { 0 } else { repo.count_commits(&base, &head).map_err(|err| err.to_string())? };
    if commits == 0 {
        return Ok(Some(format!(
            "task {number} ({}) has no commit on {} yet; do the task in {} and commit it before finishing",
            task.name,
            task.branch,
            worktree.display()
        )));
    }
    Ok(None)
}
