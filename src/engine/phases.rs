//! The one phase loop. `wt run` drives it with agents it starts itself (`local`);
//! `wt step` with the subagents of an orchestrating session, pausing whenever tasks are out. Both
//! get the same bookkeeping: phases done in an earlier attempt are skipped (and moved onto a top
//! that changed), every phase state is recorded before the next step, a finished parallel phase
//! is stacked, and the whole stack is checked before the run is done.

use super::EngineError;
use super::event::{Event, StackEntry};
use super::journal::Step;
use super::linearize::linearize_phase;
use super::run::Run;
use super::stack;
use crate::git;
use crate::plan::{Phase, Strategy, TaskId};
use crate::store::{Containment, PhaseState, RunState};

/// How the tasks of a phase get done.
pub trait PhaseDriver {
    /// Why the loop stops before the run ends (`wt step`: the tasks to hand out).
    type Pause;
    /// The driver's own failures, besides the engine's.
    type Error: From<EngineError>;

    /// Runs (or goes on with) the phase's tasks on top of `below`.
    fn run_phase(
        &mut self,
        run: &mut Run,
        phase: &Phase,
        below: &str,
    ) -> Result<PhaseEnd<Self::Pause>, Self::Error>;
}

pub enum PhaseEnd<P> {
    /// Every task is verified.
    Done,
    /// A task failed; the run stops with everything kept.
    Failed,
    /// Tasks are out; the loop stops here and is driven again later.
    Paused(P),
}

pub enum Driven<P> {
    Finished(RunOutcome),
    Paused(P),
}

#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub run_id: String,
    pub ok: bool,
    pub stack: Vec<StackEntry>,
    pub failures: Vec<TaskFailure>,
    pub logs: std::path::PathBuf,
    pub main_worktree: std::path::PathBuf,
}

/// A task that failed, with what went wrong and where its work is.
#[derive(Debug, Clone)]
pub struct TaskFailure {
    pub task: TaskId,
    pub name: String,
    pub worktree: std::path::PathBuf,
    pub error: String,
}

pub fn drive<D: PhaseDriver>(run: &mut Run, driver: &mut D) -> Result<Driven<D::Pause>, D::Error> {
    run.emit(Event::RunStarted {
        run_id: run.ws.run_id.clone(),
        base: run.manifest.base.clone(),
        main_worktree: run.ws.main_worktree(),
        resumed: run.resumed,
    });
    if run.ws.containment == Containment::PolicyOnly {
        run.emit(Event::Notice {
            message: format!(
                "run {} is contained by policy only: this machine has no Landlock and the project allows that \
                 ([sandbox] required = false), so only the guard and the check after each task keep agents in \
                 their worktrees",
                run.ws.run_id
            ),
        });
    }
    let mut below = run.manifest.base.clone();
    let phases = run.plan.phases.clone();
    // Whether a phase ran in this invocation: the phases done before it may then sit on a top
    // that moved (a changed plan, a task whose branch was deleted) and must follow it.
    let mut moved = false;
    let mut checked_through = 0;
    for phase in &phases {
        let last_branch = phase.tasks.last().map(|task| task.branch.clone()).unwrap_or_default();
        if run.manifest.phases[phase.number - 1].state == PhaseState::Done {
            if moved {
                reanchor(run, phase, &below)?;
            }
            below = last_branch;
            continue;
        }
        moved = true;
        set_phase(run, phase.number, PhaseState::Running, Some(&below))?;
        run.emit(Event::PhaseStarted {
            phase: phase.number,
            name: phase.name.clone(),
            strategy: phase.strategy,
            tasks: phase.tasks.len(),
        });
        let ok = match driver.run_phase(run, phase, &below)? {
            PhaseEnd::Paused(pause) => return Ok(Driven::Paused(pause)),
            PhaseEnd::Done if phase.strategy == Strategy::Parallel => {
                linearize_phase(run, phase, &below)?;
                checked_through = phase.number;
                true
            }
            PhaseEnd::Done => true,
            PhaseEnd::Failed => false,
        };
        set_phase(run, phase.number, if ok { PhaseState::Done } else { PhaseState::Failed }, None)?;
        run.emit(Event::PhaseFinished { phase: phase.number, ok });
        if !ok {
            return Ok(Driven::Finished(finish(run, false)?));
        }
        below = last_branch;
    }
    check_out_top(run, &below)?;
    // A parallel last phase was checked as it was linearized; otherwise check the whole stack now.
    if checked_through != phases.len() {
        stack::check_stack_through(run, phases.len())?;
    }
    let first = phases.iter().flat_map(|phase| &phase.tasks).next().map(|task| task.branch.clone());
    let base = run.manifest.base.clone();
    if let Some(gained) =
        first.as_deref().map(|first| stack::base_moved(&run.ws, &base, first)).transpose()?.flatten()
    {
        run.emit(Event::Notice {
            message: format!(
                "{base} moved on during the run ({gained} new commit(s)); the stack sits on the {base} it \
                 started from. To move it onto the new {base}: cd {} && gs upstack restack --branch {}",
                run.ws.main_worktree().display(),
                first.unwrap_or_default()
            ),
        });
    }
    Ok(Driven::Finished(finish(run, true)?))
}

