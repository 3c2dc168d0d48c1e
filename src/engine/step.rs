//! `wt step`: the run advanced as far as it can without agents, for an orchestrator (the Claude
//! Code slash command) that dispatches the agents itself. Each call checks what the subagents
//! of the previous call left (commit, verify), stacks a finished parallel phase, and hands out
//! the next task(s) — or says the run is done or failed. A task handed out is recorded as
//! dispatched first, so a call never hands out a task that is already out; a call that finds
//! no new work in a dispatched task hands it out again once, then fails it.
//!
//! Each task out holds one of the plugin's worker slots (`spectacular:wt-worker-<k>`, leased in
//! `store::slots`): the subagent type the orchestrator dispatches, and how the guard finds the
//! worker's worktree. A task keeps its slot until it is checked; a run that fails lets go of all.

use serde::Serialize;

use super::event::StackEntry;
use super::run::Run;
use super::sequential::record_outcome;
use super::task::{TaskOutcome, finish_task, has_work, place_in_main, place_in_own_worktree};
use super::{EngineError, EventSink, RunRequest, linearize, prepare};
use crate::agent::{WORKER_SLOTS, render_prompt, worker_type};
use crate::plan::{Phase, Strategy, Task, TaskId};
use crate::store::slots::{self, Lease};
use crate::store::{PhaseState, TaskState};

/// A task whose subagent may return with nothing done this many times before it fails.
const MAX_DISPATCHES: u32 = 2;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StepStatus {
    Dispatch,
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
}

pub fn step(mut request: RunRequest, sink: &dyn EventSink) -> Result<StepOutcome, EngineError> {
    request.external_agents = true;
    let (mut run, _) = prepare::prepare(request, sink)?;
    let phases = run.plan.phases.clone();
    let mut below = run.manifest.base.clone();
    for phase in &phases {
        let last = phase.tasks.last().map(|t| t.branch.clone()).unwrap_or_default();
        if run.manifest.phases[phase.number - 1].state == PhaseState::Done {
            below = last;
            continue;
        }
        if let Some(record) = run.manifest.phase_mut(phase.number) {
            record.state = PhaseState::Running;
            record.base_branch = Some(below.clone());
        }
        run.save()?;
        let outcome = match phase.strategy {
            Strategy::Sequential => sequential(&mut run, phase, &below)?,
            Strategy::Parallel => parallel(&mut run, phase, &below)?,
        };
        if let Some(outcome) = outcome {
            return Ok(outcome);
        }
        if let Some(record) = run.manifest.phase_mut(phase.number) {
            record.state = PhaseState::Done;
        }
        run.save()?;
        below = last;
    }
    super::check_stack_through(&run, phases.len())?;
    let finished = super::finish(&mut run, true)?;
    Ok(StepOutcome {
        run_id: finished.run_id.clone(),
        status: StepStatus::Done,
        phase: None,
        dispatch: Vec::new(),
        message: format!(
            "run {} is done: {} branches stacked; the stack is checked out in {}",
            finished.run_id,
            finished.stack.len(),
            finished.main_worktree.display()
        ),
        stack: finished.stack,
    })
}

/// The phase's tasks one at a time: check the one out, or hand out the next.
fn sequential(run: &mut Run, phase: &Phase, phase_base: &str) -> Result<Option<StepOutcome>, EngineError> {
    let mut below = phase_base.to_owned();
    for task in &phase.tasks {
        let state = run.manifest.task(task.id).map(|r| r.state).unwrap_or(TaskState::Pending);
        match state {
            TaskState::Verified => {}
            TaskState::Dispatched => match check_dispatched(run, task)? {
                Checked::Verified => {}
                Checked::Failed => return Ok(Some(failed(run, phase))),
                Checked::Again => {
                    let slot = hand_out(run, task)?.ok_or_else(|| no_slot(run))?;
                    return Ok(Some(dispatch(run, phase, &[(task, slot)])));
                }
            },
            _ => {
                run.claim_task(task, &below)?;
                place_in_main(&run.ws, task, &below)?;
                let slot = hand_out(run, task)?.ok_or_else(|| no_slot(run))?;
                return Ok(Some(dispatch(run, phase, &[(task, slot)])));
            }
        }
        below = task.branch.clone();
    }
    Ok(None)
}

/// The phase's tasks all at once (up to max_parallel out at a time, and as many as there are
/// free worker slots), then stacked.
fn parallel(run: &mut Run, phase: &Phase, phase_base: &str) -> Result<Option<StepOutcome>, EngineError> {
    let mut again: Vec<&Task> = Vec::new();
    let mut failures = false;
    for task in &phase.tasks {
        if run.manifest.task(task.id).is_some_and(|r| r.state == TaskState::Dispatched) {
            match check_dispatched(run, task)? {
                Checked::Verified => {}
                Checked::Failed => failures = true,
                Checked::Again => again.push(task),
            }
        }
    }
    if failures {
        return Ok(Some(failed(run, phase)));
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
        let state = run.manifest.task(task.id).map(|r| r.state).unwrap_or(TaskState::Pending);
        if no_worker
            || out.len() >= run.max_parallel
            || matches!(state, TaskState::Verified | TaskState::Dispatched)
        {
            continue;
        }
        let fresh = state == TaskState::Pending;
        run.claim_task(task, phase_base)?;
        place_in_own_worktree(&run.ws, task, phase_base, !fresh)?;
        match hand_out(run, task)? {
            Some(slot) => out.push((task, slot)),
            None => no_worker = true,
        }
    }
    if !out.is_empty() {
        return Ok(Some(dispatch(run, phase, &out)));
    }
    if no_worker {
        return Err(no_slot(run));
    }
    linearize::linearize_phase(run, phase, phase_base)?;
    Ok(None)
}

