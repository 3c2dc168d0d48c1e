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

/// `git worktree add --no-checkout --detach --lock --reason <reason> <path> <commitish>`: the
/// worktree registered, HEAD detached at the commit, without an index or any file yet (`fill`
/// writes them). Registering takes a moment; writing the files is the long part, and touches
/// nothing but this worktree.
pub fn add_detached_empty(root: &Path, path: &Path, commitish: &str, reason: &str) -> Result<(), GitError> {
    git(root)
        .args(["worktree", "add", "--quiet", "--no-checkout", "--detach", "--lock", "--reason", reason])
        .arg(path)
        .arg(commitish)
        .read()?;
    Ok(())
}

/// `git sparse-checkout set --cone -- <dirs>` in a worktree `add_detached_empty` made: `fill`
/// then writes only those folders (and the files at the top). The repository must read worktree
/// config already ([`enable_worktree_config`]), or git turns it on itself.
pub fn sparse_checkout(worktree: &Path, dirs: &[String]) -> Result<(), GitError> {
    git(worktree).args(["sparse-checkout", "set", "--cone", "--"]).args(dirs).read()?;
    Ok(())
}

/// Sets `extensions.worktreeConfig` in the repository's config unless it is set: a sparse
/// worktree keeps its patterns in its own config, and git would otherwise turn it on while the
/// worktree is made — a change to the shared config in the middle of other tasks' work.
pub fn enable_worktree_config(root: &Path) -> Result<(), GitError> {
    let set = git(root).args(["config", "--type", "bool", "extensions.worktreeConfig"]).read_unchecked()?;
    if set.stdout.trim() != "true" {
        git(root).args(["config", "extensions.worktreeConfig", "true"]).read()?;
    }
    Ok(())
}

/// `git reset --hard --no-recurse-submodules`: the index and every file of the worktree as HEAD
/// has them (within its sparse patterns); what `git worktree add` runs in a new worktree. Done
/// again after a kill, it finishes the job.
pub fn fill(worktree: &Path) -> Result<(), GitError> {
    git(worktree).args(["reset", "--quiet", "--hard", "--no-recurse-submodules"]).read()?;
    Ok(())
}

/// `git worktree add -b <branch> <path> <start>`: a worktree on a new branch made at `start`.
pub fn add_on_new_branch(root: &Path, path: &Path, branch: &str, start: &str) -> Result<(), GitError> {
    git(root).args(["worktree", "add", "--quiet", "-b", branch]).arg(path).arg(start).read()?;
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

/// `git worktree move -f -f <from> <to>`: the folder renamed and git's record of it updated (its
/// admin folder and name stay). Twice forced because wt's worktrees are locked; the lock stays.
pub fn move_worktree(root: &Path, from: &Path, to: &Path) -> Result<(), GitError> {
    git(root).args(["worktree", "move", "-f", "-f"]).arg(from).arg(to).read()?;
    Ok(())
}

/// Sets the reason a locked worktree records, in its admin folder's `locked` file, which is what
/// `git worktree lock --reason` writes (written directly: unlock and lock again are two processes
/// for one line of text, and the worktree is locked all along).
pub fn set_lock_reason(admin: &Path, reason: &str) -> Result<(), GitError> {
    let path = admin.join("locked");
    std::fs::write(&path, reason).map_err(|source| GitError::Io { path, source })
}

/// Removes the records (`<common>/worktrees/<name>/`) whose name starts with `prefix` and that
/// lack a file every complete record has, or hold it empty: what a `git worktree add` killed
/// while writing leaves (it creates a file before it writes it).
/// Such a record holds no work (that lives in the folder and the branch) but makes every
/// `git worktree` command of the repository fail. Returns what was removed.
pub fn remove_incomplete_worktree_records(common_dir: &Path, prefix: &str) -> Result<Vec<PathBuf>, GitError> {
    let records = common_dir.join("worktrees");
    let Ok(entries) = std::fs::read_dir(&records) else { return Ok(Vec::new()) };
    let mut removed = Vec::new();
    for entry in entries.flatten() {
        let path = entry.path();
        let ours = entry.file_name().to_string_lossy().starts_with(prefix);
        let complete = ["gitdir", "commondir", "HEAD"].iter().all(|file| {
            std::fs::metadata(path.join(file)).is_ok_and(|meta| meta.is_file() && meta.len() > 0)
        });
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
    fn records_missing_a_file_or_holding_it_empty_are_removed_and_only_ours() {
        let temp = tempfile::tempdir().unwrap();
        let record = |name: &str, files: &[(&str, &str)]| {
            let dir = temp.path().join("worktrees").join(name);
            std::fs::create_dir_all(&dir).unwrap();
            for (file, text) in files {
                std::fs::write(dir.join(file), text).unwrap();
            }
        };
        let full = [("gitdir", "/r/.worktrees/x/.git\n"), ("commondir", "../..\n"), ("HEAD", "abc\n")];
        record("run1-complete", &full);
        record("run1-no-head", &full[..2]);
        record("run1-empty-commondir", &[full[0], ("commondir", ""), full[2]]);
        record("other-no-head", &full[..2]);
        let mut removed = remove_incomplete_worktree_records(temp.path(), "run1-").unwrap();
        removed.sort();
        let names: Vec<String> =
            removed.iter().map(|p| p.file_name().unwrap().to_string_lossy().into_owned()).collect();
        assert_eq!(names, ["run1-empty-commondir", "run1-no-head"]);
        assert!(temp.path().join("worktrees/run1-complete").exists());
        assert!(temp.path().join("worktrees/other-no-head").exists(), "another run's record is not ours");
    }

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
