//! The Claude Code subagent generated for each task: `.claude/agents/wt-<runId>-task-<p>-<t>.md`
//! in the main checkout (ignored through info/exclude). Its frontmatter registers the guard for
//! this worktree (a second layer: the plugin's settings-level hook is the one `claude -p`
//! honours), and its body tells the agent where it works and what the engine does for it.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::plan::{Task, TaskId};

/// The tools whose calls the guard checks.
pub const GUARDED_TOOLS: &str = "Edit|Write|MultiEdit|NotebookEdit|Bash";

pub struct AgentFile<'a> {
    pub run_id: &'a str,
    pub feature: Option<&'a str>,
    pub task: &'a Task,
    pub worktree: &'a Path,
    /// The `wt` binary the hook runs (absolute, so the hook works without PATH).
    pub wt: &'a Path,
    /// The run's guard rules.
    pub rules: &'a Path,
}

/// `wt-<runId>-task-<p>-<t>`: the subagent type the orchestrator dispatches.
pub fn agent_name(run_id: &str, task: TaskId) -> String {
    format!("wt-{run_id}-{}", task.key())
}

/// The run id and task a `wt-<runId>-task-<p>-<t>` name stands for; None for any other name.
pub fn parse_agent_name(name: &str) -> Option<(&str, TaskId)> {
    let (run_id, task) = name.strip_prefix("wt-")?.split_once("-task-")?;
    let (phase, task) = task.split_once('-')?;
    let positive = |s: &str| s.chars().all(|c| c.is_ascii_digit()).then(|| s.parse::<usize>().ok()).flatten();
    let id = TaskId { phase: positive(phase).filter(|n| *n > 0)?, task: positive(task).filter(|n| *n > 0)? };
    crate::plan::run_id::is_valid(run_id).then_some((run_id, id))
}

pub fn agent_path(repo_root: &Path, run_id: &str, task: TaskId) -> PathBuf {
    repo_root.join(".claude").join("agents").join(format!("{}.md", agent_name(run_id, task)))
}

impl AgentFile<'_> {
    pub fn render(&self) -> String {
        let task = self.task;
        let name = agent_name(self.run_id, task.id);
        let worktree = self.worktree.display().to_string();
        let hook = format!(
            "{} guard --root {} --branch {} --rules {}",
            shell_quote(&self.wt.display().to_string()),
            shell_quote(&worktree),
            shell_quote(&task.branch),
            shell_quote(&self.rules.display().to_string())
        );
        let description = format!(
            "Task {} of wt run {}: {}. Works only inside {worktree} on branch {}.",
            task.id, self.run_id, task.name, task.branch
        );
        let mut text = String::new();
        let _ = writeln!(text, "---");
        let _ = writeln!(text, "name: {name}");
        let _ = writeln!(text, "description: {}", yaml_string(&description));
        let _ = writeln!(text, "tools: Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, Bash");
        let _ = writeln!(text, "skills:\n  - worktree-worker");
        let _ = writeln!(text, "hooks:\n  PreToolUse:\n    - matcher: {}", yaml_string(GUARDED_TOOLS));
        let _ = writeln!(
            text,
            "      hooks:\n        - type: command\n          command: {}",
            yaml_string(&hook)
        );
        let _ = writeln!(text, "          timeout: 10");
        let _ = writeln!(text, "---\n");
        let _ = writeln!(text, "You are the worker for task {} of the wt run {}.\n", task.id, self.run_id);
        let _ = writeln!(text, "- Worktree: `{worktree}` (absolute path; work only inside it)");
        let _ = writeln!(text, "- Branch: `{}` (already checked out there)", task.branch);
        if let Some(feature) = self.feature {
            let _ = writeln!(text, "- Feature: {feature}");
        }
        let _ = writeln!(text, "\n## Rules\n");
        let _ = writeln!(
            text,
            "1. Start every Bash command with `cd {worktree} && `: your shell starts elsewhere."
        );
        let _ = writeln!(
            text,
            "2. Create and edit files only inside the worktree, with absolute paths under it."
        );
        let _ = writeln!(
            text,
            "3. Commit your work on this branch (`git add -A && git commit -m …`), or leave it"
        );
        let _ =
            writeln!(text, "   uncommitted: wt commits what is left as `[Task {}] {}`.", task.id, task.name);
        let _ = writeln!(
            text,
            "4. Never push, pull, fetch, switch or create branches, rebase, or run git-spice:"
        );
        let _ = writeln!(
            text,
            "   the engine stacks the branches and submits them. A guard refuses those calls."
        );
        let _ = writeln!(text, "5. When done, report what you changed and how you checked it.\n");
        let _ = writeln!(text, "## Task {}: {}\n", task.id, task.name);
        if !task.prompt.trim().is_empty() {
            let _ = writeln!(text, "{}\n", task.prompt.trim());
        }
        list(&mut text, "Files", task.files.iter().map(|f| format!("`{f}`")));
        list(&mut text, "Acceptance criteria", task.acceptance.iter().cloned());
        if let Some(verify) = &task.verify {
            let _ =
                writeln!(text, "## Verification\n\nAfter you finish, wt runs `{verify}` in the worktree.");
        }
        text
    }
}

