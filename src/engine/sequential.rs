//! A sequential phase: each task in the run's main worktree, on a new branch stacked on the
//! previous one. The first failure stops the phase: later tasks build on it.

use super::EngineError;
use super::event::{Activity, Event};
use super::run::Run;
use super::task::{Progress, TaskOutcome, execute_task, place_in_main};
use crate::plan::{Phase, Task, TaskId};
use crate::store::TaskState;

/// Runs the phase's tasks on top of `phase_base`; returns whether every task was verified.
pub fn run_sequential_phase(run: &mut Run, phase: &Phase, phase_base: &str) -> Result<bool, EngineError> {
    let mut below = phase_base.to_owned();
    for task in &phase.tasks {
        if run.manifest.task(task.id).is_some_and(|record| record.state == TaskState::Verified) {
            run.emit(skipped(task));
            below = task.branch.clone();
            continue;
        }
        let worktree = run.ws.main_worktree();
        run.emit(Event::TaskStarted {
            task: task.id.to_string(),
            name: task.name.clone(),
            branch: task.branch.clone(),
            worktree: worktree.clone(),
        });
        let base_commit = run.claim_task(task, &below)?;
        place_in_main(&run.ws, task, &below)?;
        run.update_task(task.id, |record| {
            record.state = TaskState::Running;
            record.pid = Some(std::process::id());
            record.error = None;
        })?;
        let ws = run.ws.clone();
        let outcome = execute_task(&ws, task, &worktree, &base_commit, &mut |progress| {
            report_progress(run, task.id, progress)
        })?;
        let ok = record_outcome(run, task, outcome)?;
        if !ok {
            return Ok(false);
        }
        below = task.branch.clone();
    }
    Ok(true)
}

/// Shows a task's activity and records its agent's pid (a resumed run waits for an agent its
/// killed predecessor left running).
pub fn report_progress(run: &mut Run, id: TaskId, progress: Progress) {
    match progress {
        Progress::Activity(activity) => {
            run.emit(Event::TaskActivity { task: id.to_string(), activity, detail: None })
        }
        Progress::Detail(detail) => run.emit(Event::TaskActivity {
            task: id.to_string(),
            activity: Activity::Agent,
            detail: Some(detail),
        }),
        Progress::AgentPid(pid) => {
            if let Err(err) = run.update_task(id, |record| record.agent_pid = pid) {
                run.emit(Event::Notice {
                    message: format!("could not record the agent of task {id}: {err}"),
                });
            }
        }
    }
}

/// Records a finished task in the manifest and the event stream; returns whether it passed.
pub fn record_outcome(run: &mut Run, task: &Task, outcome: TaskOutcome) -> Result<bool, EngineError> {
    let (state, error) = match outcome {
        TaskOutcome::Verified => (TaskState::Verified, None),
        TaskOutcome::Failed(error) => (TaskState::Failed, Some(error)),
    };
    let log = run.ws.layout.task_log(&run.ws.run_id, task.id);
    run.update_task(task.id, |record| {
        record.state = state;
        record.pid = None;
        record.error = error.clone();
    })?;
    run.emit(Event::TaskFinished {
        task: task.id.to_string(),
        name: task.name.clone(),
        ok: error.is_none(),
        error,
        log,
    });
    Ok(state == TaskState::Verified)
}

pub fn skipped(task: &Task) -> Event {
    Event::TaskSkipped {
        task: task.id.to_string(),
        name: task.name.clone(),
        reason: "already verified in an earlier attempt".into(),
    }
}
