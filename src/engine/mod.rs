//! The run state machine: prepare, then each phase (sequential in the main worktree, parallel in
//! task worktrees then linearized), then the final stack check. Every state change is recorded in
//! the run manifest before the next step, so running the plan again picks up where it stopped.

mod error;
mod event;
mod linearize;
mod parallel;
mod prepare;
mod run;
mod sequential;
mod stack;
mod task;
mod workspace;

use std::path::PathBuf;

pub use error::EngineError;
pub use event::{Activity, Event, EventSink, StackEntry};
pub use prepare::EXCLUDES;
pub use workspace::{WORKTREES_DIR, main_worktree_path};

use crate::plan::{AgentKind, Plan, Strategy};
use crate::store::{PhaseState, RunState};
use run::Run;

/// What `wt run` asks for: the plan, where to run it, and command-line overrides.
pub struct RunRequest {
    pub plan: Plan,
    pub cwd: PathBuf,
    pub agent_kind: Option<AgentKind>,
    pub agent_command: Option<String>,
    pub max_parallel: Option<usize>,
    pub base: Option<String>,
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
    let resumed_done = run.manifest.phases.iter().all(|phase| phase.state == PhaseState::Done);
    for phase in &phases {
        let last_branch = phase.tasks.last().map(|task| task.branch.clone()).unwrap_or_default();
        let state = run.manifest.phases[phase.number - 1].state;
        if state == PhaseState::Done {
            below = last_branch;
            continue;
        }
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
    // A parallel last phase was checked as it was linearized; otherwise check the whole stack now.
    if phases.last().is_some_and(|phase| phase.strategy == Strategy::Sequential) || resumed_done {
        check_stack_through(&run, phases.len())?;
    }
    finish(&mut run, true)
}

/// Checks that the stack from the base through `phase`'s last task is linear in plan order
/// (one `git-spice log` call covers the whole chain).
fn check_stack_through(run: &Run, phase: usize) -> Result<(), EngineError> {
    let branches = run.plan.phases.iter().take(phase).flat_map(|p| &p.tasks).map(|t| t.branch.as_str());
    let chain = std::iter::once(run.manifest.base.as_str()).chain(branches);
    stack::check_linear(&run.ws, phase, chain)
}

fn finish(run: &mut Run, ok: bool) -> Result<RunOutcome, EngineError> {
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
