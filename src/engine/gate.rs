//! Completion gates for wt workers (Claude Code's TeammateIdle and TaskCompleted hooks): a worker
//! is not done while its branch has no commit of its own or its worktree has uncommitted files.

use std::path::Path;

use crate::git::{self, Repo};
use crate::store::{RunManifest, StateLayout};

/// The first `wt-<runId>-task-<p>-<t>` name among the hook input's string fields.
pub fn worker_name(input: &serde_json::Value) -> Option<String> {
    let fields = input.as_object()?;
    fields.values().filter_map(|v| v.as_str()).find(|v| parse(v).is_some()).map(str::to_owned)
}

fn parse(name: &str) -> Option<(&str, String)> {
    let (run_id, task) = name.strip_prefix("wt-")?.split_once("-task-")?;
    let (phase, number) = task.split_once('-')?;
    let numeric = |s: &str| !s.is_empty() && s.chars().all(|c| c.is_ascii_digit());
    (crate::plan::run_id::is_valid(run_id) && numeric(phase) && numeric(number))
        .then(|| (run_id, format!("{phase}.{number}")))
}

/// Why the worker `name` is not done yet, or None when it may stop.
pub fn refusal(cwd: &Path, name: &str) -> Result<Option<String>, String> {
    let Some((run_id, number)) = parse(name) else { return Ok(None) };
    let repo = Repo::discover(cwd).map_err(|err| err.to_string())?;
    let manifest = RunManifest::load(&StateLayout::new(repo.common_dir()).manifest(run_id))
        .map_err(|err| err.to_string())?;
    let Some(task) = manifest.phases.iter().flat_map(|p| &p.tasks).find(|t| t.number == number) else {
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
