//! git: repository discovery and fast reads through libgit2, and every mutation through the git
//! CLI (via `process`), parsing porcelain output only.

mod diff;
mod exclude;
mod objects;
mod recycle;
mod refs;
mod remote;
mod repo;
mod workdir;
mod worktree;

pub use diff::diff;
pub use exclude::{WORKTREES_DIR, WT_EXCLUDES, ensure_excluded, is_ignored};
pub use objects::holds_anything;
pub use recycle::{checkout_detached, clean_except, detach_hard, refresh_index, unaccounted_untracked};
pub use refs::{SYMBOLIC, put_back_ref};
pub use remote::{Lease, Pushed, delete_branch, fetch_branch, move_branch, push_branch, remote_branch};
pub use repo::Repo;
pub use workdir::{
    GITLINK_MODE, abort_rebase, commit_all, conflicted_paths, current_branch, detach, head_commit,
    index_entries, nested_repositories, open_worktree, rebase_in_progress, rebasing_branch, status_paths,
    switch, worktree_admin_dir,
};
pub use worktree::{
    WorktreeEntry, add_detached, add_detached_empty, add_on_new_branch, enable_worktree_config, fill,
    list_worktrees, move_worktree, remove_incomplete_worktree_records, remove_worktree, set_lock_reason,
    sparse_checkout,
};

use crate::error_kind::ErrorKind;
use crate::process::ProcessError;

#[derive(Debug, thiserror::Error)]
pub enum GitError {
    #[error("{path} is not inside a git repository")]
    NotARepository { path: std::path::PathBuf },
    #[error("{path} is a bare repository; wt needs a repository with a working tree")]
    Bare { path: std::path::PathBuf },
    #[error("reading the repository: {0}")]
    Read(#[from] git2::Error),
    #[error("{0}")]
    Command(#[from] ProcessError),
    #[error("writing {path}: {source}")]
    Io { path: std::path::PathBuf, source: std::io::Error },
}

impl GitError {
    /// The kind of this error and the next thing to try.
    pub fn explain(&self) -> (ErrorKind, Option<String>) {
        match self {
            GitError::NotARepository { .. } => {
                (ErrorKind::Environment, Some("run wt inside a git repository, or pass -C <repo>".into()))
            }
            GitError::Bare { .. } => {
                (ErrorKind::Environment, Some("clone it with a working tree, then run wt there".into()))
            }
            GitError::Read(_) | GitError::Command(_) | GitError::Io { .. } => (ErrorKind::Internal, None),
        }
    }
}

fn git(dir: &std::path::Path) -> crate::process::Cmd {
    with_config(crate::process::Cmd::new("git").dir(dir), &[])
}

/// Settings every git wt runs, and every git-spice (and the git processes those start, which
/// inherit them) gets on top of the repository's: wt's git works in folders an agent wrote, so
/// nothing there may make it run a program — no fsmonitor (a nested repository's config names
/// one), no hooks (yours would run on the agent's files, outside the sandbox), no look inside
/// nested repositories.
const SAFE_CONFIG: [(&str, &str); 3] =
    [("core.fsmonitor", "false"), ("core.hooksPath", "/dev/null"), ("diff.ignoreSubmodules", "all")];

/// `cmd` with `SAFE_CONFIG` and `extra` as command-line configuration (`GIT_CONFIG_COUNT`, which
/// wins over every config file).
pub fn with_config(cmd: crate::process::Cmd, extra: &[(&str, &str)]) -> crate::process::Cmd {
    let pairs: Vec<&(&str, &str)> = SAFE_CONFIG.iter().chain(extra).collect();
    let mut cmd = cmd.env("GIT_CONFIG_COUNT", pairs.len().to_string());
    for (index, (key, value)) in pairs.into_iter().enumerate() {
        cmd = cmd.env(format!("GIT_CONFIG_KEY_{index}"), key).env(format!("GIT_CONFIG_VALUE_{index}"), value);
    }
    cmd
}
