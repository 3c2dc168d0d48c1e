use std::fmt::Write;
use std::path::Path;

use super::rules::worker_rules;
use crate::plan::Task;

/// The full task prompt written to `WT_PROMPT_FILE`: what to do, where, and how it is judged.
pub fn render_prompt(feature: Option<&str>, task: &Task, worktree: &Path) -> String {
    let mut text = format!("# Task {}: {}\n\n", task.id, task.name);
    if let Some(feature) = feature {
        let _ = writeln!(text, "Feature: {feature}\n");
    }
    let root = worktree.display().to_string();
    let _ = writeln!(text, "Work only inside {root} (branch `{}`).\n", task.branch);
    if !task.prompt.trim().is_empty() {
        let _ = writeln!(text, "{}\n", task.prompt.trim());
    }
    section(&mut text, "Files", task.files.iter().map(|f| format!("`{f}`")));
    section(&mut text, "Acceptance criteria", task.acceptance.iter().cloned());
    if let Some(verify) = &task.verify {
        let _ = writeln!(text, "## Verification\n\nAfter you finish, wt runs: `{verify}`\n");
    }
    section(&mut text, "Rules", worker_rules(&root, &format!("`{}`", task.branch)).into_iter());
    text
}

fn section(text: &mut String, title: &str, items: impl Iterator<Item = String>) {
    let items: Vec<String> = items.collect();
    if items.is_empty() {
        return;
    }
    let _ = writeln!(text, "## {title}\n");
    for item in items {
        let _ = writeln!(text, "- {item}");
    }
    text.push('\n');
}
