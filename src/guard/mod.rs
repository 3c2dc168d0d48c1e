//! The guard: a Claude Code PreToolUse hook that keeps an agent inside its worktree. Deciding
//! never starts a process or scans a repository: it parses, resolves paths and reads at most
//! one run manifest.

mod bash;
mod commands;
pub mod decision;
mod hook;
pub mod orchestrator;
pub mod paths;
mod route;
pub mod rules;
pub mod shell;
mod vcs;

pub use bash::check_bash;
pub use decision::Decision;
pub use hook::{HookInput, Target, decide};
pub use paths::Worktree;
pub use route::{Assignment, common_dir, detect, from_agent_type, project_rules_path, run_rules_path};
pub use rules::GuardConfig;
