//! The guard: the policy for one tool call of an agent that must stay inside its worktree (a
//! Claude Code PreToolUse hook). Deciding never starts a process or scans a repository: it
//! parses, resolves paths, and reads at most the rules file and the shell scripts inside the
//! worktree that the command runs (`scripts`), and its work on one command is bounded
//! (`limits`). Which worktree a call belongs to is the caller's business (`wt guard
//! --root`, `--detect`, or the plugin's worker leases).
//!
//! The Bash policy is layered, each file using only those below it:
//! - `background` (a call that must run in the background: `wt poll`), checked before
//! - `bash` (the entry, `check_bash`, and the dispatch of each command to its rule), over
//! - the walk: `flow` (lists, pipelines, compound commands) and `simple` (one simple command),
//! - the rules: `prefixes`, `builtins`, `shells`, `vcs` → `git_rules`, `forge`, `commands` →
//!   `servers`, `machine`, `interpreters` → `awk`, `sqlite`, `installers`; `outputs`, `writers` →
//!   `downloads`, `sed`, `find` (`installers` uses `writers`' option reader),
//! - what the walk and the rules use: `expand`, `environment`, `targets` (where a write goes),
//!   `scripts`, `directories`,
//! - the shared context: `checker` (the check's verdict, limits and loops, and the `Walk` it
//!   was given, through which a rule checks a nested script without depending on the walk),
//!   `state`, `arg`, `options`, `written`, `globs`, `braces`, `paths`, `limits`, `shell`.

mod arg;
mod awk;
mod background;
mod bash;
mod braces;
mod builtins;
mod checker;
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
mod installers;
mod interpreters;
pub mod limits;
mod locate;
mod machine;
mod options;
mod outputs;
pub mod paths;
mod prefixes;
pub mod rules;
mod sandbox_rules;
mod scripts;
mod sed;
mod servers;
pub mod shell;
mod shells;
mod simple;
mod sqlite;
mod state;
mod targets;
mod vcs;
pub mod verdict;
mod wrap;
mod writers;
mod written;

pub use bash::check_bash;
pub use decision::Decision;
pub use hook::{Containment, HookInput, Target, decide, decide_own_command};
pub use locate::{common_dir, detect, project_rules_path};
pub use paths::Worktree;
pub use rules::GuardConfig;
pub use sandbox_rules::{Network, SandboxConfig};
pub use verdict::Verdict;
pub use wrap::{TaskFolders, quote};

/// The tools whose calls the guard decides (the matcher of every PreToolUse hook wt registers).
pub const GUARDED_TOOLS: &str = "Edit|Write|MultiEdit|NotebookEdit|Bash";
