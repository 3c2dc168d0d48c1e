//! `wt cleanup`: remove exactly what one run owns — its worktrees (found by name, so a second
//! cleanup or one after lost state still finds them) and its state — and keep its branches unless
//! asked. Everything is checked before anything is removed. (The plugin's leases of the run are
//! the plugin's to drop.)

use std::path::{Path, PathBuf};

use super::EngineError;
use super::journal::{Journal, Step};
use super::run::lock_run;
use super::worktrees::{remove_run_worktree, run_worktrees};
use crate::git::{self, Repo};
use crate::spice::Spice;
use crate::store::{EventLog, FileLock, RunManifest, StateLayout};

pub struct CleanupRequest {
    pub run_id: String,
    /// Remove worktrees with uncommitted or untracked files, and delete unmerged branches.
    pub force: bool,
    pub delete_branches: bool,
}

#[derive(Debug, Default, serde::Serialize)]
pub struct CleanupReport {
    pub run_id: String,
    pub removed_worktrees: Vec<PathBuf>,
    pub removed_files: Vec<PathBuf>,
    pub deleted_branches: Vec<String>,
    pub kept_branches: Vec<String>,
    pub removed_state: bool,
}

impl CleanupReport {
    pub fn is_empty(&self) -> bool {
        self.removed_worktrees.is_empty()
            && self.removed_files.is_empty()
            && self.deleted_branches.is_empty()
            && !self.removed_state
    }
}

pub fn cleanup(repo: &Repo, request: &CleanupRequest) -> Result<CleanupReport, EngineError> {
    let run_id = &request.run_id;
    let layout = StateLayout::new(repo.common_dir());
    let run_dir = layout.run_dir(run_id);
    // Holding the run lock keeps the run from starting while it is taken apart.
    let _run_lock = lock_run(&layout, run_id)?;
    // A damaged manifest must not keep its run from being removed: everything below is found
    // by name; the manifest only tells the base for the merged-branch check.
    let manifest = RunManifest::load(&layout.manifest(run_id)).ok();
    let worktrees = run_worktrees(repo, run_id)?;
    if !request.force {
        refuse_dirty(&worktrees)?;
    }
    let branches = run_branches(repo, run_id)?;
    let spice = if request.delete_branches && !branches.is_empty() { Some(Spice::discover()?) } else { None };
    if request.delete_branches && !request.force {
        let base = manifest.as_ref().map(|m| m.base.clone());
        refuse_unmerged(repo, base.as_deref(), &branches)?;
    }

    let journal = Journal::new(EventLog::new(&layout.events(run_id)));
    let mut report = CleanupReport { run_id: run_id.clone(), ..CleanupReport::default() };
    let _repo_lock = FileLock::acquire(&layout.repo_lock())?;
    for worktree in worktrees {
        let target = worktree.to_string_lossy().into_owned();
        journal.step(Step::CleanupWorktree, &target, || remove_run_worktree(repo, &worktree))?;
        report.removed_worktrees.push(worktree);
    }
    git::remove_incomplete_worktree_records(repo.common_dir(), &format!("{run_id}-"))?;
    match spice {
        Some(spice) => {
            let main = repo.root().to_owned();
            journal.step(Step::CleanupBranches, run_id, || Ok(spice.branch_delete(&main, &branches)?))?;
            report.deleted_branches = branches;
        }
        None => report.kept_branches = branches,
    }
    journal.crash_point(Step::CleanupState, run_id, false);
    if run_dir.exists() {
        remove_state(&run_dir)?;
        report.removed_state = true;
    }
    Ok(report)
}

fn refuse_dirty(worktrees: &[PathBuf]) -> Result<(), EngineError> {
    let mut dirty = Vec::new();
    for worktree in worktrees.iter().filter(|w| git::open_worktree(w).is_ok()) {
        let files = git::status_paths(worktree)?;
        if !files.is_empty() {
            dirty.push((worktree.clone(), files));
        }
    }
    if dirty.is_empty() { Ok(()) } else { Err(EngineError::DirtyWorktrees { dirty }) }
}

/// Branches named `<runId>-task-…`, the names only this run gives.
fn run_branches(repo: &Repo, run_id: &str) -> Result<Vec<String>, EngineError> {
    Ok(repo.branches_with_prefix(&format!("{run_id}-task-"))?)
}

fn refuse_unmerged(repo: &Repo, base: Option<&str>, branches: &[String]) -> Result<(), EngineError> {
    let base_commit = match base {
        Some(base) => repo.branch_commit(base)?,
        None => None,
    };
    let mut unmerged = Vec::new();
    for branch in branches {
        let merged = match (&base_commit, repo.branch_commit(branch)?) {
            (Some(base), Some(tip)) => repo.is_ancestor(&tip, base)?,
            _ => false,
        };
        if !merged {
            unmerged.push(branch.clone());
        }
    }
    if unmerged.is_empty() {
        Ok(())
    } else {
        Err(EngineError::UnmergedBranches { base: base.unwrap_or("its base").to_owned(), branches: unmerged })
    }
}

/// Removes the run's state folder. The run lock file inside it is still held by this process;
/// removing an open, locked file is fine on Unix.
fn remove_state(run_dir: &Path) -> Result<(), EngineError> {
    std::fs::remove_dir_all(run_dir)
        .map_err(|source| EngineError::Io { context: format!("removing {}", run_dir.display()), source })
}
