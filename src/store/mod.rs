//! Run state in `<git-common-dir>/spectacular/`: shared by every worktree of the repository and
//! out of agents' reach. Holds the run manifests, event logs, prompts, agent logs, the locks and
//! the record of the pool of recycled worktrees.

mod atomic;
mod events;
mod layout;
mod lock;
mod manifest;
mod pool;
mod running;
mod status;

pub use atomic::write_atomic;
pub use events::EventLog;
pub use layout::StateLayout;
pub use lock::{FileLock, LockError};
pub use manifest::{
    Containment, FORMAT as MANIFEST_FORMAT, ManifestError, Overrides, PhaseRecord, PhaseState, RunManifest,
    RunState, TaskRecord, TaskState,
};
pub use pool::{PoolRecord, PoolRecordError, PoolState, PooledWorktree};
pub use running::{CommandRunning, commands_running};
pub use status::LiveState;

/// A file in this user's cache folder (`$XDG_CACHE_HOME/spectacular`, else
/// `~/.cache/spectacular`): things worth remembering across repositories, safe to lose.
pub fn user_cache_file(name: &str) -> Option<std::path::PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|dir| !dir.is_empty())
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME")
                .filter(|h| !h.is_empty())
                .map(|h| std::path::Path::new(&h).join(".cache"))
        })?;
    Some(base.join("spectacular").join(name))
}

/// Seconds since the Unix epoch, for records.
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
