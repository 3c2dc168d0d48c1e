//! `wt cleanup`: remove exactly what one run owns — its worktrees (found by name, so a second
//! cleanup or one after lost state still finds them) and its state — and keep its branches unless
//! asked. Everything is checked before anything is removed. A worktree with nothing uncommitted
//! goes to the repository's pool of recycled worktrees when the run recycles and the pool has
//! room; `cleanup_pool` empties the pool. (The plugin's leases of the run are the plugin's to
//! drop.)

use std::path::{Path, PathBuf};

use super::EngineError;
use super::journal::{Journal, Step};
use super::pool::{self, Pool, PoolPolicy, Retired, Uncommitted, remove_run_worktree};
use super::prepare::DEFAULT_MAX_PARALLEL;
use super::run::lock_run;
use super::worktrees::run_worktrees;
use crate::git::{self, Repo};
use crate::plan::{self, WorktreeConfig};
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
    /// Worktrees moved to the pool of recycled worktrees: where each was and its slot there.
    pub parked_worktrees: Vec<ParkedWorktree>,
    pub removed_files: Vec<PathBuf>,
    pub deleted_branches: Vec<String>,
    pub kept_branches: Vec<String>,
    pub removed_state: bool,
}

#[derive(Debug, serde::Serialize)]
pub struct ParkedWorktree {
    pub worktree: PathBuf,
    pub slot: PathBuf,
}

impl CleanupReport {
    pub fn is_empty(&self) -> bool {
        self.removed_worktrees.is_empty()
            && self.parked_worktrees.is_empty()
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
    {
        // A move in or out of the pool a killed process left (this cleanup's own, say) is finished
        // first: it may have taken one of the run's worktrees away from its name.
        let _repo_lock = FileLock::acquire(&layout.repo_lock())?;
        pool::recover(repo, &layout)?;
    }
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
    let policy = run_pool_policy(repo, &layout, run_id, manifest.as_ref());
    let mut report = CleanupReport { run_id: run_id.clone(), ..CleanupReport::default() };
    let _repo_lock = FileLock::acquire(&layout.repo_lock())?;
    let pool = Pool { repo, layout: &layout, journal: &journal, policy: &policy };
    // Without --force every worktree was seen clean (`refuse_dirty`), but before the repo lock:
    // a file written since must not be cleaned away when the worktree is parked.
    let uncommitted = if request.force { Uncommitted::Discard } else { Uncommitted::Keep };
    for worktree in worktrees {
        let target = worktree.to_string_lossy().into_owned();
        let retired =
            journal.step(Step::CleanupWorktree, &target, || match pool_target(&worktree, run_id) {
                Some(name) => pool.retire(&worktree, &name, uncommitted),
                None => {
                    remove_run_worktree(repo, &layout, &worktree, true)?;
                    Ok(Retired::Removed { reason: "moved aside by a repair".into() })
                }
            })?;
        match retired {
            Retired::Parked { slot } => report.parked_worktrees.push(ParkedWorktree { worktree, slot }),
            Retired::Removed { .. } => report.removed_worktrees.push(worktree),
        }
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

/// `wt cleanup --pool`: removes every worktree the pool holds (and finishes what a killed move
/// left). Returns the slots removed.
pub fn cleanup_pool(repo: &Repo) -> Result<Vec<PathBuf>, EngineError> {
    let layout = StateLayout::new(repo.common_dir());
    let _repo_lock = FileLock::acquire(&layout.repo_lock())?;
    pool::empty(repo, &layout)
}

/// How the run recycles, as it did when it ran: its plan's `[worktree]` (from the copy in its
/// state) over the project's worktree.toml, capped by its `max_parallel`. A project file that
/// cannot be read recycles nothing.
fn run_pool_policy(
    repo: &Repo,
    layout: &StateLayout,
    run_id: &str,
    manifest: Option<&RunManifest>,
) -> PoolPolicy {
    let project = match WorktreeConfig::load_toml(&WorktreeConfig::project_path(repo.root())) {
        Ok(project) => project.unwrap_or_default(),
        Err(_) => WorktreeConfig { recycle: Some(false), ..WorktreeConfig::default() },
    };
    let plan = manifest.and_then(|m| plan::load(&layout.plan_copy(run_id, &m.plan_path), Some(run_id)).ok());
    let config = project.merge(plan.as_ref().map(|plan| plan.worktree.clone()).unwrap_or_default());
    let max_parallel = manifest
        .and_then(|m| m.overrides.max_parallel)
        .or(plan.and_then(|plan| plan.agent.max_parallel))
        .unwrap_or(DEFAULT_MAX_PARALLEL);
    PoolPolicy::new(&config, max_parallel)
}

/// How the journal names a run worktree: `main`, or a task's `P.T`; None for a folder a repair
/// moved aside, which is only ever removed.
fn pool_target(worktree: &Path, run_id: &str) -> Option<String> {
    let name = worktree.file_name()?.to_str()?.strip_prefix(run_id)?.strip_prefix('-')?;
    if name.contains(".broken-") {
        return None;
    }
    match name.strip_prefix("task-") {
        Some(numbers) => Some(numbers.replace('-', ".")),
        None => Some(name.to_owned()),
    }
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
