//! The guard: a Claude Code PreToolUse hook that keeps an agent inside its worktree. Deciding
//! never starts a process or scans a repository: it parses, resolves paths and reads at most
//! one run manifest. Its work on one command is bounded (`limits`).

mod bash;
mod braces;
mod builtins;
mod commands;
pub mod decision;
mod directories;
mod downloads;
mod environment;
mod expand;
mod find;
mod flow;
mod forge;
mod git_rules;
mod globs;
mod hook;
pub mod limits;
mod options;
pub mod orchestrator;
pub mod paths;
mod prefixes;
mod route;
pub mod rules;
mod scripts;
mod sed;
pub mod shell;
mod shells;
mod state;
mod vcs;
pub mod verdict;
mod wrap;
mod writers;

pub use bash::check_bash;
pub use decision::Decision;
pub use hook::{Containment, HookInput, Target, decide};
pub use paths::Worktree;
pub use route::{Assignment, common_dir, detect, from_agent_type, project_rules_path, run_rules_path};
pub use rules::GuardConfig;
pub use verdict::Verdict;
