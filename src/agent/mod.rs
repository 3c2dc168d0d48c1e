//! Agent backends: how a task's agent process is launched in its worktree, and what its output
//! says it is doing. Each backend is one type behind [`Backend`]; [`resolve`] is the one place
//! that chooses among them.
//!
//! - `script`: the task's own `run` command, with `sh -c`;
//! - `command`: one command for every task, a shell string (`--agent-command`) or an argv from
//!   the plan with `{prompt_file}` replaced;
//! - `claude`: Claude Code in headless mode (`claude -p`), guarded through its settings.
//!
//! Runs driven by an orchestrator (`wt step`) have no backend: the agents are its subagents.

mod claude;
pub mod definition;
mod prompt;
mod rules;
mod shell;

use std::fmt;
use std::path::Path;
use std::sync::Arc;

pub use prompt::render_prompt;
pub use rules::team_worker_rules;
#[cfg(test)]
pub use rules::worker_rules;

use crate::plan::{AgentKind, Located, Plan, PlanError, Task, check_agent_kind, missing_command};
use crate::process::Cmd;
use crate::store::StateLayout;

/// One way of running a task's agent.
pub trait Backend: fmt::Debug + Send + Sync {
    /// The agent process for a task, with the `WT_*` variables set and the worktree as its
    /// folder. May first write files the process reads (Claude Code's settings).
    fn launch(&self, task: &TaskContext<'_>) -> std::io::Result<Launch>;

    /// What one line of the agent's output says it is doing now, for the live display.
    fn activity(&self, _line: &str) -> Option<String> {
        None
    }

    /// Whether the agent itself must reach the network (a model's API), so that a sandbox
    /// without network cannot hold it.
    fn needs_network(&self) -> bool {
        false
    }
}

/// The chosen backend, shared by the workers of a parallel phase.
pub type Agent = Arc<dyn Backend>;

/// An agent process ready to start.
pub struct Launch {
    pub cmd: Cmd,
    /// Where its standard output goes (stderr always goes to the task's log): the log itself, or
    /// a transcript that [`Backend::activity`] reads line by line.
    pub stdout: std::path::PathBuf,
}

/// What an agent is told about its task, also exported as `WT_*` variables.
pub struct TaskContext<'a> {
    pub run_id: &'a str,
    pub task: &'a Task,
    pub worktree: &'a Path,
    pub prompt_file: &'a Path,
    /// The text of `prompt_file`.
    pub prompt: &'a str,
    /// The run's state, where a backend keeps its own files.
    pub layout: &'a StateLayout,
    /// This `wt` binary, for hooks that call back into it.
    pub wt_exe: &'a Path,
    /// Whether the agent's process runs inside `wt sandbox` (the kernel contains its writes).
    pub contained: bool,
}

impl TaskContext<'_> {
    /// The task's log, where every agent's stderr goes.
    pub fn log(&self) -> std::path::PathBuf {
        self.layout.task_log(self.run_id, self.task.id)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ResolveError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error("the agent is Claude Code, but `claude` is not on PATH")]
    ClaudeUnavailable,
}

/// The backend for `plan`: `--agent` (`cli_kind`), else the plan's kind, else `command` when a
/// command was given, else `script` when every task has a `run`, else Claude Code.
pub fn resolve(
    plan: &Plan,
    cli_kind: Option<AgentKind>,
    cli_command: Option<String>,
) -> Result<Agent, ResolveError> {
    let kind = match (cli_kind, &plan.agent.kind, &cli_command) {
        (Some(kind), _, _) => kind,
        (None, Some(kind), _) => kind.value,
        (None, None, Some(_)) => AgentKind::Command,
        (None, None, None) if plan.tasks().all(|task| task.run.is_some()) => AgentKind::Script,
        (None, None, None) => AgentKind::Claude,
    };
    let location = plan.agent.kind.as_ref().map(|k| k.location.clone());
    let location = location.unwrap_or_else(|| plan.phases[0].location.clone());
    Ok(match kind {
        AgentKind::Script => {
            check_agent_kind(plan, &Located { value: kind, location })?;
            Arc::new(shell::Script)
        }
        AgentKind::Command => match (cli_command, &plan.agent.command) {
            (Some(line), _) => Arc::new(shell::CommandLine(line)),
            (None, Some(argv)) => Arc::new(shell::CommandArgv(argv.clone())),
            (None, None) => return Err(missing_command(location).into()),
        },
        AgentKind::Claude => match which::which("claude") {
            Ok(binary) => Arc::new(claude::ClaudeCode { binary }),
            Err(_) => return Err(ResolveError::ClaudeUnavailable),
        },
    })
}

/// Sets the `WT_*` variables every agent and verify command gets, and the task's worktree as the
/// folder it runs in.
pub fn with_task_env(cmd: Cmd, context: &TaskContext<'_>) -> Cmd {
    let task = context.task;
    cmd.dir(context.worktree)
        .env("WT_RUN_ID", context.run_id)
        .env("WT_PHASE", task.id.phase.to_string())
        .env("WT_TASK", task.id.to_string())
        .env("WT_TASK_NAME", &task.name)
        .env("WT_WORKTREE", context.worktree)
        .env("WT_BRANCH", &task.branch)
        .env("WT_PROMPT_FILE", context.prompt_file)
}
