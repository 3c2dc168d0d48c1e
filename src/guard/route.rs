//! Which worktree a hook call belongs to, without running git: from the worker slot a subagent
//! is (`spectacular:wt-worker-<k>`), its lease and the run manifest, or by finding the worktree
//! that holds `cwd` in git's own records (`--detect`).

use std::path::{Path, PathBuf};

use super::hook::Target;
use crate::agent::parse_worker_type;
use crate::store::{StateLayout, slots};

/// A worker's task, as its slot's lease says.
pub struct Assignment {
    pub run_id: String,
    pub target: Target,
}

/// The task of the worker `agent_type`, from the lease of its slot in `common` (the
/// repository's git directory, when the call's folder is in one). `Ok(None)`: not one of the
/// plugin's workers. `Err`: a worker with no task here, which must not run unguarded.
pub fn from_agent_type(
    agent_type: &str,
    common: Option<&Path>,
    cwd: &Path,
) -> Result<Option<Assignment>, String> {
    let Some(slot) = parse_worker_type(agent_type) else { return Ok(None) };
    let common = common.ok_or_else(|| {
        format!("{agent_type} is a wt worker, but {} is not inside a repository with wt runs", cwd.display())
    })?;
    let holder = slots::holder(&StateLayout::new(common), slot).ok_or_else(|| {
        format!(
            "{agent_type} holds no task of a wt run in this repository; dispatch wt workers only as \
             `wt step <plan|runId> --json` lists them"
        )
    })?;
    Ok(Some(Assignment {
        run_id: holder.lease.run_id,
        target: Target { root: holder.task.worktree, branch: Some(holder.task.branch) },
    }))
}

/// The worktree holding `cwd`, by the longest match among the repository's worktrees; the main
/// checkout only when `include_main`.
pub fn detect(common: &Path, cwd: &Path, include_main: bool) -> Option<Target> {
    let mut candidates: Vec<(PathBuf, Option<String>)> = Vec::new();
    if include_main {
        let main = common.parent()?.to_owned();
        candidates.push((main, read_branch(&common.join("HEAD"))));
    }
    for entry in std::fs::read_dir(common.join("worktrees")).ok()?.flatten() {
        let admin = entry.path();
        let Ok(gitdir) = std::fs::read_to_string(admin.join("gitdir")) else { continue };
        let Some(root) = Path::new(gitdir.trim()).parent() else { continue };
        candidates.push((root.to_owned(), read_branch(&admin.join("HEAD"))));
    }
    let cwd = super::paths::real_path(cwd);
    candidates
        .into_iter()
        .filter(|(root, _)| cwd.starts_with(super::paths::real_path(root)))
        .max_by_key(|(root, _)| root.components().count())
        .map(|(root, branch)| Target { root, branch })
}

fn read_branch(head: &Path) -> Option<String> {
    let text = std::fs::read_to_string(head).ok()?;
    text.trim().strip_prefix("ref: refs/heads/").map(str::to_owned)
}

/// The repository's common git directory, found by walking up from `dir` (reading `.git`
/// files of linked worktrees, never running git).
pub fn common_dir(dir: &Path) -> Option<PathBuf> {
    let mut current = Some(dir);
    while let Some(path) = current {
        let dot_git = path.join(".git");
        if dot_git.is_dir() {
            return Some(dot_git);
        }
        if let Ok(text) = std::fs::read_to_string(&dot_git) {
            let admin = path.join(text.trim().strip_prefix("gitdir:")?.trim());
            let common = std::fs::read_to_string(admin.join("commondir")).ok()?;
            return Some(super::paths::lexical(&admin.join(common.trim())));
        }
        current = path.parent();
    }
    None
}

/// The project's `.spectacular/guard.toml`, read from the main checkout (which agents cannot
/// edit), given the repository's git directory.
pub fn project_rules_path(common: &Path) -> Option<PathBuf> {
    Some(common.parent()?.join(".spectacular").join("guard.toml"))
}

/// The rules a run's guard uses, written by the engine into the run's state.
pub fn run_rules_path(run_id: &str, common: &Path) -> PathBuf {
    StateLayout::new(common).guard_rules(run_id)
}
