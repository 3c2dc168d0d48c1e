//! The run state machine: prepare, then each phase (sequential in the main worktree, parallel in
//! task worktrees then linearized), then the final stack check. Every state change is recorded in
//! the run manifest before the next step, so running the plan again picks up where it stopped.

mod cleanup;
mod error;
mod event;
mod gate;
mod journal;
mod linearize;
mod parallel;
mod prepare;
mod reconcile;
mod run;
mod sequential;
mod stack;
mod step;
mod submit;
mod task;
mod workspace;

use std::path::PathBuf;

pub use cleanup::{CleanupReport, CleanupRequest, cleanup};
pub use error::EngineError;
pub use event::{Activity, Event, EventSink, StackEntry};
pub use gate::{refusal as gate_refusal, worker_name};
pub use prepare::{EXCLUDES, resolve_base};
pub use step::{Dispatch, PhaseInfo, StepOutcome, StepStatus, step};
pub use submit::{SubmitRequest, SubmittedBranch, submit};
pub use workspace::{WORKTREES_DIR, main_worktree_path};

use crate::plan::{Plan, Strategy};
pub use crate::store::Overrides;
use crate::store::{PhaseState, RunState};
use run::Run;

/// What `wt run` asks for: the plan, where to run it, and command-line overrides.
pub struct RunRequest {
    pub plan: Plan,
    pub cwd: PathBuf,
    /// Agent and parallelism flags; a resume without them keeps the run's earlier ones.
    pub overrides: Overrides,
    pub base: Option<String>,
    /// Go on with a plan that changed since the run started.
    pub force_plan: bool,
    /// The agents are dispatched by an orchestrator (`wt step`), not started by wt.
    pub external_agents: bool,
}

#[derive(Debug, Clone)]
pub struct RunOutcome {
    pub run_id: String,
    pub ok: bool,
    pub stack: Vec<StackEntry>,
    /// `(task number, name, error)` of each failed task.
    pub failures: Vec<(String, String, String)>,
    pub logs: PathBuf,
    pub main_worktree: PathBuf,
}

pub fn run(request: RunRequest, sink: &dyn EventSink) -> Result<RunOutcome, EngineError> {
    let (mut run, resumed) = prepare::prepare(request, sink)?;
    run.emit(Event::RunStarted {
        run_id: run.ws.run_id.clone(),
        base: run.manifest.base.clone(),
        main_worktree: run.ws.main_worktree(),
        resumed,
    });
    let mut below = run.manifest.base.clone();
    let phases = run.plan.phases.clone();
    // Whether a phase ran in this invocation: the phases done before it may then sit on a top
    // that moved (a changed plan, a task whose branch was deleted) and must follow it.
    let mut moved = false;
    let mut checked_through = 0;
    for phase in &phases {
        let last_branch = phase.tasks.last().map(|task| task.branch.clone()).unwrap_or_default();
        let state = run.manifest.phases[phase.number - 1].state;
        if state == PhaseState::Done {
            if moved {
                reanchor(&run, phase, &below)?;
            }
            below = last_branch;
            continue;
        }
        moved = true;
        if let Some(record) = run.manifest.phase_mut(phase.number) {
            record.state = PhaseState::Running;
            record.base_branch = Some(below.clone());
        }
        run.save()?;
        run.emit(Event::PhaseStarted {
            phase: phase.number,
            name: phase.name.clone(),
            strategy: phase.strategy,
            tasks: phase.tasks.len(),
        });
        let ok = match phase.strategy {
            Strategy::Sequential => sequential::run_sequential_phase(&mut run, phase, &below)?,
            Strategy::Parallel => {
                let ok = parallel::run_parallel_phase(&mut run, phase, &below)?;
                if ok {
                    linearize::linearize_phase(&mut run, phase, &below)?;
                    checked_through = phase.number;
                }
                ok
            }
        };
        let state = if ok { PhaseState::Done } else { PhaseState::Failed };
        if let Some(record) = run.manifest.phase_mut(phase.number) {
            record.state = state;
        }
        run.save()?;
        run.emit(Event::PhaseFinished { phase: phase.number, ok });
        if !ok {
            return finish(&mut run, false);
        }
        below = last_branch;
    }
    check_out_top(&run, &below)?;
    // A parallel last phase was checked as it was linearized; otherwise check the whole stack now.
    if checked_through != phases.len() {
        check_stack_through(&run, phases.len())?;
    }
    finish(&mut run, true)
}

/// Moves a finished phase (and everything above it) onto the new top of the phase below.
fn reanchor(run: &Run, phase: &crate::plan::Phase, below: &str) -> Result<(), EngineError> {
    let Some(first) = phase.tasks.first() else { return Ok(()) };
    let _repo_lock = run.ws.repo_lock()?;
    let main = run.ws.main_worktree();
    run.ws
        .journal
        .step("reanchor", &first.branch, || Ok(run.ws.spice.upstack_onto(&main, &first.branch, below)?))?;
    run.emit(Event::Notice { message: format!("moved phase {} onto {below}, which changed", phase.number) });
    Ok(())
}

/// Leaves the main worktree on the top of the stack.
fn check_out_top(run: &Run, top: &str) -> Result<(), EngineError> {
    let main = run.ws.main_worktree();
    if crate::git::current_branch(&main)?.as_deref() == Some(top) {
        return Ok(());
    }
    let _repo_lock = run.ws.repo_lock()?;
    run.ws.journal.step("checkout-top", top, || Ok(crate::git::switch(&main, top)?))
}

/// Checks that the stack from the base through `phase`'s last task is linear in plan order
/// (one `git-spice log` call covers the whole chain).
pub(super) fn check_stack_through(run: &Run, phase: usize) -> Result<(), EngineError> {
    let branches = run.plan.phases.iter().take(phase).flat_map(|p| &p.tasks).map(|t| t.branch.as_str());
    let chain = std::iter::once(run.manifest.base.as_str()).chain(branches);
    stack::check_linear(&run.ws, phase, chain)
}

pub(super) fn finish(run: &mut Run, ok: bool) -> Result<RunOutcome, EngineError> {
    run.ws.journal.crash_point("finish", &run.ws.run_id, false);
    run.manifest.state = if ok { RunState::Done } else { RunState::Failed };
    run.save()?;
    let stack = stack::stack_entries(&run.ws, &run.plan, &run.manifest.base)?;
    let failures: Vec<(String, String, String)> = run
        .manifest
        .phases
        .iter()
        .flat_map(|phase| &phase.tasks)
        .filter_map(|task| Some((task.number.clone(), task.name.clone(), task.error.clone()?)))
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
