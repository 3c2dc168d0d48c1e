//! `wt step`: the run advanced as far as it can without agents, for an orchestrator (the
//! `/spectacular:execute` command) that dispatches the agents itself. It drives the engine's
//! phase loop: each call checks what the subagents of the previous call left (commit, verify),
//! the loop stacks a finished parallel phase, and the call hands out the next task(s) — or says
//! the run is done or failed.
//!
//! Each task out holds one of the plugin's worker slots (`spectacular:wt-worker-<k>`, leased in
//! [`super::leases`]): the subagent type the orchestrator dispatches, and how the guard finds the
//! worker's worktree. A task keeps its slot until it is checked; a run that fails lets go of all.
//!
//! No task is handed out twice, and none is judged before its worker is back: while a worker of
//! the run is out (dispatched, its subagent not returned), a call checks and hands out nothing and
//! answers `wait` (see [`super::waiting`], which also releases workers that will not return). Only
//! then does the run go on, before anything else touches its worktrees: a task whose subagent
//! returned with no new work is handed out again once, then fails.

use serde::Serialize;

use super::StepError;
use super::leases::{self, Lease};
use super::waiting::{self, OutWorker, Release, ReleasedWorker, Workers};
use super::workers::{WORKER_SLOTS, worker_type};
use crate::agent::render_prompt;
use crate::engine::{
    Agents, Driven, EngineError, EventSink, PhaseDriver, PhaseEnd, Run, RunRequest, Setup, StackEntry,
    TaskOutcome, drive, finish_task, has_work, lock_run, place_in_main, place_in_own_worktree, prepare,
    recorded_watch, run_owed_setup, take_back, watch,
};
use crate::git::Repo;
use crate::plan::{Phase, Strategy, Task, TaskId};
use crate::process::own_name;
use crate::store::{RunManifest, StateLayout, TaskState};

/// A task whose subagent may return with nothing done this many times before it fails.
const MAX_DISPATCHES: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    Dispatch,
    /// Workers of the run are still out: nothing was handed out or checked.
    Wait,
    Done,
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseInfo {
    pub number: usize,
    pub name: String,
    pub strategy: Strategy,
}

