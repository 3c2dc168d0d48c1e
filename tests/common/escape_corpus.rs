//! The guard corpus's tool calls, as data: escape attempts, the red team's classes of escapes,
//! ordinary work, and commands wt cannot follow, each with what the guard must make of it.
//! `tests/guard_corpus.rs` asks the guard about every case; `tests/sandbox_corpus.rs` runs the
//! Bash escapes for real under `wt sandbox`.

// Each test file uses a part of the tables.
#![allow(dead_code, unused_imports)]

#[path = "escape_corpus/cases.rs"]
mod cases;
#[path = "escape_corpus/guard_holes.rs"]
mod guard_holes;
#[path = "escape_corpus/red_team.rs"]
mod red_team;

pub use cases::{Case, ESCAPES, NOT_FOLLOWED, ORDINARY};
pub use guard_holes::GUARD_HOLES;
pub use red_team::{ClassCase, RED_TEAM};

/// Scripts an earlier call left in the worktree, which the corpus runs (`sh scripts/push.sh`):
/// the guard reads a shell script inside the worktree before it runs it. Made executable.
pub const WORKTREE_SCRIPTS: &[(&str, &str)] = &[
    ("scripts/check.sh", "#!/bin/sh\nset -e\ncargo test\n"),
    ("scripts/push.sh", "#!/usr/bin/env bash\ngit push origin HEAD\n"),
    ("scripts/up.sh", "cd ..\n"),
    (".venv/bin/pytest", "#!/usr/bin/env python3\nimport sys\nsys.exit(0)\n"),
];

/// Writes `WORKTREE_SCRIPTS` into the worktree `root`.
pub fn write_worktree_scripts(root: &std::path::Path) {
    use std::os::unix::fs::PermissionsExt;
    for (path, content) in WORKTREE_SCRIPTS {
        let path = root.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, content).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// What the guard must make of a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    Deny,
    /// Followed and inside (for Bash: understood).
    Allow,
    /// A Bash command wt cannot follow: its decision depends on the containment.
    Unclear,
    NoDecision,
}

/// Every Bash command of the corpus that is denied or not understood in some mode: the escape
/// attempts, the red teams', and the commands wt cannot follow (never the ordinary work, which
/// is allowed everywhere). In corpus order, without repeats.
pub fn bash_escapes() -> Vec<&'static str> {
    let tables = ESCAPES.iter().chain(NOT_FOLLOWED).map(|(expect, tool, text)| (*expect, *tool, *text));
    let red_team = RED_TEAM.iter().chain(GUARD_HOLES).map(|(_, expect, text)| (*expect, "Bash", *text));
    let mut out: Vec<&'static str> = Vec::new();
    for (expect, tool, text) in tables.chain(red_team) {
        if tool == "Bash" && matches!(expect, Expect::Deny | Expect::Unclear) && !out.contains(&text) {
            out.push(text);
        }
    }
    out
}