enum Checked {
    Verified,
    Failed,
    /// The subagent left nothing: hand the task out again.
    Again,
}

fn check_dispatched(run: &mut Run, task: &Task) -> Result<Checked, EngineError> {
    let record = run.manifest.task(task.id).cloned();
    let worktree = record.as_ref().map(|r| r.worktree.clone()).unwrap_or_else(|| run.ws.main_worktree());
    let base_commit = record.as_ref().and_then(|r| r.base_commit.clone()).unwrap_or_default();
    let dispatches = record.map_or(0, |r| r.dispatches);
    if !task.allow_empty && !has_work(&run.ws, &worktree, &base_commit)? && dispatches < MAX_DISPATCHES {
        run.update_task(task.id, |record| record.dispatches += 1)?;
        return Ok(Checked::Again);
    }
    let ws = run.ws.clone();
    let outcome = finish_task(&ws, task, &worktree, &base_commit, &mut |_| {})?;
    let verified = outcome == TaskOutcome::Verified;
    record_outcome(run, task, outcome)?;
    release_slot(run, task.id)?;
    Ok(if verified { Checked::Verified } else { Checked::Failed })
}

/// Records `task` as out, holding a worker slot: the one it holds, else a free one; None when
/// every slot is out. Under the repository lock, so two runs never lease the same slot, and the
/// lease and the manifest are written together (a lease the manifest does not confirm is free).
fn hand_out(run: &mut Run, task: &Task) -> Result<Option<usize>, EngineError> {
    let _repo_lock = run.ws.repo_lock()?;
    let layout = run.ws.layout.clone();
    let own = Lease { run_id: run.ws.run_id.clone(), phase: task.id.phase, task: task.id.task };
    let occupancy = slots::occupancy(&layout);
    let held = run.manifest.task(task.id).and_then(|r| r.slot).filter(|&slot| {
        occupancy.iter().any(|(s, holder)| *s == slot && holder.as_ref().is_some_and(|h| h.lease == own))
    });
    let free = || occupancy.iter().find(|(_, holder)| holder.is_none()).map(|(slot, _)| *slot);
    let Some(slot) = held.or_else(free) else {
        return Ok(None);
    };
    slots::lease(&layout, slot, &own)
        .map_err(|source| EngineError::Io { context: format!("leasing worker slot {slot}"), source })?;
    let first = run.manifest.task(task.id).is_none_or(|r| r.state != TaskState::Dispatched);
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
    let Some(slot) = run.manifest.task(task).and_then(|r| r.slot) else { return Ok(()) };
    slots::release(&run.ws.layout, slot, &run.ws.run_id, task)
        .map_err(|source| EngineError::Io { context: format!("releasing worker slot {slot}"), source })?;
    run.update_task(task, |record| record.slot = None)
}

fn no_slot(run: &Run) -> EngineError {
    let holders = slots::occupancy(&run.ws.layout)
        .into_iter()
        .filter_map(|(_, holder)| holder)
        .map(|holder| format!("run {} task {}", holder.lease.run_id, holder.task.number))
        .collect();
    EngineError::NoWorkerSlot { run_id: run.ws.run_id.clone(), slots: WORKER_SLOTS, holders }
}

fn dispatch(run: &Run, phase: &Phase, tasks: &[(&Task, usize)]) -> StepOutcome {
    let dispatch = tasks
        .iter()
        .map(|&(task, slot)| {
            let worktree = run
                .manifest
                .task(task.id)
                .map(|r| r.worktree.clone())
                .unwrap_or_else(|| run.ws.main_worktree());
            Dispatch {
                subagent_type: worker_type(slot),
                description: format!("Task {}: {}", task.id, task.name),
                prompt: render_prompt(run.ws.feature.as_deref(), task, &worktree),
            }
        })
        .collect::<Vec<_>>();
    let how = if dispatch.len() > 1 { "all in one message, in parallel" } else { "this one subagent" };
    let message =
        format!("dispatch {how}; when every one has returned, run `wt step {} --json` again", run.ws.run_id);
    StepOutcome {
        run_id: run.ws.run_id.clone(),
        status: StepStatus::Dispatch,
        phase: Some(phase_info(phase)),
        dispatch,
        message,
        stack: Vec::new(),
    }
}

fn failed(run: &mut Run, phase: &Phase) -> StepOutcome {
    let failures: Vec<String> = phase
        .tasks
        .iter()
        .filter_map(|t| {
            let record = run.manifest.task(t.id)?;
            let error = record.error.as_ref()?;
            Some(format!("task {} ({}) in {}: {error}", t.id, t.name, record.worktree.display()))
        })
        .collect();
    for task in &phase.tasks {
        let _ = release_slot(run, task.id);
    }
    if let Some(record) = run.manifest.phase_mut(phase.number) {
        record.state = PhaseState::Failed;
    }
    run.manifest.state = crate::store::RunState::Failed;
    let _ = run.save();
    StepOutcome {
        run_id: run.ws.run_id.clone(),
        status: StepStatus::Failed,
        phase: Some(phase_info(phase)),
        dispatch: Vec::new(),
        message: format!(
            "{}. Nothing was lost; fix the cause (or the plan), then run `wt step {} --json` to hand the \
             task out again",
            failures.join("; "),
            run.ws.run_id
        ),
        stack: Vec::new(),
    }
}

fn phase_info(phase: &Phase) -> PhaseInfo {
    PhaseInfo { number: phase.number, name: phase.name.clone(), strategy: phase.strategy }
}
