//! The Claude Code backend of `wt run`: `claude -p --agent wt-<runId>-task-P-T` in the task's
//! worktree, with that agent's definition generated there (`agent::definition`: the worktree,
//! the branch, the worker rules, the tools) and a settings file that registers the guard; its
//! `stream-json` output kept as the task's transcript and read for what the agent is doing now.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::definition::{self, AgentSpec};
use super::rules::worker_rules;
use super::{Backend, Launch, TaskContext, with_task_env};
use crate::guard::{GUARDED_TOOLS, quote};
use crate::process::Cmd;

#[derive(Debug)]
pub struct ClaudeCode {
    pub binary: PathBuf,
}

impl Backend for ClaudeCode {
    fn launch(&self, task: &TaskContext<'_>) -> std::io::Result<Launch> {
        let (run_id, id) = (task.run_id, task.task.id);
        let settings_file = task.layout.claude_settings(run_id, id);
        let rules = task.layout.guard_rules(run_id);
        let guard = guard_command(task.wt_exe, task.worktree, &task.task.branch, &rules, task.contained);
        crate::store::write_atomic(&settings_file, settings(&guard).as_bytes())?;
        // Claude Code finds `--agent <name>` in the worktree's `.claude/agents/` (ignored by git
        // through info/exclude); it goes with the worktree.
        let agent = task_agent(task, guard);
        definition::write(&task.worktree.join(".claude/agents").join(format!("{}.md", agent.name)), &agent)?;
        let cmd = Cmd::new(&self.binary)
            .arg("-p")
            .arg(task.prompt)
            .args(["--agent", &agent.name])
            .args([
                "--output-format",
                "stream-json",
                "--verbose",
                "--permission-mode",
                "default",
                "--settings",
            ])
            .arg(&settings_file);
        let stdout = task.layout.transcript(run_id, id);
        Ok(Launch { cmd: with_task_env(cmd, task).outlive_wt(), stdout })
    }

    fn activity(&self, line: &str) -> Option<String> {
        activity(line)
    }

    fn needs_network(&self) -> bool {
        true
    }
}

/// The task's generated agent, `wt-<runId>-task-P-T`: its body replaces Claude Code's system
/// prompt, so it says where the agent works and the rules; the task itself is the prompt.
fn task_agent(task: &TaskContext<'_>, guard: String) -> AgentSpec {
    let (run_id, id) = (task.run_id, task.task.id);
    let root = task.worktree.display().to_string();
    let branch = &task.task.branch;
    AgentSpec {
        name: format!("wt-{run_id}-{}", id.key()),
        description: format!("The agent of task {id} ({}) of wt run {run_id}, in {root}", task.task.name),
        guard,
        origin: format!("`wt run` made it for task {id} of run {run_id}; it goes with the worktree"),
        intro: format!(
            "You are the agent of task {id} ({}) of wt run {run_id}. You work in the git worktree {root} on \
             branch `{branch}`, which is already checked out there. The task is the message you are given; wt \
             commits what you leave, checks it and stacks the branches.",
            task.task.name
        ),
        rules: worker_rules(&root, branch),
        commands: Vec::new(),
    }
}

/// The guard for one task's worktree, as a hook's command line. `contained`: the agent runs
/// inside `wt sandbox`, so the guard may allow what it cannot follow.
fn guard_command(wt: &Path, worktree: &Path, branch: &str, rules: &Path, contained: bool) -> String {
    format!(
        "{} guard --root {} --branch {} --rules {}{}",
        quote(&wt.display().to_string()),
        quote(&worktree.display().to_string()),
        quote(branch),
        quote(&rules.display().to_string()),
        if contained { " --contained" } else { "" }
    )
}

/// The `--settings` file for one task: the guard `command` as a PreToolUse hook (the level at
/// which hooks fire under `claude -p`). Its `allow` decisions are what let honest work run
/// without prompts; everything it denies stays denied.
fn settings(command: &str) -> String {
    let settings = json!({
        "hooks": {
            "PreToolUse": [{
                "matcher": GUARDED_TOOLS,
                "hooks": [{ "type": "command", "command": command, "timeout": 10, "onFailure": "block" }]
            }]
        }
    });
    serde_json::to_string_pretty(&settings).unwrap_or_default()
}

/// What a `stream-json` line says the agent is doing, for the live display.
fn activity(line: &str) -> Option<String> {
    let event: Value = serde_json::from_str(line).ok()?;
    if event["type"] != "assistant" {
        return None;
    }
    let blocks = event["message"]["content"].as_array()?;
    let call = blocks.iter().rev().find(|b| b["type"] == "tool_use")?;
    let name = call["name"].as_str().unwrap_or("tool");
    let input = &call["input"];
    let detail = ["command", "file_path", "notebook_path", "pattern", "description"]
        .iter()
        .find_map(|key| input[*key].as_str())
        .unwrap_or("");
    let detail: String = detail.lines().next().unwrap_or("").chars().take(60).collect();
    Some(if detail.is_empty() { name.to_owned() } else { format!("{name}: {detail}") })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_calls_become_activity_lines() {
        let line = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"x"},{"type":"tool_use","name":"Bash","input":{"command":"cargo test --all\nmore"}}]}}"#;
        assert_eq!(activity(line).as_deref(), Some("Bash: cargo test --all"));
        assert_eq!(activity(r#"{"type":"user"}"#), None);
        assert_eq!(activity("not json"), None);
    }

    #[test]
    fn settings_register_the_guard_for_the_worktree() {
        let command =
            guard_command(Path::new("/bin/wt"), Path::new("/r/wt"), "b", Path::new("/r/rules.toml"), true);
        let text = settings(&command);
        let value: Value = serde_json::from_str(&text).unwrap();
        let hook = &value["hooks"]["PreToolUse"][0];
        assert_eq!(hook["matcher"], GUARDED_TOOLS);
        assert_eq!(
            hook["hooks"][0]["command"],
            "'/bin/wt' guard --root '/r/wt' --branch 'b' --rules '/r/rules.toml' --contained"
        );
        assert_eq!(hook["hooks"][0]["onFailure"], "block", "a guard that fails blocks the call");
    }
}
