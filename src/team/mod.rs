//! Worktree teams: worktrees a lead (a person, or an agent spawning teammates) makes with
//! `wt create <name> --base <branch>`, each `.worktrees/<name>` on a new branch `<name>`, stacked
//! on its base with git-spice, each with a generated agent `.claude/agents/wt-<name>.md` in the
//! main checkout. This module holds the library side of `wt create`, `wt list`/`stack`/`info`,
//! `wt diff` and `wt cleanup <name>`; the commands that change a branch beyond commits (push, pr,
//! rebase, sync, poll) build on the same pieces:
//!
//! - [`TeamRepo`]: the repository, its git-spice and wt's state, where a name's worktree, agent
//!   file and record live, and the repo lock;
//! - [`Graph`]: git-spice's branch graph read live (bases, dependents, change requests);
//! - [`view`]: that graph joined with git's worktrees, for every wt worktree (teams' and runs');
//! - [`upstack`]: moving a branch onto another base and restacking what sits on it, each branch
//!   in its own worktree;
//! - [`agent_file`]: the generated agent definition, shared with runs' generated agents;
//! - [`poll`]: `wt poll`, waiting for the next event of a branch's change request or base.
//! - [`push`], [`open_or_update`] (`wt pr`), [`rebase`] and [`sync`]: a branch beyond its commits —
//!   pushed only over what wt pushed itself (`lease.rs`, `pushed.rs`), opened for review, moved
//!   when its base changed or merged, and a stack brought up to date after merges.
//!
//! Invariants:
//! - git-spice's state is the only graph: a base, a dependent or a change request is read from
//!   git-spice when asked, never copied into wt's state (which keeps only `--verify`).
//! - The user's checkout is never changed: wt writes under `.worktrees/`, in the git directory,
//!   and agent files it generated (ignored through `.git/info/exclude`, never a tracked file).
//! - A push never replaces a commit wt did not push: the remote is asked first, and the lease
//!   is the commit wt recorded when it last pushed (`<common>/spectacular/team/pushed.json`).
//! - Every change to worktrees, branches or git-spice holds the repo lock ([`TeamRepo::lock`]),
//!   the one runs take too; reads take no lock.
//! - No commit is lost: a worktree with uncommitted files is removed only with `--force`, and a
//!   branch is deleted only when its base already holds all of it.
//! - Nothing here depends on the run engine: a run's worktrees are seen through the same
//!   git-spice graph and their names (`name::run_of`).

pub mod agent_file;
mod create;
mod diff;
mod error;
mod git_state;
mod graph;
mod lease;
pub mod name;
mod own;
pub mod poll;
mod push;
mod pushed;
mod rebase;
mod record;
mod remove;
mod review_error;
mod submit;
mod sync;
pub mod upstack;
pub mod view;

use std::path::{Path, PathBuf};

pub use create::{CreateRequest, Created, create};
pub use diff::diff;
pub use error::TeamError;
pub use graph::{ChangesRead, Graph};
pub use push::{PushOutcome, PushReport, push};
pub use rebase::{RebaseOutcome, RebaseReport, RebaseRequest, rebase};
pub use record::TeamRecord;
pub use remove::{BranchFate, RemoveRequest, Removed, remove};
pub use submit::{PrReport, open_or_update};
pub use sync::{SyncEvent, SyncScope, Synced, TrunkState, TrunkSync, sync};

use crate::git::{Repo, WORKTREES_DIR, WorktreeEntry};
use crate::spice::Spice;
use crate::store::{FileLock, StateLayout};

/// A repository as the team commands see it: git, git-spice and wt's state.
#[derive(Debug, Clone)]
pub struct TeamRepo {
    repo: Repo,
    spice: Spice,
    layout: StateLayout,
}

impl TeamRepo {
    /// The repository holding `cwd` (from any of its worktrees) and the git-spice to drive.
    pub fn open(cwd: &Path) -> Result<TeamRepo, TeamError> {
        let repo = Repo::discover(cwd)?;
        let spice = Spice::discover()?;
        let layout = StateLayout::new(repo.common_dir());
        Ok(TeamRepo { repo, spice, layout })
    }

    pub fn repo(&self) -> &Repo {
        &self.repo
    }

    pub fn spice(&self) -> &Spice {
        &self.spice
    }

    pub fn layout(&self) -> &StateLayout {
        &self.layout
    }

    /// Where the team worktree `name` lives: `<main checkout>/.worktrees/<name>`.
    pub fn worktree_path(&self, name: &str) -> PathBuf {
        self.repo.root().join(WORKTREES_DIR).join(name)
    }

    /// The generated agent of `name`, relative to the main checkout.
    pub fn agent_relative_path(name: &str) -> PathBuf {
        Path::new(".claude").join("agents").join(format!("{}.md", name::agent_name(name)))
    }

    /// The generated agent of `name`: `<main checkout>/.claude/agents/wt-<name>.md` (a session
    /// in the main checkout finds it, and so does one in any linked worktree).
    pub fn agent_path(&self, name: &str) -> PathBuf {
        self.repo.root().join(Self::agent_relative_path(name))
    }

    /// wt's record of `name` (its `--verify`).
    pub fn record(&self, name: &str) -> Result<Option<TeamRecord>, TeamError> {
        TeamRecord::load(&self.layout.team_record(name))
    }

    /// The repo lock, shared with runs: hold it around every change to worktrees, branches or
    /// git-spice's state, and only there.
    pub fn lock(&self) -> Result<FileLock, TeamError> {
        Ok(FileLock::acquire(&self.layout.repo_lock())?)
    }

    /// The worktree git records at `path`, if any.
    pub fn worktree_at(&self, path: &Path) -> Result<Option<WorktreeEntry>, TeamError> {
        let worktrees = crate::git::list_worktrees(self.repo.root())?;
        Ok(worktrees.into_iter().find(|entry| same_path(&entry.path, path)))
    }

    /// git-spice's graph now, without asking the forge.
    pub fn graph(&self) -> Result<Graph, TeamError> {
        Graph::read(self, false)
    }

    /// git-spice's graph now, with each change request's state and comments from the forge
    /// (unknown where the forge cannot be reached: see [`ChangesRead`]).
    pub fn graph_with_changes(&self) -> Result<Graph, TeamError> {
        Graph::read(self, true)
    }
}

/// Whether two paths name the same folder (git records canonical paths; callers may not).
fn same_path(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    a == b || canonical(a) == canonical(b)
}
