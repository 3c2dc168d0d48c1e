//! flock-based locks: the kernel releases them when the holder dies, so a crashed run never
//! leaves a stale lock behind. Lock files are opened close-on-exec, so agents never inherit them.

use std::fs::{File, OpenOptions, TryLockError};
use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum LockError {
    #[error("{path} is held by process {holder}")]
    Held { path: PathBuf, holder: String },
    #[error("locking {path}: {source}")]
    Io { path: PathBuf, source: std::io::Error },
}

/// An exclusive lock held until dropped. The file holds the holder's pid, for messages.
#[derive(Debug)]
pub struct FileLock {
    file: File,
}

impl FileLock {
    /// Waits for the lock.
    pub fn acquire(path: &Path) -> Result<FileLock, LockError> {
        let file = open(path)?;
        file.lock().map_err(|source| LockError::Io { path: path.to_owned(), source })?;
        Self::holding(path, file)
    }

    /// Takes the lock if free; otherwise says who holds it.
    pub fn try_acquire(path: &Path) -> Result<FileLock, LockError> {
        let mut file = open(path)?;
        match file.try_lock() {
            Ok(()) => Self::holding(path, file),
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = file.read_to_string(&mut holder);
                let holder = holder.trim().to_owned();
                let holder = if holder.is_empty() { "unknown".to_owned() } else { holder };
                Err(LockError::Held { path: path.to_owned(), holder })
            }
            Err(TryLockError::Error(source)) => Err(LockError::Io { path: path.to_owned(), source }),
        }
    }

    /// As [`FileLock::try_acquire`], through a read-only descriptor of an existing file (flock
    /// needs no write access): for a holder that may not write there, such as a command inside
    /// `wt sandbox`. The holder's pid is not recorded.
    pub fn try_acquire_read_only(path: &Path) -> Result<FileLock, LockError> {
        let io = |source| LockError::Io { path: path.to_owned(), source };
        let file = OpenOptions::new().read(true).open(path).map_err(io)?;
        match file.try_lock() {
            Ok(()) => Ok(FileLock { file }),
            Err(TryLockError::WouldBlock) => {
                let mut holder = String::new();
                let _ = (&file).read_to_string(&mut holder);
                let holder = Some(holder.trim().to_owned()).filter(|h| !h.is_empty());
                Err(LockError::Held {
                    path: path.to_owned(),
                    holder: holder.unwrap_or_else(|| "unknown".into()),
                })
            }
            Err(TryLockError::Error(source)) => Err(io(source)),
        }
    }

    /// Whether some process holds the lock at `path` now.
    pub fn is_held(path: &Path) -> bool {
        let Ok(file) = OpenOptions::new().read(true).write(true).open(path) else {
            return false;
        };
        matches!(file.try_lock(), Err(TryLockError::WouldBlock))
    }

    fn holding(path: &Path, mut file: File) -> Result<FileLock, LockError> {
        let io = |source| LockError::Io { path: path.to_owned(), source };
        file.set_len(0).map_err(io)?;
        file.rewind().map_err(io)?;
        write!(file, "{}", std::process::id()).map_err(io)?;
        Ok(FileLock { file })
    }
}

impl Drop for FileLock {
    fn drop(&mut self) {
        // Closing the file releases the lock anyway; unlocking first makes it prompt.
        let _ = self.file.unlock();
    }
}

fn open(path: &Path) -> Result<File, LockError> {
    let io = |source| LockError::Io { path: path.to_owned(), source };
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    OpenOptions::new().read(true).write(true).create(true).truncate(false).open(path).map_err(io)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_holder_is_told_who_holds_it() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("run.lock");
        let held = FileLock::try_acquire(&path).unwrap();
        assert!(FileLock::is_held(&path));
        match FileLock::try_acquire(&path) {
            Err(LockError::Held { holder, .. }) => assert_eq!(holder, std::process::id().to_string()),
            other => panic!("expected Held, got {other:?}"),
        }
        drop(held);
        assert!(!FileLock::is_held(&path));
        FileLock::try_acquire(&path).unwrap();
    }

    #[test]
    fn a_read_only_holder_excludes_the_others_and_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("poll.lock");
        assert!(FileLock::try_acquire_read_only(&path).is_err(), "it does not create the file");
        std::fs::write(&path, "").unwrap();
        let held = FileLock::try_acquire_read_only(&path).unwrap();
        assert!(FileLock::is_held(&path));
        assert!(matches!(FileLock::try_acquire(&path), Err(LockError::Held { .. })));
        assert!(matches!(FileLock::try_acquire_read_only(&path), Err(LockError::Held { .. })));
        drop(held);
        assert!(!FileLock::is_held(&path));
    }
}
