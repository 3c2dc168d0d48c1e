//! Agent backends: how a task's agent process is launched in its worktree.
//!
//! - `script`: the task's own `run` command, with `sh -c`;
//! - `command`: one command for every task, a shell string (`--agent-command`) or an argv from
//!   the plan with `{prompt_file}` replaced;
//! - `claude`: Claude Code in headless mode (`claude -p`), guarded through its settings;
//! - external: the agent runs elsewhere (a Claude Code subagent dispatched by `wt step`, one of
//!   the plugin's worker slots).

mod claude;
mod prompt;
mod worker;

use std::path::{Path, PathBuf};

pub use claude::{activity as claude_activity, settings as claude_settings};
pub use prompt::render_prompt;
pub use worker::{GUARDED_TOOLS, WORKER_SLOTS, parse_worker_type, worker_type};

use crate::plan::Task;
use crate::process::Cmd;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Agent {
    Script,
    Shell(String),
    Argv(Vec<String>),
    /// Claude Code (`claude -p`), this binary.
    Claude(PathBuf),
    /// Dispatched by an orchestrator (`wt step`): wt starts no process.
    External,
}

/// What an agent is told about its task, also exported as `WT_*` variables.
pub struct TaskContext<'a> {
    pub run_id: &'a str,
    pub task: &'a Task,
    pub worktree: &'a Path,
    pub prompt_file: &'a Path,
}

impl Agent {
    /// The process that does `task`, run in its worktree with the `WT_*` variables set; None
    /// when the agent runs elsewhere. `prompt` is the task prompt's text and `settings` the
    /// Claude Code settings file that registers the guard (both for the claude agent).
    pub fn command(&self, context: &TaskContext<'_>, prompt: &str, settings: &Path) -> Option<Cmd> {
        let prompt_file = context.prompt_file.to_string_lossy();
        let cmd = match self {
            Agent::Script => Cmd::new("sh").arg("-c").arg(context.task.run.as_deref().unwrap_or("")),
            Agent::Shell(shell) => Cmd::new("sh").arg("-c").arg(shell),
            Agent::Argv(argv) => {
                let mut words = argv.iter().map(|word| word.replace("{prompt_file}", &prompt_file));
                let program = words.next().unwrap_or_default();
                Cmd::new(program).args(words)
            }
            Agent::Claude(binary) => Cmd::new(binary)
                .arg("-p")
                .arg(prompt)
                .args([
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--permission-mode",
                    "default",
                    "--settings",
                ])
                .arg(settings),
            Agent::External => return None,
        };
        Some(with_task_env(cmd, context).outlive_wt())
    }
}

/// Sets the `WT_*` variables every agent and verify command gets.
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
