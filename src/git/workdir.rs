//! Operations inside one working tree (a run's main worktree or a task's).

use std::path::Path;

use super::{GitError, git};

/// Paths with uncommitted or untracked changes (`git status --porcelain`), untracked files listed
/// one by one.
pub fn status_paths(dir: &Path) -> Result<Vec<String>, GitError> {
    let out = git(dir).args(["status", "--porcelain=v1", "-z", "--untracked-files=all"]).read()?;
    let mut paths = Vec::new();
    let mut entries = out.stdout.split('\0').filter(|e| !e.is_empty());
    while let Some(entry) = entries.next() {
        let (status, path) = entry.split_at(entry.len().min(3));
        paths.push(path.to_owned());
        // A rename or copy is followed by its source path as a separate entry.
        if status.starts_with('R') || status.starts_with('C') {
            entries.next();
        }
    }
    Ok(paths)
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
    Ok(git(dir).args(["rev-parse", "--verify", "HEAD"]).read()?.stdout.trim().to_owned())
}

/// The branch checked out in `dir`, or None when detached.
pub fn current_branch(dir: &Path) -> Result<Option<String>, GitError> {
    let out = git(dir).args(["symbolic-ref", "--quiet", "--short", "HEAD"]).read_unchecked()?;
    Ok(out.success.then(|| out.stdout.trim().to_owned()))
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
