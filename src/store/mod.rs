//! Run state in `<git-common-dir>/spectacular/`: shared by every worktree of the repository and
//! out of agents' reach. Holds the run manifests, event logs, prompts, agent logs and the locks.

mod atomic;
mod events;
mod layout;
mod lock;
mod manifest;
pub mod slots;
mod status;

pub use atomic::write_atomic;
pub use events::EventLog;
pub use layout::StateLayout;
pub use lock::{FileLock, LockError};
pub use manifest::{
    FORMAT as MANIFEST_FORMAT, ManifestError, Overrides, PhaseRecord, PhaseState, RunManifest, RunState,
    TaskRecord, TaskState,
};
pub use status::LiveState;

/// Seconds since the Unix epoch, for records.
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_secs())
}
