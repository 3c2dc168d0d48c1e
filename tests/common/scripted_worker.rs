//! The scripted worker the Claude Code tests play through the model server: four attempts to
//! leave its worktree that the guard denies, honest work inside it, and one attempt the guard's
//! policy lets through (it cannot see inside `python3 -c`) that the kernel sandbox stops. Used for `claude -p` tasks of `wt run` and for
//! the subagents `/spectacular:execute` dispatches (both get the task prompt wt wrote).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::model_server::{ModelServer, Turn, first_user_text, turn_index};

/// The worktree a task prompt names ("Work only inside <path> (branch …").
pub fn worktree_in(prompt: &str) -> Option<PathBuf> {
    let rest = &prompt[prompt.find("Work only inside ")? + "Work only inside ".len()..];
    Some(PathBuf::from(&rest[..rest.find(" (branch")?]))
}

/// The task number of a prompt ("# Task 2.1: …") as `2-1`.
pub fn task_in(prompt: &str) -> String {
    prompt.split("# Task ").nth(1).and_then(|rest| rest.split(':').next()).unwrap_or("x").replace('.', "-")
}

/// The worker's next turn, when `request` is a worker's conversation (its first message holds a
/// task prompt); None for any other conversation.
pub fn worker_turn(request: &Value, scratch: &Path) -> Option<Turn> {
    let prompt = first_user_text(request);
    let wt = worktree_in(&prompt)?;
    let task = task_in(&prompt);
    // A new file in the main checkout, reached through `..` (an existing one would first be
    // refused by Claude Code's own read-before-write rule, before any hook runs).
    let through_dotdot = wt.join(format!("../../escape-dotdot-{task}.txt"));
    let step = match turn_index(request) {
        0 => {
            ("Write", json!({"file_path": scratch.join(format!("escape-{task}.txt")), "content": "escaped"}))
        }
        1 => (
            "Bash",
            json!({"command": format!("cd / && echo x > {}", scratch.join(format!("cd-{task}.txt")).display())}),
        ),
        2 => ("Write", json!({"file_path": through_dotdot, "content": "escaped"})),
        3 => ("Bash", json!({"command": "git push origin HEAD"})),
        4 => ("Write", json!({"file_path": wt.join(format!("honest-{task}.txt")), "content": "honest"})),
        5 => ("Bash", json!({"command": format!("cd {} && echo bash > bash-{task}.txt", wt.display())})),
        6 => {
            let target = main_checkout(&wt).join(format!("kernel-{task}.txt"));
            let code = format!("open('{}', 'w').write('escaped')", target.display());
            ("Bash", json!({"command": format!("cd {} && python3 -c \"{code}\"", wt.display())}))
        }
        _ => return Some(Turn::Text(format!("task {task} done"))),
    };
    Some(Turn::Tools(vec![(step.0.to_owned(), step.1)]))
}

/// How many calls each worker makes that the guard must deny, that it must let through, and that
/// it lets through for the kernel to stop.
pub const ESCAPES: usize = 4;
pub const HONEST: usize = 2;
pub const KERNEL_ESCAPES: usize = 1;

/// The text of a tool result for the kernel's refusal of the python write.
pub const KERNEL_REFUSAL: &str = "PermissionError";

/// `<repo>/.worktrees/<name>` → `<repo>`.
fn main_checkout(worktree: &Path) -> PathBuf {
    worktree.parent().and_then(Path::parent).map(Path::to_owned).unwrap_or_default()
}

/// The environment that points the real client at `server`, offline.
pub fn client_env(server: &ModelServer) -> Vec<(&'static str, String)> {
    [
        ("ANTHROPIC_BASE_URL", server.url.as_str()),
        ("ANTHROPIC_API_KEY", "test-key"),
        ("DISABLE_TELEMETRY", "1"),
        ("DISABLE_AUTOUPDATER", "1"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
    ]
    .into_iter()
    .map(|(k, v)| (k, v.to_owned()))
    .collect()
}