fn set_phase(run: &mut Run, number: usize, state: PhaseState, base: Option<&str>) -> Result<(), EngineError> {
    if let Some(record) = run.manifest.phase_mut(number) {
        record.state = state;
        if let Some(base) = base {
            record.base_branch = Some(base.to_owned());
        }
    }
    run.save()
}

/// Moves a finished phase (and everything above it) onto the new top of the phase below.
fn reanchor(run: &Run, phase: &Phase, below: &str) -> Result<(), EngineError> {
    let Some(first) = phase.tasks.first() else { return Ok(()) };
    let _repo_lock = run.ws.repo_lock()?;
    let main = run.ws.main_worktree();
    run.ws.journal.step(Step::Reanchor, &first.branch, || {
        Ok(run.ws.spice.upstack_onto(&main, &first.branch, below)?)
    })?;
    run.emit(Event::Notice { message: format!("moved phase {} onto {below}, which changed", phase.number) });
    Ok(())
}

/// Leaves the main worktree on the top of the stack.
fn check_out_top(run: &Run, top: &str) -> Result<(), EngineError> {
    let main = run.ws.main_worktree();
    if git::current_branch(&main)?.as_deref() == Some(top) {
        return Ok(());
    }
    let _repo_lock = run.ws.repo_lock()?;
    run.ws.journal.step(Step::CheckoutTop, top, || Ok(git::switch(&main, top)?))
}

fn finish(run: &mut Run, ok: bool) -> Result<RunOutcome, EngineError> {
    run.ws.journal.crash_point(Step::Finish, &run.ws.run_id, false);
    run.manifest.state = if ok { RunState::Done } else { RunState::Failed };
    run.save()?;
    let stack = stack::stack_entries(&run.ws, &run.plan, &run.manifest.base)?;
    let failures: Vec<TaskFailure> = run
        .manifest
        .phases
        .iter()
        .flat_map(|phase| &phase.tasks)
        .filter_map(|task| {
            Some(TaskFailure {
                task: task.id,
                name: task.name.clone(),
                worktree: task.worktree.clone(),
                error: task.error.clone()?,
            })
        })
        .collect();
    let message = if ok {
        format!("run {} done: {} branches stacked on {}", run.ws.run_id, stack.len(), run.manifest.base)
    } else {
        format!("run {} stopped: {} task(s) failed", run.ws.run_id, failures.len())
    };
    run.emit(Event::RunFinished { run_id: run.ws.run_id.clone(), ok, stack: stack.clone(), message });
    Ok(RunOutcome {
        run_id: run.ws.run_id.clone(),
        ok,
        stack,
        failures,
        logs: run.ws.layout.run_dir(&run.ws.run_id).join("logs"),
        main_worktree: run.ws.main_worktree(),
    })
}
