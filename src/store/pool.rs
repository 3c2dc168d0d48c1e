//! The record of a repository's pool of recycled worktrees (`<common>/spectacular/pool/pool.json`):
//! which parked worktree sits in which slot (`.worktrees/.pool/<slot>`), and which one a process is
//! moving in or out. Read and written only under the repo lock; an entry that is not `parked`
//! when the lock is taken was left by a process that died mid-move (the move and both writes
//! happen in one hold of the lock), and is finished by whoever looks next.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::write_atomic;

/// The on-disk format this build reads and writes. A record of another format is left alone.
pub const POOL_FORMAT: u32 = 1;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PoolRecord {
    pub format: u32,
    #[serde(default)]
    pub worktrees: Vec<PooledWorktree>,
}

impl Default for PoolRecord {
    fn default() -> Self {
        PoolRecord { format: POOL_FORMAT, worktrees: Vec::new() }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PooledWorktree {
    /// Its folder's name under `.worktrees/.pool/`.
    pub slot: String,
    /// Its admin folder's name under `<common>/worktrees/`: git's name for the worktree, which a
    /// move does not change, so it finds the worktree wherever a killed move left it.
    pub admin: String,
    /// The folder name it had before it was parked (`<runId>-task-P-T`), for people.
    pub origin: String,
    /// Seconds since the epoch when it was parked (or the move began).
    pub at: u64,
    #[serde(flatten)]
    pub state: PoolState,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "state", rename_all = "lowercase")]
pub enum PoolState {
    /// Clean, detached and in its slot: ready to be taken.
    Parked,
    /// Being cleaned and moved in from `from`.
    Parking { from: PathBuf },
    /// Being moved out to `to` and checked out there.
    Taking { to: PathBuf },
}

#[derive(Debug, thiserror::Error)]
pub enum PoolRecordError {
    #[error("cannot read {path}: {detail}")]
    Unreadable { path: PathBuf, detail: String },
    #[error("{path} has format {found}; this wt knows {POOL_FORMAT} and leaves the pool alone")]
    OtherFormat { path: PathBuf, found: u32 },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

impl PoolRecord {
    /// The record at `path`; an empty one when there is none.
    pub fn load(path: &Path) -> Result<PoolRecord, PoolRecordError> {
        let bytes = match std::fs::read(path) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(PoolRecord::default()),
            Err(err) => {
                return Err(PoolRecordError::Unreadable { path: path.to_owned(), detail: err.to_string() });
            }
        };
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|err| PoolRecordError::Unreadable { path: path.to_owned(), detail: err.to_string() })?;
        let found = value["format"].as_u64().unwrap_or(0) as u32;
        if found != POOL_FORMAT {
            return Err(PoolRecordError::OtherFormat { path: path.to_owned(), found });
        }
        serde_json::from_value(value)
            .map_err(|err| PoolRecordError::Unreadable { path: path.to_owned(), detail: err.to_string() })
    }

    pub fn save(&self, path: &Path) -> Result<(), PoolRecordError> {
        let write = |source| PoolRecordError::Write { path: path.to_owned(), source };
        let bytes = serde_json::to_vec_pretty(self).map_err(|err| write(std::io::Error::other(err)))?;
        write_atomic(path, &bytes).map_err(write)
    }

    pub fn parked(&self) -> impl Iterator<Item = &PooledWorktree> {
        self.worktrees.iter().filter(|entry| entry.state == PoolState::Parked)
    }

    /// The lowest slot number no entry holds and no folder in `dir` occupies.
    pub fn free_slot(&self, dir: &Path) -> String {
        (1u32..)
            .map(|n| n.to_string())
            .find(|slot| {
                !self.worktrees.iter().any(|entry| &entry.slot == slot)
                    && std::fs::symlink_metadata(dir.join(slot)).is_err()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_reads_back_and_another_format_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("pool.json");
        assert_eq!(PoolRecord::load(&path).unwrap(), PoolRecord::default());
        let mut record = PoolRecord::default();
        record.worktrees.push(PooledWorktree {
            slot: "1".into(),
            admin: "c0ffee-task-2-1".into(),
            origin: "c0ffee-task-2-1".into(),
            at: 7,
            state: PoolState::Taking { to: "/r/.worktrees/beef00-task-1-1".into() },
        });
        record.save(&path).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.contains("\"state\": \"taking\"") && text.contains("\"to\""), "{text}");
        assert_eq!(PoolRecord::load(&path).unwrap(), record);
        assert_eq!(record.free_slot(dir.path()), "2");
        std::fs::write(&path, r#"{"format": 9, "worktrees": []}"#).unwrap();
        assert!(matches!(PoolRecord::load(&path), Err(PoolRecordError::OtherFormat { found: 9, .. })));
    }
}
