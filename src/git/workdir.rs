//! Operations inside one working tree (a run's main worktree or a task's).

use std::path::Path;

use super::{GitError, git};

/// Paths with uncommitted or untracked changes, untracked files listed one by one (what
/// `git status --porcelain --untracked-files=all` lists). Read in-process: this runs after every
/// task, and a subprocess per call was a measurable share of a run.
pub fn status_paths(dir: &Path) -> Result<Vec<String>, GitError> {
    let repo = open_worktree(dir)?;
    let mut options = git2::StatusOptions::new();
    options.include_untracked(true).recurse_untracked_dirs(true).include_ignored(false);
    let statuses = repo.statuses(Some(&mut options))?;
    Ok(statuses.iter().filter_map(|entry| entry.path().ok().map(str::to_owned)).collect())
}

/// Opens a worktree and resolves its HEAD: fails for a folder git cannot use (half created).
pub fn open_worktree(dir: &Path) -> Result<git2::Repository, GitError> {
    let repo = git2::Repository::open(dir)?;
    repo.head()?;
    Ok(repo)
}

/// Stages everything and commits it; returns false when there was nothing to commit.
pub fn commit_all(dir: &Path, message: &str) -> Result<bool, GitError> {
    if status_paths(dir)?.is_empty() {
        return Ok(false);
    }
    git(dir).args(["add", "--all"]).read()?;
    git(dir).args(["commit", "--quiet", "--no-verify", "-m", message]).read()?;
    Ok(true)
}

pub fn head_commit(dir: &Path) -> Result<String, GitError> {
    let repo = git2::Repository::open(dir)?;
    let commit = repo.head()?.peel_to_commit()?;
    Ok(commit.id().to_string())
}

/// The branch checked out in `dir`, or None when detached.
pub fn current_branch(dir: &Path) -> Result<Option<String>, GitError> {
    let repo = git2::Repository::open(dir)?;
    let head = repo.find_reference("HEAD")?;
    let target = head.symbolic_target()?;
    Ok(target.and_then(|target| target.strip_prefix("refs/heads/")).map(str::to_owned))
}

/// Detaches HEAD at its commit, releasing the branch for other worktrees.
pub fn detach(dir: &Path) -> Result<(), GitError> {
    git(dir).args(["checkout", "--quiet", "--detach"]).read()?;
    Ok(())
}

pub fn switch(dir: &Path, branch: &str) -> Result<(), GitError> {
    git(dir).args(["checkout", "--quiet", branch, "--"]).read()?;
    Ok(())
}

/// Whether a rebase (git's or git-spice's) was left under way in `dir`.
pub fn rebase_in_progress(dir: &Path) -> Result<bool, GitError> {
    let state = open_worktree(dir)?.state();
    Ok(matches!(
        state,
        git2::RepositoryState::Rebase
            | git2::RepositoryState::RebaseInteractive
            | git2::RepositoryState::RebaseMerge
    ))
}

/// `git rebase --abort`: back to the branch as it was before the rebase; no commit is lost.
pub fn abort_rebase(dir: &Path) -> Result<(), GitError> {
    git(dir).args(["rebase", "--abort"]).read()?;
    Ok(())
}

/// The worktree's private folder in the common git directory (`.git/worktrees/<name>`), read
/// from its `.git` file; None for a missing or main worktree.
pub fn worktree_admin_dir(worktree: &Path) -> Option<std::path::PathBuf> {
    let text = std::fs::read_to_string(worktree.join(".git")).ok()?;
    let admin = text.trim().strip_prefix("gitdir:")?.trim();
    Some(worktree.join(admin))
}