fn list(text: &mut String, title: &str, items: impl Iterator<Item = String>) {
    let items: Vec<String> = items.collect();
    if !items.is_empty() {
        let _ = writeln!(text, "## {title}\n");
        for item in items {
            let _ = writeln!(text, "- {item}");
        }
        text.push('\n');
    }
}

/// A YAML double-quoted scalar.
fn yaml_string(text: &str) -> String {
    let escaped: String = text
        .chars()
        .map(|c| match c {
            '"' => "\\\"".to_owned(),
            '\\' => "\\\\".to_owned(),
            '\n' => "\\n".to_owned(),
            c if c.is_control() => format!("\\u{:04x}", c as u32),
            c => c.to_string(),
        })
        .collect();
    format!("\"{escaped}\"")
}

/// A POSIX shell single-quoted word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::Location;

    #[test]
    fn agent_names_round_trip() {
        let id = TaskId { phase: 2, task: 10 };
        assert_eq!(parse_agent_name(&agent_name("a1b2c3", id)), Some(("a1b2c3", id)));
        for other in [
            "general-purpose",
            "wt-a1b2c3-task-2",
            "wt-XYZ123-task-1-1",
            "wt-a1b2c3-task-1-x",
            "wt-a1b2c3-task-0-1",
        ] {
            assert_eq!(parse_agent_name(other), None, "{other}");
        }
    }

    #[test]
    fn frontmatter_names_the_agent_and_registers_the_guard() {
        let task = Task {
            id: TaskId { phase: 2, task: 1 },
            name: "Add \"quotes\" and 'apostrophes'".into(),
            slug: "add-quotes-and-apostrophes".into(),
            branch: "a1b2c3-task-2-1-add-quotes-and-apostrophes".into(),
            prompt: "Do it.".into(),
            files: vec!["src/a.rs".into()],
            acceptance: vec!["works".into()],
            verify: Some("cargo test".into()),
            run: None,
            allow_empty: false,
            timeout: None,
            location: Location { file: "p".into(), line: 1, column: 1 },
        };
        let file = AgentFile {
            run_id: "a1b2c3",
            feature: None,
            task: &task,
            worktree: Path::new("/r/.worktrees/it's here"),
            wt: Path::new("/usr/bin/wt"),
            rules: Path::new("/r/.git/spectacular/runs/a1b2c3/guard.toml"),
        };
        let text = file.render();
        assert!(text.starts_with(
            "---\nname: wt-a1b2c3-task-2-1\ndescription: \"Task 2.1 of wt run a1b2c3: Add \\\"quotes\\\""
        ));
        assert!(text.contains(r#"command: "'/usr/bin/wt' guard --root '/r/.worktrees/it'\\''s here' --branch 'a1b2c3-task-2-1-add-quotes-and-apostrophes' --rules '/r/.git/spectacular/runs/a1b2c3/guard.toml'""#), "{text}");
        assert!(text.contains("matcher: \"Edit|Write|MultiEdit|NotebookEdit|Bash\""));
        assert!(text.contains("  - worktree-worker"));
        assert!(text.contains("Start every Bash command with `cd /r/.worktrees/it's here && `"));
    }
}