#[derive(Debug, Clone, Serialize)]
pub struct Dispatch {
    pub subagent_type: String,
    pub description: String,
    pub prompt: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct StepOutcome {
    pub run_id: String,
    pub status: StepStatus,
    pub phase: Option<PhaseInfo>,
    pub dispatch: Vec<Dispatch>,
    pub message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stack: Vec<StackEntry>,
    /// With `wait`: the workers still out.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waiting: Vec<OutWorker>,
    /// Workers this call gave up for (`--release`, or silent too long); their tasks were checked.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub released: Vec<ReleasedWorker>,
}

/// One `wt step`: first the run's workers out (releasing those `releases` names), then, when none
/// is out, the phase loop.
pub fn step(
    request: RunRequest,
    releases: &[Release],
    sink: &dyn EventSink,
) -> Result<StepOutcome, StepError> {
    let released = match workers_out(&request, releases)? {
        Settled::Wait(outcome) => return Ok(outcome),
        Settled::Free(released) => released,
    };
    let mut outcome = advance(request, sink)?;
    outcome.released = released;
    Ok(outcome)
}

enum Settled {
    /// Workers are out: the answer.
    Wait(StepOutcome),
    /// None is out; these were given up for.
    Free(Vec<ReleasedWorker>),
}

/// Before the run is prepared (which may mend its worktrees): the workers still out, under the
/// run's lock.
fn workers_out(request: &RunRequest, releases: &[Release]) -> Result<Settled, StepError> {
    let repo = Repo::discover(&request.cwd).map_err(EngineError::from)?;
    let layout = StateLayout::new(repo.common_dir());
    let run_id = &request.plan.run_id;
    let manifest_path = layout.manifest(run_id);
    if !manifest_path.exists() {
        return Ok(Settled::Free(Vec::new()));
    }
    let _run_lock = lock_run(&layout, run_id)?;
    let manifest = RunManifest::load(&manifest_path).map_err(EngineError::from)?;
    let workers = waiting::settle(&layout, &manifest, releases).map_err(leases_unread)?;
    if workers.out.is_empty() {
        return Ok(Settled::Free(workers.released));
    }
    Ok(Settled::Wait(wait(&manifest, workers)))
}

fn leases_unread(source: std::io::Error) -> EngineError {
    EngineError::Io { context: "reading and releasing the run's worker leases".into(), source }
}

fn wait(manifest: &RunManifest, workers: Workers) -> StepOutcome {
    let phase = waiting::phase_of(manifest, &workers.out).map(|(number, name, strategy)| PhaseInfo {
        number,
        name,
        strategy,
    });
    StepOutcome {
        run_id: manifest.run_id.clone(),
        status: StepStatus::Wait,
        phase,
        dispatch: Vec::new(),
        message: waiting::message(&manifest.run_id, &workers),
        stack: Vec::new(),
        waiting: workers.out,
        released: workers.released,
    }
}

/// The phase loop, as far as it goes without agents.
fn advance(request: RunRequest, sink: &dyn EventSink) -> Result<StepOutcome, StepError> {
    let mut run = prepare(RunRequest { agents: Agents::Dispatched, ..request }, sink)?;
    let mut driver = Subagents { failed_phase: None };
    let outcome = match drive(&mut run, &mut driver)? {
        Driven::Paused(outcome) => return Ok(outcome),
        Driven::Finished(outcome) => outcome,
    };
    let run_id = outcome.run_id.clone();
    if !outcome.ok {
        let failures: Vec<String> = outcome
            .failures
            .iter()
            .map(|f| format!("task {} ({}) in {}: {}", f.task, f.name, f.worktree.display(), f.error))
            .collect();
        return Ok(StepOutcome {
            status: StepStatus::Failed,
            phase: driver.failed_phase,
            dispatch: Vec::new(),
            message: format!(
                "{}. Nothing was lost; fix the cause (or the plan), then run `{} step {run_id} --json` to hand \
                 the task out again",
                failures.join("; "),
                own_name()
            ),
            stack: Vec::new(),
            waiting: Vec::new(),
            released: Vec::new(),
            run_id,
        });
    }
    Ok(StepOutcome {
        status: StepStatus::Done,
        phase: None,
        dispatch: Vec::new(),
        message: format!(
            "run {run_id} is done: {} branches stacked; the stack is checked out in {}",
            outcome.stack.len(),
            outcome.main_worktree.display()
        ),
        stack: outcome.stack,
        waiting: Vec::new(),
        released: Vec::new(),
        run_id,
    })
}

/// The phase driver of `wt step`: the orchestrator's subagents do the tasks.
struct Subagents {
    failed_phase: Option<PhaseInfo>,
}

impl PhaseDriver for Subagents {
    type Pause = StepOutcome;
    type Error = StepError;

