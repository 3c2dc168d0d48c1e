//! The plain backends: a shell command per task (`script`) or one command for every task
//! (`command`). Their output goes to the task's log.

use super::{Backend, Launch, TaskContext, with_task_env};
use crate::process::Cmd;

/// Each task's own `run` command.
#[derive(Debug)]
pub struct Script;

/// `--agent-command '<shell>'`.
#[derive(Debug)]
pub struct CommandLine(pub String);

/// `[agent] command = [...]`, `{prompt_file}` replaced in every word.
#[derive(Debug)]
pub struct CommandArgv(pub Vec<String>);

impl Backend for Script {
    fn launch(&self, task: &TaskContext<'_>) -> std::io::Result<Launch> {
        let run = task.task.run.as_deref().unwrap_or("");
        Ok(logged(Cmd::new("sh").arg("-c").arg(run), task))
    }
}

impl Backend for CommandLine {
    fn launch(&self, task: &TaskContext<'_>) -> std::io::Result<Launch> {
        Ok(logged(Cmd::new("sh").arg("-c").arg(&self.0), task))
    }
}

impl Backend for CommandArgv {
    fn launch(&self, task: &TaskContext<'_>) -> std::io::Result<Launch> {
        let prompt_file = task.prompt_file.to_string_lossy();
        let mut words = self.0.iter().map(|word| word.replace("{prompt_file}", &prompt_file));
        let program = words.next().unwrap_or_default();
        Ok(logged(Cmd::new(program).args(words), task))
    }
}

fn logged(cmd: Cmd, task: &TaskContext<'_>) -> Launch {
    Launch { cmd: with_task_env(cmd, task).outlive_wt(), stdout: task.log() }
}
