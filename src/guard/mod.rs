//! The guard: a Claude Code PreToolUse hook that keeps an agent inside its worktree.

pub mod shell;
