//! The guard: the policy for one tool call of an agent that must stay inside its worktree (a
//! Claude Code PreToolUse hook). Deciding never starts a process or scans a repository: it
//! parses, resolves paths and reads at most the rules file. Which worktree a call belongs to is
//! the caller's business (`wt guard --root`, `--detect`, or the plugin's worker leases).

mod bash;
mod commands;
pub mod decision;
mod hook;
mod locate;
pub mod paths;
pub mod rules;
mod sandbox_rules;
pub mod shell;
mod vcs;

pub use bash::check_bash;
pub use decision::Decision;
pub use hook::{HookInput, Target, decide};
pub use locate::{common_dir, detect, project_rules_path};
pub use paths::Worktree;
pub use rules::GuardConfig;
pub use sandbox_rules::SandboxConfig;

/// The tools whose calls the guard decides (the matcher of every PreToolUse hook wt registers).
pub const GUARDED_TOOLS: &str = "Edit|Write|MultiEdit|NotebookEdit|Bash";