    fn run_phase(
        &mut self,
        run: &mut Run,
        phase: &Phase,
        below: &str,
    ) -> Result<PhaseEnd<StepOutcome>, StepError> {
        // A subagent started since `workers_out` looked: its task is not judged now either.
        let workers = waiting::settle(&run.ws.layout, &run.manifest, &[]).map_err(leases_unread)?;
        if !workers.out.is_empty() {
            return Ok(PhaseEnd::Paused(wait(&run.manifest, workers)));
        }
        let end = match phase.strategy {
            Strategy::Sequential => sequential(run, phase, below)?,
            Strategy::Parallel => parallel(run, phase, below)?,
        };
        if let PhaseEnd::Failed = end {
            for task in &phase.tasks {
                let _ = release_slot(run, task.id);
            }
            self.failed_phase = Some(phase_info(phase));
        }
        Ok(end)
    }
}

/// The phase's tasks one at a time: check the one out, or hand out the next.
fn sequential(run: &mut Run, phase: &Phase, phase_base: &str) -> Result<PhaseEnd<StepOutcome>, StepError> {
    let mut below = phase_base.to_owned();
    for task in &phase.tasks {
        match run.task_state(task.id) {
            TaskState::Verified => {}
            TaskState::Dispatched => match check_dispatched(run, task)? {
                Checked::Verified => {}
                Checked::Failed => return Ok(PhaseEnd::Failed),
                Checked::Again => return dispatch_one(run, phase, task),
            },
            state => {
                let base_commit = run.claim_task(task, &below)?;
                let fresh = state == TaskState::Pending;
                place_in_main(&run.ws, task, &below, fresh.then_some(base_commit.as_str()))?;
                if !set_up(run, task, &run.ws.main_worktree())? {
                    return Ok(PhaseEnd::Failed);
                }
                return dispatch_one(run, phase, task);
            }
        }
        below = task.branch.clone();
    }
    Ok(PhaseEnd::Done)
}

fn dispatch_one(run: &mut Run, phase: &Phase, task: &Task) -> Result<PhaseEnd<StepOutcome>, StepError> {
    match hand_out(run, task)? {
        Some(slot) => Ok(PhaseEnd::Paused(dispatch(run, phase, &[(task, slot)]))),
        None => Err(no_slot(run)),
    }
}

/// The phase's tasks all at once (up to max_parallel out at a time, and as many as there are
/// free worker slots); done when all are verified.
fn parallel(run: &mut Run, phase: &Phase, phase_base: &str) -> Result<PhaseEnd<StepOutcome>, StepError> {
    let mut again: Vec<&Task> = Vec::new();
    let mut failures = false;
    for task in &phase.tasks {
        if run.task_state(task.id) != TaskState::Dispatched {
            continue;
        }
        match check_dispatched(run, task)? {
            Checked::Verified => {}
            Checked::Failed => failures = true,
            Checked::Again => again.push(task),
        }
    }
    if failures {
        return Ok(PhaseEnd::Failed);
    }
    let mut out: Vec<(&Task, usize)> = Vec::new();
    // A task that is due but found every worker slot out: the phase cannot end yet.
    let mut no_worker = false;
    for task in again {
        match hand_out(run, task)? {
            Some(slot) => out.push((task, slot)),
            None => no_worker = true,
        }
    }
    for task in &phase.tasks {
        let state = run.task_state(task.id);
        if no_worker
            || out.len() >= run.max_parallel
            || matches!(state, TaskState::Verified | TaskState::Dispatched)
        {
            continue;
        }
        let base_commit = run.claim_task(task, phase_base)?;
        let fresh = state == TaskState::Pending;
        place_in_own_worktree(&run.ws, task, phase_base, fresh.then_some(base_commit.as_str()))?;
        if !set_up(run, task, &run.task_worktree(task.id))? {
            failures = true;
            continue;
        }
        match hand_out(run, task)? {
            Some(slot) => out.push((task, slot)),
            None => no_worker = true,
        }
    }
    if !out.is_empty() {
        return Ok(PhaseEnd::Paused(dispatch(run, phase, &out)));
    }
    if failures {
        return Ok(PhaseEnd::Failed);
    }
    if no_worker {
        return Err(no_slot(run));
    }
    Ok(PhaseEnd::Done)
}

/// Runs the setup a fresh worktree owes before the task's subagent is dispatched to it; false
/// when it failed (the task is recorded as failed).
fn set_up(run: &mut Run, task: &Task, worktree: &std::path::Path) -> Result<bool, EngineError> {
    match run_owed_setup(&run.ws, task, worktree)? {
        Setup::NotOwed | Setup::Done => Ok(true),
        Setup::Failed(failure) => {
            run.record_outcome(task, TaskOutcome::Failed(failure))?;
            Ok(false)
        }
    }
}

fn no_slot(run: &Run) -> StepError {
    let holders = leases::occupancy(&run.ws.layout)
        .into_iter()
        .filter_map(|(_, holder)| holder)
        .map(|holder| format!("run {} task {}", holder.lease.run_id, holder.task.id))
        .collect();
    StepError::NoWorkerSlot { run_id: run.ws.run_id.clone(), slots: WORKER_SLOTS, holders }
}

enum Checked {
    Verified,
    Failed,
    /// The subagent left nothing: hand the task out again.
    Again,
}

/// Checks what the subagent of a dispatched task left: first that it changed nothing it may not
/// (against the snapshot taken when it was handed out), then its work.
fn check_dispatched(run: &mut Run, task: &Task) -> Result<Checked, EngineError> {
    let record = run.record(task.id).cloned();
    let worktree = run.task_worktree(task.id);
    let base_commit = record.as_ref().and_then(|r| r.base_commit.clone()).unwrap_or_default();
    let dispatches = record.map_or(0, |r| r.dispatches);
    let watch = match recorded_watch(&run.ws, task.id) {
        Ok(watch) => watch,
        Err(missing) => {
            let again =
                format!("run `{} step {} --json` to hand the task out again", own_name(), run.ws.run_id);
            return fail(run, task, format!("{missing}; {again}"));
        }
    };
    if let Some(failure) = take_back(&run.ws, task, &worktree, &watch)? {
        return fail(run, task, failure);
    }
    if !task.allow_empty && !has_work(&run.ws, &worktree, &base_commit)? && dispatches < MAX_DISPATCHES {
        run.update_task(task.id, |record| record.dispatches += 1)?;
        return Ok(Checked::Again);
    }
    let ws = run.ws.clone();
    let outcome = finish_task(&ws, task, &worktree, &base_commit, &watch, &mut |_| {})?;
    let verified = outcome == TaskOutcome::Verified;
    run.record_outcome(task, outcome)?;
    release_slot(run, task.id)?;
    Ok(if verified { Checked::Verified } else { Checked::Failed })
}

fn fail(run: &mut Run, task: &Task, failure: String) -> Result<Checked, EngineError> {
    run.record_outcome(task, TaskOutcome::Failed(failure))?;
    release_slot(run, task.id)?;
    Ok(Checked::Failed)
}

/// Records `task` as out, holding a worker slot: the one it holds, else a free one; None when
/// every slot is out. Under the repository lock, so two runs never lease the same slot, and the
/// lease and the manifest are written together (a lease the manifest does not confirm is free).
/// Before the task is marked out, a snapshot of what it must leave alone is written.
fn hand_out(run: &mut Run, task: &Task) -> Result<Option<usize>, EngineError> {
    let repo_lock = run.ws.repo_lock()?;
    let layout = run.ws.layout.clone();
    let run_id = run.ws.run_id.clone();
    let occupancy = leases::occupancy(&layout);
    let held = run.record(task.id).and_then(|r| r.slot).filter(|&slot| {
        occupancy.iter().any(|(s, holder)| {
            *s == slot && holder.as_ref().is_some_and(|h| h.lease.is_for(&run_id, task.id))
        })
    });
    let free = || occupancy.iter().find(|(_, holder)| holder.is_none()).map(|(slot, _)| *slot);
    let Some(slot) = held.or_else(free) else {
        return Ok(None);
    };
    watch(&run.ws, task, &run.task_worktree(task.id), &repo_lock)?;
    let first = run.task_state(task.id) != TaskState::Dispatched;
    let dispatch = if first { 1 } else { run.record(task.id).map_or(1, |r| r.dispatches) };
    leases::lease(&layout, slot, &Lease::hand_out(&run_id, task.id, dispatch))
        .map_err(|source| EngineError::Io { context: format!("leasing worker slot {slot}"), source })?;
    run.update_task(task.id, |record| {
        record.state = TaskState::Dispatched;
        record.slot = Some(slot);
        record.pid = None;
        record.error = None;
        if first {
            record.dispatches = 1;
        }
    })?;
    Ok(Some(slot))
}

/// Lets go of the worker slot `task` holds.
fn release_slot(run: &mut Run, task: TaskId) -> Result<(), EngineError> {
    let Some(slot) = run.record(task).and_then(|r| r.slot) else { return Ok(()) };
    leases::release(&run.ws.layout, slot, &run.ws.run_id, task)
        .map_err(|source| EngineError::Io { context: format!("releasing worker slot {slot}"), source })?;
    run.update_task(task, |record| record.slot = None)
}

fn dispatch(run: &Run, phase: &Phase, tasks: &[(&Task, usize)]) -> StepOutcome {
    let dispatch = tasks
        .iter()
        .map(|&(task, slot)| Dispatch {
            subagent_type: worker_type(slot),
            description: format!("Task {}: {}", task.id, task.name),
            prompt: render_prompt(run.ws.feature.as_deref(), task, &run.task_worktree(task.id)),
        })
        .collect::<Vec<_>>();
    let how = if dispatch.len() > 1 { "all in one message, in parallel" } else { "this one subagent" };
    let message = format!(
        "dispatch {how}; when every one has returned, run `{} step {} --json` again",
        own_name(),
        run.ws.run_id
    );
    StepOutcome {
        run_id: run.ws.run_id.clone(),
        status: StepStatus::Dispatch,
        phase: Some(phase_info(phase)),
        dispatch,
        message,
        stack: Vec::new(),
        waiting: Vec::new(),
        released: Vec::new(),
    }
}

fn phase_info(phase: &Phase) -> PhaseInfo {
    PhaseInfo { number: phase.number, name: phase.name.clone(), strategy: phase.strategy }
}
