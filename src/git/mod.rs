//! git: repository discovery and fast reads through libgit2, and every mutation through the git
//! CLI (via `process`), parsing porcelain output only.

mod exclude;
mod refs;
mod repo;
mod workdir;
mod worktree;

pub use exclude::{ensure_excluded, is_ignored};
pub use refs::{point_head_at, put_back_ref};
pub use repo::Repo;
pub use workdir::{
    abort_rebase, commit_all, current_branch, detach, head_commit, open_worktree, rebase_in_progress,
    status_paths, switch, worktree_admin_dir,
};
pub use worktree::{add_detached, list_worktrees, remove_incomplete_worktree_records, remove_worktree};

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

fn git(dir: &std::path::Path) -> crate::process::Cmd {
    crate::process::Cmd::new("git").dir(dir)
}
