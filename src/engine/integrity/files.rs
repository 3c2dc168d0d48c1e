//! The files of the check: the worktree's links to the repository, the repository's config and
//! hooks, what may lie in the writable git folders, and nested repositories.

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::Snapshot;
use crate::engine::EngineError;
use crate::git;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileState {
    digest: String,
    mode: u32,
    /// The bytes, to put them back (small files only: links, config and hooks).
    content: Option<Vec<u8>>,
}

impl FileState {
    /// The regular file at `path` (a symlink is not followed: it reads as missing).
    pub fn read(path: &Path, keep: bool) -> Option<FileState> {
        let meta = std::fs::symlink_metadata(path).ok()?;
        if !meta.is_file() {
            return None;
        }
        let bytes = std::fs::read(path).ok()?;
        let digest = crate::digest::sha256_hex([bytes.as_slice()]);
        Some(FileState { digest, mode: meta.permissions().mode(), content: keep.then_some(bytes) })
    }

    fn same_as(&self, other: &FileState) -> bool {
        self.digest == other.digest && self.mode == other.mode
    }
}

/// The files that tie the worktree to the repository: its `.git` file, and in its admin folder
/// `gitdir`, `commondir` and `config.worktree` (git reads that one when the repository has
/// `extensions.worktreeConfig`; it must not appear).
pub fn link_files(worktree: &Path, admin: Option<&Path>) -> Vec<PathBuf> {
    let mut files = vec![worktree.join(".git")];
    if let Some(admin) = admin {
        files.extend(["gitdir", "commondir", "config.worktree"].map(|name| admin.join(name)));
    }
    files
}

pub fn check_links(snapshot: &Snapshot, worktree: &Path, branch: &str) -> Result<Vec<String>, EngineError> {
    let mut changes = Vec::new();
    if let Some(admin) = &snapshot.admin {
        // A task may leave its own admin folder unreadable; wt owns it and opens it again.
        if std::fs::metadata(admin).is_ok_and(|meta| meta.permissions().mode() & 0o700 != 0o700) {
            set_mode(admin, 0o755)?;
            changes.push(format!("locked {} (opened again)", admin.display()));
        }
    }
    for (path, before) in &snapshot.links {
        if put_back(path, before.as_ref())? {
            changes.push(format!("rewrote {} (put back)", path.display()));
        }
    }
    if let Some(admin) = &snapshot.admin {
        let head = admin.join("HEAD");
        let expected = format!("ref: refs/heads/{branch}\n");
        // A rebase of the branch itself detaches HEAD until it ends (one `wt rebase` left on a
        // conflict for a team agent to resolve).
        let rebasing = ["rebase-merge", "rebase-apply"].iter().any(|state| {
            let name = std::fs::read_to_string(admin.join(state).join("head-name")).unwrap_or_default();
            name.trim() == format!("refs/heads/{branch}")
        });
        if !rebasing && std::fs::read_to_string(&head).ok().as_deref() != Some(expected.as_str()) {
            replace_with(&head, expected.as_bytes())?;
            changes.push(format!(
                "switched {} away from its branch {branch} (HEAD put back; the files are as the agent left them)",
                worktree.display()
            ));
        }
    }
    Ok(changes)
}

/// The repository's config and hooks.
pub fn shared_files(common: &Path) -> Vec<PathBuf> {
    let mut files = vec![common.join("config")];
    if let Ok(entries) = std::fs::read_dir(common.join("hooks")) {
        let mut hooks: Vec<PathBuf> = entries.flatten().map(|entry| entry.path()).collect();
        hooks.sort();
        files.extend(hooks);
    }
    files
}

pub fn check_shared(snapshot: &Snapshot) -> Result<Vec<String>, EngineError> {
    let mut changes = Vec::new();
    for (path, before) in &snapshot.shared {
        if put_back(path, Some(before))? {
            changes.push(format!("changed {} (put back)", path.display()));
        }
    }
    for path in shared_files(&snapshot.common) {
        if !snapshot.shared.contains_key(&path) {
            remove_any(&path)?;
            changes.push(format!("added {} (removed)", path.display()));
        }
    }
    Ok(changes)
}

