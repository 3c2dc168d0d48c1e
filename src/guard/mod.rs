//! The guard: the policy for one tool call of an agent that must stay inside its worktree (a
//! Claude Code PreToolUse hook). Deciding never starts a process or scans a repository: it
//! parses, resolves paths and reads at most the rules file, and its work on one command is
//! bounded (`limits`). Which worktree a call belongs to is the caller's business (`wt guard
//! --root`, `--detect`, or the plugin's worker leases).

mod arg;
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
mod locate;
mod options;
pub mod paths;
mod prefixes;
pub mod rules;
mod sandbox_rules;
mod scripts;
mod sed;
pub mod shell;
mod shells;
mod state;
mod targets;
mod vcs;
pub mod verdict;
mod wrap;
mod writers;
mod written;

pub use bash::check_bash;
pub use decision::Decision;
pub use hook::{Containment, HookInput, Target, decide};
pub use locate::{common_dir, detect, project_rules_path};
pub use paths::Worktree;
pub use rules::GuardConfig;
pub use sandbox_rules::{Network, SandboxConfig};
pub use verdict::Verdict;

/// The tools whose calls the guard decides (the matcher of every PreToolUse hook wt registers).
pub const GUARDED_TOOLS: &str = "Edit|Write|MultiEdit|NotebookEdit|Bash";
