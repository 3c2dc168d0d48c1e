//! The pool as `wt status` and `wt doctor` show it: each parked worktree with where it came from
//! and its disk use, and what a killed process left under way. Read without the repo lock and
//! without changing anything.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{pool_dir, set_aside_dir};
use crate::git::Repo;
use crate::plan::WorktreeConfig;
use crate::store::{PoolRecord, PoolState, StateLayout};

#[derive(Debug, Clone, Serialize)]
pub struct PoolView {
    /// `.worktrees/.pool`.
    pub dir: PathBuf,
    /// Whether this repository's runs recycle their worktrees unless a plan says otherwise
    /// (`.spectacular/worktree.toml`).
    pub recycle: bool,
    /// The project's `pool_size`; None: each run's `max_parallel`.
    pub pool_size: Option<usize>,
    pub worktrees: Vec<PooledView>,
    /// Bytes on disk of every parked worktree.
    pub bytes: u64,
    /// What is wrong with the pool, if anything: a move a killed process left under way, a
    /// record wt cannot read, folders the record does not account for. The next run, or `wt
    /// cleanup --pool`, finishes or removes them.
    pub problems: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PooledView {
    pub path: PathBuf,
    /// The worktree's name before it was parked (`<runId>-task-P-T`).
    pub origin: String,
    /// Seconds since the epoch.
    pub parked_at: u64,
    pub bytes: u64,
}

pub fn view(repo: &Repo, layout: &StateLayout) -> PoolView {
    let dir = pool_dir(repo);
    let (config, mut problems) = match WorktreeConfig::load_toml(&WorktreeConfig::project_path(repo.root())) {
        Ok(config) => (config.unwrap_or_default(), Vec::new()),
        Err(err) => (WorktreeConfig::default(), vec![err.to_string()]),
    };
    let aside = set_aside_dir(repo);
    let set_aside = std::fs::read_dir(&aside).into_iter().flatten().count();
    if set_aside > 0 {
        problems.push(format!(
            "{set_aside} worktree(s) wt could not remove were set aside in {}: remove them by hand (a file \
             there may be immutable: lsattr -R, chattr -i)",
            aside.display()
        ));
    }
    let record = match PoolRecord::load(&layout.pool_record()) {
        Ok(record) => record,
        Err(err) => {
            problems.push(err.to_string());
            PoolRecord::default()
        }
    };
    let mut worktrees = Vec::new();
    for entry in &record.worktrees {
        let path = dir.join(&entry.slot);
        match &entry.state {
            PoolState::Parked => worktrees.push(PooledView {
                bytes: disk_use(&path),
                path,
                origin: entry.origin.clone(),
                parked_at: entry.at,
            }),
            PoolState::Parking { from } => problems.push(format!(
                "{} was being moved into the pool when its process died; it will be removed",
                from.display()
            )),
            PoolState::Taking { to } => problems.push(format!(
                "{} was being taken from the pool to {} when its process died; it will be removed",
                path.display(),
                to.display()
            )),
        }
    }
    let recorded = |path: &Path| record.worktrees.iter().any(|entry| dir.join(&entry.slot) == path);
    for folder in std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|entry| entry.path()) {
        if !recorded(&folder) {
            problems.push(format!("{} is not in the pool's record; it will be removed", folder.display()));
        }
    }
    let bytes = worktrees.iter().map(|w| w.bytes).sum();
    PoolView { dir, recycle: config.recycles(), pool_size: config.pool_size, worktrees, bytes, problems }
}

/// Bytes of disk the files under `path` take (symlinks not followed, hard links counted each time).
pub fn disk_use(path: &Path) -> u64 {
    let Ok(meta) = std::fs::symlink_metadata(path) else { return 0 };
    let own = meta.blocks() * 512;
    if !meta.is_dir() {
        return own;
    }
    let entries = std::fs::read_dir(path).into_iter().flatten().flatten();
    own + entries.map(|entry| disk_use(&entry.path())).sum::<u64>()
}
