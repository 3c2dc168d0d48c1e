//! Leases of the plugin's worker slots: `<state>/slots/wt-worker-<k>.json` names the run and task that
//! `wt step` handed slot k to. A lease counts only while the run's manifest agrees (the task is
//! dispatched and holds that slot), so a lease left behind by a crash or a finished task is free
//! again without any sweep. Slots are taken under the repository lock.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::workers::{WORKER_SLOTS, worker_name};
use crate::plan::TaskId;
use crate::store::{Containment, RunManifest, StateLayout, TaskRecord, TaskState, write_atomic};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub run_id: String,
    pub phase: usize,
    pub task: usize,
}

impl Lease {
    pub fn task_id(&self) -> TaskId {
        TaskId { phase: self.phase, task: self.task }
    }
}

/// A slot's lease and the task record it stands for, when the lease is live.
pub struct Holder {
    pub lease: Lease,
    pub task: TaskRecord,
    /// How the run contains its agents.
    pub containment: Option<Containment>,
}

/// `slots/wt-worker-<slot>.json`.
fn lease_file(layout: &StateLayout, slot: usize) -> PathBuf {
    layout.slots_dir().join(format!("{}.json", worker_name(slot)))
}

fn read(layout: &StateLayout, slot: usize) -> Option<Lease> {
    serde_json::from_slice(&std::fs::read(lease_file(layout, slot)).ok()?).ok()
}

/// The task that holds `slot`, or None when the slot is free.
pub fn holder(layout: &StateLayout, slot: usize) -> Option<Holder> {
    let lease = read(layout, slot)?;
    let manifest = RunManifest::load(&layout.manifest(&lease.run_id)).ok()?;
    confirmed(&manifest, slot, lease)
}

/// Every slot with its holder (None: free), reading each run's manifest once.
pub fn occupancy(layout: &StateLayout) -> Vec<(usize, Option<Holder>)> {
    let mut manifests: HashMap<String, Option<RunManifest>> = HashMap::new();
    (1..=WORKER_SLOTS)
        .map(|slot| {
            let holder = read(layout, slot).and_then(|lease| {
                let manifest = manifests
                    .entry(lease.run_id.clone())
                    .or_insert_with(|| RunManifest::load(&layout.manifest(&lease.run_id)).ok());
                confirmed(manifest.as_ref()?, slot, lease)
            });
            (slot, holder)
        })
        .collect()
}

/// The lease, when the run's manifest agrees: its task is out and holds `slot`.
fn confirmed(manifest: &RunManifest, slot: usize, lease: Lease) -> Option<Holder> {
    let task = manifest.task(lease.task_id())?;
    (task.state == TaskState::Dispatched && task.slot == Some(slot)).then(|| Holder {
        task: task.clone(),
        lease,
        containment: manifest.containment,
    })
}

/// Records that `slot` is leased to `lease` (the caller checked it is free, under the repo lock).
pub fn lease(layout: &StateLayout, slot: usize, lease: &Lease) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(lease).map_err(std::io::Error::other)?;
    write_atomic(&lease_file(layout, slot), &bytes)
}

/// Removes the lease of `slot` if it still names `run_id`'s task `task`.
pub fn release(layout: &StateLayout, slot: usize, run_id: &str, task: TaskId) -> std::io::Result<()> {
    match read(layout, slot) {
        Some(current) if current.run_id == run_id && current.task_id() == task => {
            remove(&lease_file(layout, slot))
        }
        _ => Ok(()),
    }
}

/// Removes every lease naming `run_id`; returns the lease files removed.
pub fn release_run(layout: &StateLayout, run_id: &str) -> std::io::Result<Vec<PathBuf>> {
    let mut removed = Vec::new();
    for slot in 1..=WORKER_SLOTS {
        if read(layout, slot).is_some_and(|lease| lease.run_id == run_id) {
            remove(&lease_file(layout, slot))?;
            removed.push(lease_file(layout, slot));
        }
    }
    Ok(removed)
}

fn remove(path: &Path) -> std::io::Result<()> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(err),
        _ => Ok(()),
    }
}
