//! A parallel phase: every task in its own worktree on a branch from the phase base, at most
//! `max_parallel` at once. Workers run on blocking threads and report over a channel; only this
//! coordinator touches the manifest and the display. A failed task never stops its siblings.
//!
//! The phase's branches are created before any task starts, last task first, each with
//! `git-spice branch create --below` the next one: every branch starts at the phase base's
//! commit, and git-spice records them in plan order from the start, so stacking the phase after
//! it is one restack (`linearize`) with no base left to record. A worker then only checks its
//! branch out in its own worktree.

use std::sync::Arc;

use tokio::sync::{Semaphore, mpsc, oneshot};

use super::EngineError;
use super::event::{Activity, Event};
use super::journal::Step;
use super::placement::place_in_own_worktree;
use super::run::Run;
use super::task::{Progress, TaskOutcome, execute_task};
use super::workspace::Workspace;
use crate::agent::Agent;
use crate::git;
use crate::plan::{Phase, Task, TaskId};
use crate::spice::state;
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
    // A task no agent has started on has nothing in its worktree but a checkout.
    let fresh: Vec<bool> = pending.iter().map(|task| run.task_state(task.id) == TaskState::Pending).collect();
    let bases = run.claim_tasks(&pending.iter().collect::<Vec<_>>(), phase_base)?;
    let claimed: Vec<(Task, Claim)> = pending
        .into_iter()
        .zip(bases.into_iter().zip(fresh))
        .map(|(task, (base_commit, fresh))| (task, Claim { base_commit, fresh }))
        .collect();
    create_branches(&run.ws, phase, &claimed, phase_base)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|source| EngineError::Io { context: "starting the task scheduler".into(), source })?;
    runtime.block_on(coordinate(run, agent, claimed, phase_base))?;
    Ok(phase.tasks.iter().all(|task| run.task_state(task.id) == TaskState::Verified))
}

/// Creates the missing branches of the claimed tasks in the main worktree, last task first: a
/// branch goes `--below` the branch of the task after it when git-spice records that one on the
/// phase base at this task's base commit (so the new branch starts exactly there); otherwise
/// (the first one, or after a resume that left something else) it is created on the phase base
/// and stacking records its place. The main worktree is left detached, so each task can check
/// its branch out in its own worktree.
fn create_branches(
    ws: &Workspace,
    phase: &Phase,
    claimed: &[(Task, Claim)],
    phase_base: &str,
) -> Result<(), EngineError> {
    let main = ws.main_worktree();
    let mut above: Option<&str> = None;
    for task in phase.tasks.iter().rev() {
        let claim = claimed.iter().find(|(claimed, _)| claimed.id == task.id).map(|(_, claim)| claim);
        if let Some(claim) = claim
            && !ws.repo.branch_exists(&task.branch)?
        {
            let below = match above {
                Some(above) if recorded_on(ws, above, phase_base, &claim.base_commit)? => Some(above),
                _ => None,
            };
            let _repo_lock = ws.repo_lock()?;
            ws.journal.step(Step::BranchCreate, &task.id.to_string(), || {
                let created = match below {
                    Some(above) => ws.spice.branch_create_below(&main, &task.branch, above),
                    None => ws.spice.branch_create(&main, &task.branch, phase_base),
                };
                Ok(created?)
            })?;
        }
        above = Some(&task.branch);
    }
    let current = git::current_branch(&main)?;
    if current.is_some_and(|branch| phase.tasks.iter().any(|task| task.branch == branch)) {
        let _repo_lock = ws.repo_lock()?;
        git::detach(&main)?;
    }
    Ok(())
}

/// Whether git-spice records `branch` on `base` at `commit`.
fn recorded_on(ws: &Workspace, branch: &str, base: &str, commit: &str) -> Result<bool, EngineError> {
    let recorded = state::recorded_bases(&ws.repo, &[branch])?;
    Ok(recorded
        .and_then(|mut bases| bases.pop().flatten())
        .is_some_and(|r| r.name == base && r.hash == commit))
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
