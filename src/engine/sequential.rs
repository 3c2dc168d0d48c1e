//! A sequential phase run by wt's own agents: each task in the run's main worktree, on a new
//! branch stacked on the previous one. The first failure stops the phase: later tasks build on it.

use super::EngineError;
use super::event::Event;
use super::placement::place_in_main;
use super::run::Run;
use super::task::execute_task;
use crate::agent::Agent;
use crate::plan::Phase;
use crate::store::TaskState;

/// Runs the phase's tasks on top of `phase_base`; returns whether every task was verified.
pub fn run_sequential_phase(
    run: &mut Run,
    agent: &Agent,
    phase: &Phase,
    phase_base: &str,
) -> Result<bool, EngineError> {
    let mut below = phase_base.to_owned();
    for task in &phase.tasks {
        if run.task_state(task.id) == TaskState::Verified {
            run.skip_verified(task);
            below = task.branch.clone();
            continue;
        }
        let worktree = run.ws.main_worktree();
        run.emit(Event::TaskStarted {
            task: task.id,
            name: task.name.clone(),
            branch: task.branch.clone(),
            worktree: worktree.clone(),
        });
        let fresh = run.task_state(task.id) == TaskState::Pending;
        let base_commit = run.claim_task(task, &below)?;
        place_in_main(&run.ws, task, &below, fresh.then_some(base_commit.as_str()))?;
        run.start_task(task.id)?;
        let ws = run.ws.clone();
        let outcome = execute_task(&ws, agent, task, &worktree, &base_commit, &mut |progress| {
            run.report_progress(task.id, progress)
        })?;
        if !run.record_outcome(task, outcome)? {
            return Ok(false);
        }
        below = task.branch.clone();
    }
    Ok(true)
}
