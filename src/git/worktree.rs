//! Worktree lifecycle: list (porcelain), add, lock, remove, prune. Callers hold the repo lock.

use std::path::{Path, PathBuf};

use super::{GitError, git};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WorktreeEntry {
    pub path: PathBuf,
    pub head: Option<String>,
    pub branch: Option<String>,
    pub locked: bool,
}

pub fn list_worktrees(root: &Path) -> Result<Vec<WorktreeEntry>, GitError> {
    let out = git(root).args(["worktree", "list", "--porcelain", "-z"]).read()?;
    Ok(parse_porcelain(&out.stdout))
}

fn parse_porcelain(text: &str) -> Vec<WorktreeEntry> {
    let mut entries = Vec::new();
    let mut current: Option<WorktreeEntry> = None;
    for field in text.split('\0') {
        if field.is_empty() {
            entries.extend(current.take());
            continue;
        }
        let (key, value) = field.split_once(' ').unwrap_or((field, ""));
        match (key, current.as_mut()) {
            ("worktree", _) => {
                entries.extend(current.take());
                current = Some(WorktreeEntry { path: value.into(), head: None, branch: None, locked: false });
            }
            ("HEAD", Some(entry)) => entry.head = Some(value.to_owned()),
            ("branch", Some(entry)) => {
                entry.branch = Some(value.strip_prefix("refs/heads/").unwrap_or(value).to_owned())
            }
            ("locked", Some(entry)) => entry.locked = true,
            _ => {}
        }
    }
    entries.extend(current);
    entries
}

/// `git worktree add --detach --lock --reason <reason> <path> <commitish>`: locked from birth so
/// other tools' sweeps (`git worktree prune`, editors' cleanups) leave it alone.
pub fn add_detached(root: &Path, path: &Path, commitish: &str, reason: &str) -> Result<(), GitError> {
    git(root)
        .args(["worktree", "add", "--quiet", "--detach", "--lock", "--reason", reason])
        .arg(path)
        .arg(commitish)
        .read()?;
    Ok(())
}

/// Unlocks and removes a worktree. `force` also discards its changes and removes one git still
/// records although its folder is gone or locked mid-creation.
pub fn remove_worktree(root: &Path, path: &Path, force: bool) -> Result<(), GitError> {
    git(root).args(["worktree", "unlock"]).arg(path).read_unchecked()?;
    let mut cmd = git(root).args(["worktree", "remove"]);
    if force {
        cmd = cmd.args(["--force", "--force"]);
    }
    cmd.arg(path).read()?;
    Ok(())
}

/// Removes the records (`<common>/worktrees/<name>/`) whose name starts with `prefix` and that
/// lack a file every complete record has: what a `git worktree add` killed while writing leaves.
/// Such a record holds no work (that lives in the folder and the branch) but makes every
/// `git worktree` command of the repository fail. Returns what was removed.
pub fn remove_incomplete_worktree_records(common_dir: &Path, prefix: &str) -> Result<Vec<PathBuf>, GitError> {
    let records = common_dir.join("worktrees");
    let Ok(entries) = std::fs::read_dir(&records) else { return Ok(Vec::new()) };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let ours = entry.file_name().to_string_lossy().starts_with(prefix);
        let complete = ["gitdir", "commondir", "HEAD"].iter().all(|file| path.join(file).is_file());
        if ours && !complete {
            std::fs::remove_dir_all(&path).map_err(|source| GitError::Io { path: path.clone(), source })?;
            removed.push(path);
        }
    }
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn porcelain_entries_are_parsed() {
        let text = "worktree /r\0HEAD abc\0branch refs/heads/main\0\0worktree /r/.worktrees/x\0HEAD def\0detached\0locked spectacular x\0\0";
        let entries = parse_porcelain(text);
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].branch.as_deref(), Some("main"));
        assert_eq!(entries[1].path, PathBuf::from("/r/.worktrees/x"));
        assert_eq!(entries[1].branch, None);
        assert!(entries[1].locked);
    }
}
