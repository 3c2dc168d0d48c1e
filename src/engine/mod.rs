//! The run engine: prepare a run, then drive its phases (sequential in the main worktree,
//! parallel in task worktrees, then stacked), then check the stack. Every state change is
//! recorded in the run manifest before the next step, so running the plan again picks up where
//! it stopped. `wt run` drives the phase loop with its own agents; the plugin (`wt step`)
//! drives the same loop with an orchestrator's subagents.

mod base;
mod cleanup;
mod error;
mod event;
mod integrity;
mod journal;
mod linearize;
mod local;
mod parallel;
mod phases;
mod placement;
pub mod pool;
mod prepare;
mod reconcile;
mod records;
mod run;
mod seed;
mod sequential;
mod stack;
mod submit;
mod task;
mod transcript;
mod workspace;
mod worktrees;

use std::path::PathBuf;

pub use base::resolve_base;
pub use cleanup::{CleanupReport, CleanupRequest, cleanup, cleanup_pool};
pub use error::{EngineError, ErrorKind};
pub use event::{Event, EventSink, StackEntry};
pub use integrity::watch_command;
pub use phases::{Driven, PhaseDriver, PhaseEnd, RunOutcome, drive};
pub use placement::{has_work, place_in_main, place_in_own_worktree};
pub use prepare::prepare;
pub use run::{Run, load_run, lock_run};
pub use submit::{SubmitRequest, SubmittedBranch, submit};
pub use task::{Setup, TaskOutcome, finish_task, recorded_watch, run_owed_setup, take_back, watch};
pub use workspace::WORKTREES_DIR;

use crate::plan::Plan;
pub use crate::store::Overrides;

/// What `wt run` and `wt step` ask for: the plan, where to run it, and command-line overrides.
pub struct RunRequest {
    pub plan: Plan,
    pub cwd: PathBuf,
    /// Agent and parallelism flags; a resume without them keeps the run's earlier ones.
    pub overrides: Overrides,
    pub base: Option<String>,
    /// Go on with a plan that changed since the run started.
    pub force_plan: bool,
    pub agents: Agents,
}

/// Who does the tasks' work.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agents {
    /// wt starts each task's agent (`wt run`).
    Started,
    /// An orchestrator dispatches them as its subagents (`wt step`); wt starts none.
    Dispatched,
}

/// `wt run`: prepares the run and drives it to its end with wt's own agents.
pub fn run(request: RunRequest, sink: &dyn EventSink) -> Result<RunOutcome, EngineError> {
    let mut run = prepare(RunRequest { agents: Agents::Started, ..request }, sink)?;
    // An invariant, not an input: prepare resolves a backend whenever agents are Started.
    let agent = run.ws.agent.clone().expect("prepare resolves an agent for Agents::Started");
    match drive(&mut run, &mut local::LocalAgents { agent })? {
        Driven::Finished(outcome) => Ok(outcome),
        Driven::Paused(never) => match never {},
    }
}
