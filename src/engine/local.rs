//! `wt run`'s driver of the phase loop: wt starts every task's agent itself, sequential phases
//! in the main worktree and parallel ones in worktrees of their own.

use super::EngineError;
use super::parallel::run_parallel_phase;
use super::phases::{PhaseDriver, PhaseEnd};
use super::run::Run;
use super::sequential::run_sequential_phase;
use crate::agent::Agent;
use crate::plan::{Phase, Strategy};

pub struct LocalAgents {
    pub agent: Agent,
}

impl PhaseDriver for LocalAgents {
    /// wt's own agents never leave a phase half done: it ends verified or failed.
    type Pause = std::convert::Infallible;
    type Error = EngineError;

    fn run_phase(
        &mut self,
        run: &mut Run,
        phase: &Phase,
        below: &str,
    ) -> Result<PhaseEnd<Self::Pause>, EngineError> {
        let ok = match phase.strategy {
            Strategy::Sequential => run_sequential_phase(run, &self.agent, phase, below)?,
            Strategy::Parallel => run_parallel_phase(run, &self.agent, phase, below)?,
        };
        Ok(if ok { PhaseEnd::Done } else { PhaseEnd::Failed })
    }
}
