//! Leases of the plugin's worker slots: `<state>/slots/wt-worker-<k>.json` names the run and task that
//! `wt step` handed slot k to, and whether the subagent dispatched on it is still out. A lease
//! counts only while the run's manifest agrees (the task is dispatched and holds that slot), so a
//! lease left behind by a crash or a finished task is free again without any sweep.
//!
//! A lease is out from its hand-out until the subagents started on it have all returned
//! (Claude Code's SubagentStart and SubagentStop, by `agent_id`), or until it is released by hand
//! or for silence. A return is only taken from a subagent that started on this very lease, so a
//! late return of an earlier subagent of the slot does not end a later hand-out. The file's
//! modification time is the worker's last sign of life: its hand-out, start, return, and each
//! call the guard sees (`touch`, which writes nothing, so the guard stays fast and needs no lock).
//!
//! Every write is atomic and made under `slots.lock`, a lock of its own that is only ever held for
//! one read-modify-write (never around git or an agent), so the hooks that write a lease never
//! wait for a `wt step` of another run. `wt step` takes it inside the repository lock.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};

use super::workers::{WORKER_SLOTS, worker_name};
use crate::plan::TaskId;
use crate::store::{
    Containment, FileLock, LockError, RunManifest, StateLayout, TaskRecord, TaskState, now, write_atomic,
};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Lease {
    pub run_id: String,
    pub phase: usize,
    pub task: usize,
    /// Which hand-out of the task this is (the task's dispatch count then); 0 in leases written
    /// before wt knew whether its worker is out.
    #[serde(default)]
    pub dispatch: u32,
    /// When `wt step` handed it out (Unix seconds).
    #[serde(default)]
    pub dispatched_at: u64,
    /// When the first subagent started on it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<u64>,
    /// The `agent_id`s of subagents started on this lease that have not returned.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub agents: Vec<String>,
    /// How and when the worker came back; None while it is out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub returned: Option<Return>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Return {
    pub at: u64,
    pub how: ReturnedBy,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReturnedBy {
    /// Its subagents returned (SubagentStop).
    SubagentStop,
    /// `wt step --release`: someone said it will not return.
    Released,
    /// `wt step` found no sign of it for too long.
    Silent,
}

impl Lease {
    /// A fresh hand-out of `task` of `run_id`, out from now.
    pub fn hand_out(run_id: &str, task: TaskId, dispatch: u32) -> Lease {
        Lease {
            run_id: run_id.to_owned(),
            phase: task.phase,
            task: task.task,
            dispatch,
            dispatched_at: now(),
            started_at: None,
            agents: Vec::new(),
            returned: None,
        }
    }

    pub fn task_id(&self) -> TaskId {
        TaskId { phase: self.phase, task: self.task }
    }

    /// Whether this lease is for `task` of `run_id` (whichever hand-out).
    pub fn is_for(&self, run_id: &str, task: TaskId) -> bool {
        self.run_id == run_id && self.task_id() == task
    }

    /// Whether its worker is still out.
    pub fn is_out(&self) -> bool {
        self.returned.is_none()
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

/// The lease of `slot` when `manifest` (its run's) confirms it.
pub fn confirmed_in(layout: &StateLayout, manifest: &RunManifest, slot: usize) -> Option<Holder> {
    let lease = read(layout, slot)?;
    (lease.run_id == manifest.run_id).then(|| confirmed(manifest, slot, lease))?
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

/// The worker's last sign of life: the lease file's modification time.
pub fn last_seen(layout: &StateLayout, slot: usize) -> Option<u64> {
    let modified = std::fs::metadata(lease_file(layout, slot)).ok()?.modified().ok()?;
    modified.duration_since(UNIX_EPOCH).ok().map(|d| d.as_secs())
}

/// Records a sign of life of the worker holding `slot` (the guard saw one of its calls): sets
/// the lease file's modification time and nothing else. No lock: a concurrent rewrite of the
/// lease is a sign of life too, and a lease that is gone stays gone (nothing is created).
pub fn touch(layout: &StateLayout, slot: usize) -> std::io::Result<()> {
    let file = std::fs::OpenOptions::new().write(true).open(lease_file(layout, slot))?;
    file.set_modified(SystemTime::now())
}

/// Holds `slots.lock` for one read-modify-write of leases.
fn lock(layout: &StateLayout) -> std::io::Result<FileLock> {
    FileLock::acquire(&layout.slots_lock()).map_err(|err| match err {
        LockError::Io { source, .. } => source,
        held => std::io::Error::other(held.to_string()),
    })
}

/// Records that `slot` is leased to `lease` (the caller checked it is free, under the repo lock).
pub fn lease(layout: &StateLayout, slot: usize, lease: &Lease) -> std::io::Result<()> {
    let _lock = lock(layout)?;
    write(layout, slot, lease)
}

fn write(layout: &StateLayout, slot: usize, lease: &Lease) -> std::io::Result<()> {
    let bytes = serde_json::to_vec(lease).map_err(std::io::Error::other)?;
    write_atomic(&lease_file(layout, slot), &bytes)
}

/// Changes the lease of `slot`, under the lock, with `change` (which says whether it changed
/// anything, and gets None when the slot has no lease); returns the lease as written.
pub fn update(
    layout: &StateLayout,
    slot: usize,
    change: impl FnOnce(&mut Lease) -> bool,
) -> std::io::Result<Option<Lease>> {
    let _lock = lock(layout)?;
    let Some(mut lease) = read(layout, slot) else { return Ok(None) };
    if change(&mut lease) {
        write(layout, slot, &lease)?;
    }
    Ok(Some(lease))
}

/// Removes the lease of `slot` if it still names `run_id`'s task `task`.
pub fn release(layout: &StateLayout, slot: usize, run_id: &str, task: TaskId) -> std::io::Result<()> {
    let _lock = lock(layout)?;
    match read(layout, slot) {
        Some(current) if current.is_for(run_id, task) => remove(&lease_file(layout, slot)),
        _ => Ok(()),
    }
}

/// Removes every lease naming `run_id`; returns the lease files removed.
pub fn release_run(layout: &StateLayout, run_id: &str) -> std::io::Result<Vec<PathBuf>> {
    let _lock = lock(layout)?;
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
