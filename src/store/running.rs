//! Whether a task has commands running under `wt sandbox`. Each `wt sandbox` holds a shared lock
//! on a file beside the task's object folder (where the sandbox cannot write) from before its
//! command starts until the command and everything it started have ended. Claude Code's Write
//! and Edit run outside any sandbox: while such a command runs, it could swap a folder of the
//! worktree for a link out of it between the guard's check and the write, so the guard refuses
//! them meanwhile.

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

use super::LockError;

/// Held while a contained command runs; released when dropped or when its holder dies.
#[derive(Debug)]
pub struct CommandRunning {
    _file: File,
}

impl CommandRunning {
    /// Marks a command of the task whose object folder is `objects` as running.
    pub fn hold(objects: &Path) -> Result<CommandRunning, LockError> {
        let path = marker(objects);
        let io = |source| LockError::Io { path: path.clone(), source };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let file =
            OpenOptions::new().read(true).write(true).create(true).truncate(false).open(&path).map_err(io)?;
        file.lock_shared().map_err(io)?;
        Ok(CommandRunning { _file: file })
    }
}

/// Whether some command of the task whose object folder is `objects` runs now. A marker that
/// cannot be read counts as running: the answer decides whether a write may go ahead.
pub fn commands_running(objects: &Path) -> bool {
    let path = marker(objects);
    match OpenOptions::new().read(true).open(&path) {
        Ok(file) => !matches!(file.try_lock(), Ok(())),
        Err(err) => err.kind() != std::io::ErrorKind::NotFound,
    }
}

/// `<objects>.running`, beside the object folder.
fn marker(objects: &Path) -> PathBuf {
    let mut name = objects.file_name().unwrap_or_default().to_owned();
    name.push(".running");
    objects.with_file_name(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_held_marker_is_seen_until_it_is_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let objects = dir.path().join("task-1-1");
        assert!(!commands_running(&objects), "nothing ran yet");
        let first = CommandRunning::hold(&objects).unwrap();
        let second = CommandRunning::hold(&objects).unwrap();
        assert!(commands_running(&objects));
        drop(first);
        assert!(commands_running(&objects), "one command still runs");
        drop(second);
        assert!(!commands_running(&objects));
        assert!(dir.path().join("task-1-1.running").exists());
    }
}
