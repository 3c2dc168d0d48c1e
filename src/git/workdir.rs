//! Operations inside one working tree (a run's main worktree or a task's).

use std::path::Path;

use super::{GitError, git};

/// Paths with uncommitted or untracked changes, untracked files listed one by one (what
/// `git status --porcelain --untracked-files=all` lists). Read in-process: this runs after every
/// task, and a subprocess per call was a measurable share of a run. libgit2 does not honour
/// skip-worktree entries (a sparse checkout's left-out files) as git does: their worktree side
/// is not looked at here either.
pub fn status_paths(dir: &Path) -> Result<Vec<String>, GitError> {
    let repo = open_worktree(dir)?;
    let skipped: std::collections::HashSet<Vec<u8>> = repo
        .index()?
        .iter()
        .filter(|entry| {
            git2::IndexEntryExtendedFlag::from_bits_truncate(entry.flags_extended).is_skip_worktree()
        })
        .map(|entry| entry.path)
        .collect();
    let mut options = git2::StatusOptions::new();
    options.include_untracked(true).recurse_untracked_dirs(true).include_ignored(false);
    let statuses = repo.statuses(Some(&mut options))?;
    let worktree_side = git2::Status::WT_NEW
        | git2::Status::WT_MODIFIED
        | git2::Status::WT_DELETED
        | git2::Status::WT_TYPECHANGE
        | git2::Status::WT_RENAMED;
    Ok(statuses
        .iter()
        .filter(|entry| !skipped.contains(entry.path_bytes()) || !(entry.status() - worktree_side).is_empty())
        .filter_map(|entry| entry.path().ok().map(str::to_owned))
        .collect())
}

/// Git repositories nested in the worktree `dir`: a gitlink in its index, or a folder git would
/// add as one (it holds a `.git`). Looking at the worktree, git runs such a repository's own
/// configured programs (fsmonitor, clean filters) — outside any sandbox when wt does it.
pub fn nested_repositories(dir: &Path) -> Result<Vec<std::path::PathBuf>, GitError> {
    let repo = open_worktree(dir)?;
    let mut found = std::collections::BTreeSet::new();
    for entry in repo.index()?.iter() {
        if entry.mode == GITLINK_MODE {
            found.insert(dir.join(String::from_utf8_lossy(&entry.path).as_ref()));
        }
    }
    // Untracked ones: git lists a nested repository as a folder (`sub/`) and runs nothing in it.
    let out = git(dir).args(["ls-files", "--others", "--exclude-standard", "-z"]).read()?;
    for path in out.stdout.split('\0').filter(|path| path.ends_with('/')) {
        found.insert(dir.join(path.trim_end_matches('/')));
    }
    Ok(found.into_iter().filter(|path| path.join(".git").symlink_metadata().is_ok()).collect())
}

/// Every path the worktree `dir`'s index records, with its mode (`0o160000` a gitlink, `0o120000`
/// a symlink, else a file).
pub fn index_entries(dir: &Path) -> Result<Vec<(std::path::PathBuf, u32)>, GitError> {
    let repo = open_worktree(dir)?;
    let index = repo.index()?;
    Ok(index
        .iter()
        .map(|entry| (dir.join(String::from_utf8_lossy(&entry.path).as_ref()), entry.mode))
        .collect())
}

/// The index mode of a gitlink (a commit of another repository).
pub const GITLINK_MODE: u32 = 0o160000;

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

/// The branch a rebase under way in `dir` is rebasing: git keeps HEAD detached until it ends,
/// but the branch is still that worktree's (git refuses to check it out elsewhere meanwhile).
pub fn rebasing_branch(dir: &Path) -> Option<String> {
    let repo = git2::Repository::open(dir).ok()?;
    ["rebase-merge", "rebase-apply"].iter().find_map(|state| {
        let head = std::fs::read_to_string(repo.path().join(state).join("head-name")).ok()?;
        head.trim().strip_prefix("refs/heads/").map(str::to_owned)
    })
}

/// The paths with unresolved conflicts in `dir`'s index (what `git diff --name-only
/// --diff-filter=U` lists), sorted.
pub fn conflicted_paths(dir: &Path) -> Result<Vec<String>, GitError> {
    let repo = open_worktree(dir)?;
    let mut paths = std::collections::BTreeSet::new();
    for conflict in repo.index()?.conflicts()? {
        let conflict = conflict?;
        let entry = conflict.our.or(conflict.their).or(conflict.ancestor);
        if let Some(entry) = entry {
            paths.insert(String::from_utf8_lossy(&entry.path).into_owned());
        }
    }
    Ok(paths.into_iter().collect())
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_repositories_are_found_committed_and_untracked() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path();
        let run = |args: &[&str], at: &Path| {
            let out = crate::process::Cmd::new("git")
                .args(args)
                .dir(at)
                .env("GIT_CONFIG_GLOBAL", "/dev/null")
                .env("GIT_AUTHOR_NAME", "a")
                .env("GIT_AUTHOR_EMAIL", "a@example.com")
                .env("GIT_COMMITTER_NAME", "a")
                .env("GIT_COMMITTER_EMAIL", "a@example.com")
                .read();
            out.unwrap();
        };
        run(&["init", "-q", "-b", "main"], dir);
        run(&["commit", "-q", "--allow-empty", "-m", "init"], dir);
        for nested in ["committed", "deep/untracked"] {
            std::fs::create_dir_all(dir.join(nested)).unwrap();
            run(&["init", "-q"], &dir.join(nested));
            run(&["commit", "-q", "--allow-empty", "-m", "n"], &dir.join(nested));
        }
        std::fs::write(dir.join("plain.txt"), "x").unwrap();
        run(&["add", "committed"], dir);
        run(&["commit", "-q", "-m", "gitlink"], dir);
        let found = nested_repositories(dir).unwrap();
        assert_eq!(found, [dir.join("committed"), dir.join("deep/untracked")]);
    }
}