/// The modes alone of the repository's config and hooks, put back where they changed: a
/// command's check (`wt sandbox --check`) spans others' legitimate writes to their content, but
/// no one else changes their modes (git keeps a config's mode when it rewrites it), and Landlock
/// does not cover `chmod` — one would make a hook the user left off run outside the sandbox.
pub fn check_shared_modes(snapshot: &Snapshot) -> Result<Vec<String>, EngineError> {
    let mut changes = Vec::new();
    for (path, before) in &snapshot.shared {
        let Ok(meta) = std::fs::symlink_metadata(path) else { continue };
        if meta.is_file() && meta.permissions().mode() != before.mode {
            set_mode(path, before.mode)?;
            changes.push(format!(
                "changed the mode of {} to {:o} (put back to {:o})",
                path.display(),
                meta.permissions().mode() & 0o7777,
                before.mode & 0o7777
            ));
        }
    }
    Ok(changes)
}

/// Removes every symlink, fifo, socket and device below `folders`: git writes through them (a
/// commit message file, a reflog, a lock) and wt's git runs outside the sandbox.
pub fn remove_special_files(folders: &[PathBuf]) -> Result<Vec<String>, EngineError> {
    let mut changes = Vec::new();
    let mut pending: Vec<PathBuf> = folders.to_vec();
    while let Some(folder) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&folder) else { continue };
        for entry in entries.flatten() {
            let path = entry.path();
            let Ok(kind) = entry.file_type() else { continue };
            if kind.is_dir() {
                pending.push(path);
            } else if kind.is_symlink()
                || kind.is_fifo()
                || kind.is_socket()
                || kind.is_block_device()
                || kind.is_char_device()
            {
                remove_any(&path)?;
                changes.push(format!("left {} as a {} (removed)", path.display(), describe(kind)));
            }
        }
    }
    Ok(changes)
}

fn describe(kind: std::fs::FileType) -> &'static str {
    if kind.is_symlink() {
        "symlink"
    } else if kind.is_fifo() {
        "fifo"
    } else if kind.is_socket() {
        "socket"
    } else {
        "device"
    }
}

/// Renames the `.git` of every repository nested in the worktree to `.git-disabled-by-wt`: git
/// looking at the worktree would run that repository's configured programs (fsmonitor, clean
/// filters) outside the sandbox. Its files stay.
pub fn disable_nested_repositories(worktree: &Path) -> Result<Vec<String>, EngineError> {
    let mut changes = Vec::new();
    for nested in git::nested_repositories(worktree)? {
        let (from, to) = (nested.join(".git"), nested.join(".git-disabled-by-wt"));
        std::fs::rename(&from, &to).map_err(|source| io(&from, source))?;
        changes.push(format!(
            "made a git repository inside the worktree at {} (its .git is now {}; keep repositories a task \
             needs in $TMPDIR)",
            nested.display(),
            to.display()
        ));
    }
    Ok(changes)
}

/// Puts the file at `path` back to `before` (None: it did not exist) when it differs in kind,
/// content or mode; returns whether it did.
fn put_back(path: &Path, before: Option<&FileState>) -> Result<bool, EngineError> {
    let exists = std::fs::symlink_metadata(path).is_ok();
    let same = match (FileState::read(path, false), before) {
        (Some(now), Some(before)) => now.same_as(before),
        (None, None) => !exists,
        _ => false,
    };
    if same {
        return Ok(false);
    }
    match before {
        Some(before) => {
            replace_with(path, before.content.as_deref().unwrap_or_default())?;
            set_mode(path, before.mode)?;
        }
        None => remove_any(path)?,
    }
    Ok(true)
}

/// Writes `bytes` at `path`, whatever is there now (a folder or symlink in its place goes).
fn replace_with(path: &Path, bytes: &[u8]) -> Result<(), EngineError> {
    if std::fs::symlink_metadata(path).is_ok_and(|meta| !meta.is_file()) {
        remove_any(path)?;
    }
    std::fs::write(path, bytes).map_err(|source| io(path, source))
}

fn set_mode(path: &Path, mode: u32) -> Result<(), EngineError> {
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(|source| io(path, source))
}

/// Removes a file, symlink or folder at `path`; nothing there is fine.
fn remove_any(path: &Path) -> Result<(), EngineError> {
    let result = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.is_dir() => std::fs::remove_dir_all(path),
        Ok(_) => std::fs::remove_file(path),
        Err(_) => Ok(()),
    };
    result.map_err(|source| io(path, source))
}

fn io(path: &Path, source: std::io::Error) -> EngineError {
    EngineError::Io { context: format!("putting back {}", path.display()), source }
}
