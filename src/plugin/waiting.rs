//! Workers still out: a task `wt step` handed out is neither checked nor handed out again while
//! the subagent dispatched on its lease has not returned (see `super::leases`); `wt step` answers
//! `wait` instead, naming those workers. Nothing wedges a run for good: a worker that will not
//! return is released by hand (`wt step <run> --json --release <worker>|all`), and one not seen
//! for [`SILENT_RELEASE`] with no command of its task running is released by the next step. A
//! released task is checked as it stands, like a returned one.

use serde::Serialize;

use super::leases::{self, Holder, Return, ReturnedBy};
use super::workers::{WORKER_SLOTS, parse_worker_type, worker_type};
use crate::plan::{Strategy, TaskId};
use crate::process::own_name;
use crate::store::{RunManifest, StateLayout, commands_running, now};

/// How long a worker may go unseen (no hand-out, start, return or guarded call, and no command of
/// its task running) before `wt step` takes it as gone. Long enough for any one model turn and
/// for a command under policy-only containment (which leaves no running marker).
pub const SILENT_RELEASE: u64 = 60 * 60;

/// Which workers `wt step --release` gives up for: the run's workers that will not return.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Release {
    All,
    /// One worker slot.
    Slot(usize),
}

impl Release {
    /// `all`, or a worker as `wt step` names it (`spectacular:wt-worker-2`, `wt-worker-2`).
    pub fn parse(text: &str) -> Option<Release> {
        match text {
            "all" => Some(Release::All),
            _ => parse_worker_type(text).map(Release::Slot),
        }
    }

    fn covers(releases: &[Release], slot: usize) -> bool {
        releases.iter().any(|release| matches!(release, Release::All) || *release == Release::Slot(slot))
    }
}

/// A worker still out, as `wait` lists it.
#[derive(Debug, Clone, Serialize)]
pub struct OutWorker {
    pub subagent_type: String,
    pub task: TaskId,
    pub description: String,
    /// When `wt step` handed the task out (Unix seconds).
    pub dispatched_at: u64,
    /// Whether a subagent has started on it (SubagentStart).
    pub started: bool,
    /// Its last sign of life (Unix seconds): hand-out, start, or a call the guard saw.
    pub last_activity: u64,
    /// Whether a command of its task runs now (under `wt sandbox`).
    pub command_running: bool,
}

/// A worker given up for in this step.
#[derive(Debug, Clone, Serialize)]
pub struct ReleasedWorker {
    pub subagent_type: String,
    pub task: TaskId,
    /// `released` (by `--release`) or `silent` (not seen for too long).
    pub how: ReturnedBy,
}

/// The run's workers after this step's releases: those still out and those just released.
#[derive(Debug, Default)]
pub struct Workers {
    pub out: Vec<OutWorker>,
    pub released: Vec<ReleasedWorker>,
}

/// The workers of `manifest`'s run that are still out, after releasing those `releases` names
/// and those silent for too long. Call it holding the run's lock (no step of the run changes its
/// leases meanwhile).
pub fn settle(
    layout: &StateLayout,
    manifest: &RunManifest,
    releases: &[Release],
) -> std::io::Result<Workers> {
    let mut workers = Workers::default();
    for slot in 1..=WORKER_SLOTS {
        let Some(holder) = leases::confirmed_in(layout, manifest, slot) else { continue };
        if !holder.lease.is_out() {
            continue;
        }
        let worker = out_worker(layout, manifest, slot, &holder);
        let silent = !worker.command_running && now().saturating_sub(worker.last_activity) >= SILENT_RELEASE;
        let how = if Release::covers(releases, slot) {
            ReturnedBy::Released
        } else if silent {
            ReturnedBy::Silent
        } else {
            workers.out.push(worker);
            continue;
        };
        let given_up = leases::update(layout, slot, |lease| {
            let same = *lease == holder.lease;
            if same {
                lease.returned = Some(Return { at: now(), how });
            }
            same
        })?;
        // The lease may have changed since it was read: a subagent started (still out) or
        // returned (back, not given up for), or the run was cleaned up (gone).
        match given_up.as_ref().map(|lease| lease.returned.as_ref().map(|r| r.how)) {
            Some(None) => workers.out.push(worker),
            Some(Some(returned)) if returned == how => workers.released.push(ReleasedWorker {
                subagent_type: worker_type(slot),
                task: worker.task,
                how,
            }),
            _ => {}
        }
    }
    Ok(workers)
}

fn out_worker(layout: &StateLayout, manifest: &RunManifest, slot: usize, holder: &Holder) -> OutWorker {
    let lease = &holder.lease;
    let task = holder.task.id;
    OutWorker {
        subagent_type: worker_type(slot),
        task,
        description: format!("Task {task}: {}", holder.task.name),
        dispatched_at: lease.dispatched_at,
        started: lease.started_at.is_some(),
        last_activity: leases::last_seen(layout, slot).unwrap_or(lease.dispatched_at),
        command_running: commands_running(&layout.task_objects(&manifest.run_id, task)),
    }
}

/// The phase the workers out are in (number, name, strategy), from the manifest.
pub fn phase_of(manifest: &RunManifest, out: &[OutWorker]) -> Option<(usize, String, Strategy)> {
    let number = out.first()?.task.phase;
    let phase = manifest.phases.get(number.checked_sub(1)?)?;
    Some((phase.number, phase.name.clone(), phase.strategy))
}

/// What `wait` says: who is out since when, and what to do.
pub fn message(run_id: &str, workers: &Workers) -> String {
    let wt = own_name();
    let now = now();
    let out: Vec<String> = workers
        .out
        .iter()
        .map(|w| {
            let started = if w.started { "" } else { ", no subagent started on it yet" };
            let running = if w.command_running { ", a command of it running" } else { "" };
            format!(
                "{} (task {}, handed out {} ago, last seen {} ago{started}{running})",
                w.subagent_type,
                w.task,
                ago(now, w.dispatched_at),
                ago(now, w.last_activity)
            )
        })
        .collect();
    format!(
        "still out: {}. Nothing was handed out or checked. Wait until those subagents have returned, then \
         run `{wt} step {run_id} --json` again. A worker that will not return (its subagent has already \
         reported back to you, or the session that dispatched it is gone) is released with `{wt} step {run_id} --json \
         --release <worker>` (or `--release all`), and its task is then checked as it stands; a worker not \
         seen for {} minutes with no command running is released by the next step",
        out.join("; "),
        SILENT_RELEASE / 60
    )
}

/// `now - then` as `45s`, `12m` or `3h05m`.
fn ago(now: u64, then: u64) -> String {
    let secs = now.saturating_sub(then);
    match secs {
        0..60 => format!("{secs}s"),
        60..3600 => format!("{}m", secs / 60),
        _ => format!("{}h{:02}m", secs / 3600, secs % 3600 / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn workers_are_named_as_wt_step_lists_them() {
        assert_eq!(Release::parse("all"), Some(Release::All));
        assert_eq!(Release::parse("spectacular:wt-worker-2"), Some(Release::Slot(2)));
        assert_eq!(Release::parse("wt-worker-8"), Some(Release::Slot(8)));
        for other in ["", "2", "wt-worker-9", "general-purpose", "ALL"] {
            assert_eq!(Release::parse(other), None, "{other}");
        }
    }

    #[test]
    fn durations_read_at_a_glance() {
        assert_eq!(ago(100, 55), "45s");
        assert_eq!(ago(1000, 100), "15m");
        assert_eq!(ago(3 * 3600 + 5 * 60, 0), "3h05m");
        assert_eq!(ago(0, 10), "0s", "a clock that went back");
    }
}
