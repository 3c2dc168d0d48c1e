//! The Claude Code backend of `wt run`: `claude -p` in the task's worktree with a settings file
//! that registers the guard, its `stream-json` output kept as the task's transcript and read
//! for what the agent is doing now.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::{Backend, Launch, TaskContext, with_task_env};
use crate::guard::GUARDED_TOOLS;
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
        let text = settings(task.wt_exe, task.worktree, &task.task.branch, &rules, task.contained);
        crate::store::write_atomic(&settings_file, text.as_bytes())?;
        let cmd = Cmd::new(&self.binary)
            .arg("-p")
            .arg(task.prompt)
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

/// The `--settings` file for one task: the guard for its worktree as a PreToolUse hook (the
/// level at which hooks fire under `claude -p`). Its `allow` decisions are what let honest work
/// run without prompts; everything it denies stays denied. `contained`: the agent runs inside
/// `wt sandbox`, so the guard may allow what it cannot follow.
fn settings(wt: &Path, worktree: &Path, branch: &str, rules: &Path, contained: bool) -> String {
    let quote = |text: &str| format!("'{}'", text.replace('\'', r"'\''"));
    let command = format!(
        "{} guard --root {} --branch {} --rules {}{}",
        quote(&wt.display().to_string()),
        quote(&worktree.display().to_string()),
        quote(branch),
        quote(&rules.display().to_string()),
        if contained { " --contained" } else { "" }
    );
    let settings = json!({
        "hooks": {
            "PreToolUse": [{
                "matcher": GUARDED_TOOLS,
                "hooks": [{ "type": "command", "command": command, "timeout": 10 }]
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
        let text = settings(Path::new("/bin/wt"), Path::new("/r/wt"), "b", Path::new("/r/rules.toml"), true);
        let value: Value = serde_json::from_str(&text).unwrap();
        let hook = &value["hooks"]["PreToolUse"][0];
        assert_eq!(hook["matcher"], GUARDED_TOOLS);
        assert_eq!(
            hook["hooks"][0]["command"],
            "'/bin/wt' guard --root '/r/wt' --branch 'b' --rules '/r/rules.toml' --contained"
        );
    }
}
