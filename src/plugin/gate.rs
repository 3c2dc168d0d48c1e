//! Completion gates for wt workers (Claude Code's TeammateIdle and TaskCompleted hooks): a worker
//! is not done while its branch has no commit of its own or its worktree has uncommitted files.

use std::path::Path;

use super::leases;
use super::workers::parse_worker_type;
use crate::git::{self, Repo};
use crate::store::StateLayout;

/// The first worker name (`spectacular:wt-worker-<k>`) among the hook input's string fields.
pub fn worker_name(input: &serde_json::Value) -> Option<String> {
    let fields = input.as_object()?;
    fields.values().filter_map(|v| v.as_str()).find(|v| parse_worker_type(v).is_some()).map(str::to_owned)
}

/// Why the worker `name` is not done yet, or None when it may stop (or holds no task).
pub fn refusal(cwd: &Path, name: &str) -> Result<Option<String>, String> {
    let Some(slot) = parse_worker_type(name) else { return Ok(None) };
    let repo = Repo::discover(cwd).map_err(|err| err.to_string())?;
    let Some(holder) = leases::holder(&StateLayout::new(repo.common_dir()), slot) else { return Ok(None) };
    let task = holder.task;
    let number = task.id;
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
