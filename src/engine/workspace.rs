//! What every part of a run needs, shareable with the parallel workers.

use std::path::PathBuf;

use super::EngineError;
use super::journal::Journal;
use super::pool::{Pool, PoolPolicy};
use super::seed::SeedPolicy;
use crate::agent::Agent;
use crate::git::Repo;
use crate::plan::TaskId;
use crate::spice::Spice;
use crate::store::{Containment, FileLock, StateLayout};

pub use crate::git::WORKTREES_DIR;

/// `.worktrees/<runId>-main`: the run's main worktree, where sequential tasks work and the
/// stack is checked out.
pub fn main_worktree_path(repo: &Repo, run_id: &str) -> PathBuf {
    repo.root().join(WORKTREES_DIR).join(format!("{run_id}-main"))
}

/// `.worktrees/<runId>-task-<p>-<t>`: a parallel task's worktree.
pub fn task_worktree_path(repo: &Repo, run_id: &str, id: TaskId) -> PathBuf {
    repo.root().join(WORKTREES_DIR).join(format!("{run_id}-{}", id.key()))
}

#[derive(Debug, Clone)]
pub struct Workspace {
    pub repo: Repo,
    pub spice: Spice,
    pub layout: StateLayout,
    pub run_id: String,
    pub feature: Option<String>,
    /// The backend wt starts agents with; None when an orchestrator dispatches them (`wt step`).
    pub agent: Option<Agent>,
    pub journal: Journal,
    /// This `wt` binary, for the hooks and wrappers that call back into it.
    pub wt_exe: PathBuf,
    /// How long an agent may run when its task sets no timeout.
    pub timeout: Option<std::time::Duration>,
    /// Whether the kernel keeps the run's agents in their worktrees, or only the guard's policy.
    pub containment: Containment,
    /// Whether the run recycles its worktrees through the repository's pool, and how.
    pub pool: PoolPolicy,
    /// How a fresh worktree is made beyond `git worktree add`: sparse, seeded, owed a setup.
    pub seed: SeedPolicy,
}

impl Workspace {
    /// The repo-wide lock: held around every git-spice call and worktree add/remove, never
    /// around an agent's work.
    pub fn repo_lock(&self) -> Result<FileLock, EngineError> {
        Ok(FileLock::acquire(&self.layout.repo_lock())?)
    }

    pub fn main_worktree(&self) -> PathBuf {
        main_worktree_path(&self.repo, &self.run_id)
    }

    pub fn task_worktree(&self, id: TaskId) -> PathBuf {
        task_worktree_path(&self.repo, &self.run_id, id)
    }

    /// The repository's pool of recycled worktrees, as this run uses it (hold the repo lock).
    pub fn pool(&self) -> Pool<'_> {
        Pool { repo: &self.repo, layout: &self.layout, journal: &self.journal, policy: &self.pool }
    }

    /// The reason recorded by `git worktree lock`, so other tools' sweeps leave ours alone.
    pub fn lock_reason(&self) -> String {
        format!("spectacular {} pid {}", self.run_id, std::process::id())
    }
}
