//! A parallel phase: every task in its own worktree on a branch from the phase base, at most
//! `max_parallel` at once. Workers run on blocking threads and report over a channel; only this
//! coordinator touches the manifest and the display. A failed task never stops its siblings.

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc, oneshot};

use super::EngineError;
use super::event::{Activity, Event};
use super::placement::place_in_own_worktree;
use super::run::Run;
use super::task::{Progress, TaskOutcome, execute_task};
use super::workspace::Workspace;
use crate::agent::Agent;
use crate::plan::{Phase, Task, TaskId};
use crate::store::TaskState;

/// A task about to run: the commit its branch starts from, and whether an agent ever ran for it.
#[derive(Clone)]
struct Claim {
    base_commit: String,
    fresh: bool,
}

enum Report {
    /// The worktree and branch are ready; the agent starts once the coordinator has recorded
    /// the task as running (write-ahead) and answers.
    Prepared(TaskId, oneshot::Sender<()>),
    Progress(TaskId, Progress),
    Finished(TaskId, Result<TaskOutcome, EngineError>),
}

/// Runs the phase's unfinished tasks; returns whether every task of the phase is verified.
pub fn run_parallel_phase(
    run: &mut Run,
    agent: &Agent,
    phase: &Phase,
    phase_base: &str,
) -> Result<bool, EngineError> {
    let mut pending = Vec::new();
    for task in &phase.tasks {
        if run.task_state(task.id) == TaskState::Verified {
            run.skip_verified(task);
        } else {
            pending.push(task.clone());
        }
    }
    let mut claimed = Vec::with_capacity(pending.len());
    for task in pending {
        // A task no agent has started on has nothing in its worktree but a checkout.
        let fresh = run.task_state(task.id) == TaskState::Pending;
        let base_commit = run.claim_task(&task, phase_base)?;
        claimed.push((task, Claim { base_commit, fresh }));
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|source| EngineError::Io { context: "starting the task scheduler".into(), source })?;
    runtime.block_on(coordinate(run, agent, claimed, phase_base))?;
    Ok(phase.tasks.iter().all(|task| run.task_state(task.id) == TaskState::Verified))
}

async fn coordinate(
    run: &mut Run<'_>,
    agent: &Agent,
    pending: Vec<(Task, Claim)>,
    phase_base: &str,
) -> Result<(), EngineError> {
    let (sender, mut reports) = mpsc::unbounded_channel();
    let slots = Arc::new(Semaphore::new(run.max_parallel.max(1)));
    for (task, claim) in pending.iter().cloned() {
        let (ws, agent, sender, slots, phase_base) =
            (run.ws.clone(), agent.clone(), sender.clone(), slots.clone(), phase_base.to_owned());
        tokio::spawn(async move {
            let Ok(_slot) = slots.acquire_owned().await else { return };
            let id = task.id;
            let worker_sender = sender.clone();
            let joined = tokio::task::spawn_blocking(move || {
                run_worker(&ws, &agent, &task, &phase_base, &claim, &worker_sender)
            })
            .await;
            let result = joined
                .unwrap_or_else(|err| Ok(TaskOutcome::Failed(format!("the task's worker crashed: {err}"))));
            let _ = sender.send(Report::Finished(id, result));
        });
    }
    drop(sender);
    while let Some(report) = reports.recv().await {
        match report {
            Report::Prepared(id, recorded) => {
                run.start_task(id)?;
                let _ = recorded.send(());
                if let Some((task, _)) = pending.iter().find(|(task, _)| task.id == id) {
                    run.emit(Event::TaskStarted {
                        task: id,
                        name: task.name.clone(),
                        branch: task.branch.clone(),
                        worktree: run.ws.task_worktree(id),
                    });
                }
            }
            Report::Progress(id, progress) => run.report_progress(id, progress),
            Report::Finished(id, result) => {
                let outcome = result.unwrap_or_else(|err| TaskOutcome::Failed(err.to_string()));
                let Some((task, _)) = pending.iter().find(|(task, _)| task.id == id) else { continue };
                run.record_outcome(task, outcome)?;
            }
        }
    }
    Ok(())
}

fn run_worker(
    ws: &Workspace,
    agent: &Agent,
    task: &Task,
    phase_base: &str,
    claim: &Claim,
    reports: &mpsc::UnboundedSender<Report>,
) -> Result<TaskOutcome, EngineError> {
    let _ = reports.send(Report::Progress(task.id, Progress::Activity(Activity::Preparing)));
    let worktree = ws.task_worktree(task.id);
    place_in_own_worktree(ws, task, phase_base, claim.fresh.then_some(claim.base_commit.as_str()))?;
    let (recorded, acknowledged) = oneshot::channel();
    let _ = reports.send(Report::Prepared(task.id, recorded));
    if acknowledged.blocking_recv().is_err() {
        return Ok(TaskOutcome::Failed("the run stopped before the task's agent could start".into()));
    }
    execute_task(ws, agent, task, &worktree, &claim.base_commit, &mut |progress| {
        let _ = reports.send(Report::Progress(task.id, progress));
    })
}
