//! Runs and worktrees left behind: interrupted runs and the space their worktrees take.

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::engine::WORKTREES_DIR;
use crate::git::Repo;
use crate::store::{LiveState, RunManifest, StateLayout};

#[derive(Debug, Clone, Serialize)]
pub struct LeftoverWorktree {
    pub path: PathBuf,
    pub run_id: Option<String>,
    /// The state of its run; None (`"unknown"`) when no run state names it.
    #[serde(serialize_with = "state_or_unknown")]
    pub run_status: Option<LiveState>,
    pub bytes: u64,
    pub fix: String,
}

/// Every folder under `.worktrees/` but the pool, with its run's state and its size on disk.
pub fn leftover_worktrees(repo: &Repo) -> Vec<LeftoverWorktree> {
    let layout = StateLayout::new(repo.common_dir());
    let Ok(entries) = std::fs::read_dir(repo.root().join(WORKTREES_DIR)) else { return Vec::new() };
    let mut out: Vec<LeftoverWorktree> = entries
        .flatten()
        // The pool of recycled worktrees is reported on its own (`doctor::pool_check`).
        .filter(|entry| entry.file_name() != crate::engine::pool::POOL_DIR)
        .map(|entry| {
            let name = entry.file_name().to_string_lossy().into_owned();
            let run_id =
                name.split('-').next().filter(|id| crate::plan::run_id::is_valid(id)).map(str::to_owned);
            let run_status = run_id.as_deref().and_then(|id| live_state(&layout, id));
            let fix = match (&run_id, run_status) {
                (Some(id), Some(LiveState::Interrupted | LiveState::Failed)) => {
                    format!("wt resume {id}, or wt cleanup {id}")
                }
                (Some(id), Some(LiveState::Running)) => format!("wait for run {id}"),
                (Some(id), Some(LiveState::Dispatched | LiveState::Done) | None) => {
                    format!("wt cleanup {id}")
                }
                (None, _) => {
                    format!("not a wt run; remove {} yourself if it is not needed", entry.path().display())
                }
            };
            LeftoverWorktree { bytes: size(&entry.path()), path: entry.path(), run_id, run_status, fix }
        })
        .collect();
    out.sort_by(|a, b| a.path.cmp(&b.path));
    out
}

impl LeftoverWorktree {
    pub fn status_name(&self) -> &'static str {
        self.run_status.map_or("unknown", LiveState::as_str)
    }
}

fn state_or_unknown<S: serde::Serializer>(
    state: &Option<LiveState>,
    serializer: S,
) -> Result<S::Ok, S::Error> {
    serializer.serialize_str(state.map_or("unknown", LiveState::as_str))
}

fn live_state(layout: &StateLayout, run_id: &str) -> Option<LiveState> {
    let manifest = RunManifest::load(&layout.manifest(run_id)).ok()?;
    Some(LiveState::of(layout, &manifest))
}

/// Bytes of the files under `path` (symlinks not followed).
fn size(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 0 };
    if !meta.is_dir() {
        return meta.len();
    }
    std::fs::read_dir(path).map_or(0, |entries| entries.flatten().map(|e| size(&e.path())).sum())
}

/// Runs whose process died before they finished.
pub fn interrupted_runs(repo: &Repo) -> Vec<String> {
    StateLayout::new(repo.common_dir()).run_ids_in(LiveState::Interrupted)
}
