//! What a difference outside the worktree means, by where it is: the worktree's own git state,
//! new objects (harmless), what the check after every task watches and puts back
//! (`src/engine/integrity.rs`), or an escape.

use std::path::Path;

use super::layout::{BRANCH, WORKTREE};
use super::tree_snapshot::Change;

/// From the least to the most serious.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Class {
    /// The worktree's own git state, which the sandbox lets it write by design: its admin
    /// folder (index, logs, ORIG_HEAD, …) but the link files, its branch and that branch's
    /// reflog, its temporary folder.
    Own,
    /// New objects in the repository's `objects`: unreachable unless a ref names them.
    Objects,
    /// What the check after every task compares with its snapshot and puts back: refs other than
    /// the task's branch, branch reflogs, the worktree's link files and HEAD, `config`, `hooks`.
    Guarded,
    /// Anything else, and the mode or owner of what the check compares by content only: neither
    /// the kernel nor the check stops it.
    Escape,
}

/// The class of a change at `path`, relative to the layout's base folder.
pub fn classify(path: &Path, change: Change) -> Class {
    let path = path.to_str().unwrap();
    let admin = format!("repo/.git/worktrees/{WORKTREE}/");
    if let Some(file) = path.strip_prefix(&admin) {
        return match ["HEAD", "gitdir", "commondir"].contains(&file) {
            false => Class::Own,
            true if change == Change::Meta => Class::Escape,
            true => Class::Guarded,
        };
    }
    let own = [
        format!("repo/.git/worktrees/{WORKTREE}"),
        format!("repo/.git/refs/heads/{BRANCH}"),
        format!("repo/.git/logs/refs/heads/{BRANCH}"),
        format!("repo/.git/spectacular/tmp/{WORKTREE}"),
        // The task's own object folder: wt sandbox takes its objects into the store afterwards.
        format!("repo/.git/spectacular/objects/{WORKTREE}"),
    ];
    if own.iter().any(|own| path == own || path.starts_with(&format!("{own}/"))) {
        return Class::Own;
    }
    if path.starts_with("repo/.git/objects/") {
        // An object removed or rewritten may be one a branch needs.
        return if change == Change::Added { Class::Objects } else { Class::Escape };
    }
    let git = path.strip_prefix("repo/.git/").unwrap_or_default();
    // The check compares config and the hooks by content and mode (not the hooks folder's mode).
    if git == "config" || git.starts_with("hooks/") || (git == "hooks" && change != Change::Meta) {
        return Class::Guarded;
    }
    // It compares the worktree's .git link by content and mode, and refs by what they say.
    if path == format!("repo/.worktrees/{WORKTREE}/.git") {
        return Class::Guarded;
    }
    if change != Change::Meta && refs_guarded_by_the_check(git) {
        return Class::Guarded;
    }
    Class::Escape
}

/// Where the check after every task compares refs: every ref but the remote-tracking ones and
/// git-spice's (others move them meanwhile), wherever git keeps them, and their reflogs.
fn refs_guarded_by_the_check(git: &str) -> bool {
    let unwatched = ["refs/remotes/", "refs/spice/"];
    (git.starts_with("refs/") && !unwatched.iter().any(|prefix| git.starts_with(prefix)))
        || git == "packed-refs"
        || git.starts_with("logs/refs/heads/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn places_are_classed() {
        let class = |path: &str, change| classify(Path::new(path), change);
        assert_eq!(class("repo/.git/worktrees/abc123-task-1-1/index", Change::Content), Class::Own);
        assert_eq!(class("repo/.git/worktrees/abc123-task-1-1/HEAD", Change::Content), Class::Guarded);
        assert_eq!(class("repo/.git/refs/heads/abc123-task-1-1-feature", Change::Content), Class::Own);
        assert_eq!(class("repo/.git/objects/ab/cdef", Change::Added), Class::Objects);
        assert_eq!(class("repo/.git/objects/ab/cdef", Change::Removed), Class::Escape);
        assert_eq!(class("repo/.git/refs/heads/main", Change::Content), Class::Guarded);
        assert_eq!(class("repo/.git/refs/remotes/origin/main", Change::Content), Class::Escape);
        assert_eq!(class("repo/.worktrees/abc123-task-1-1/.git", Change::Content), Class::Guarded);
        assert_eq!(class("repo/.worktrees/abc123-task-1-1/.git", Change::Meta), Class::Guarded);
        assert_eq!(class("repo/.git/hooks/pre-commit.sample", Change::Meta), Class::Guarded);
        assert_eq!(class("repo/README.md", Change::Meta), Class::Escape);
        assert_eq!(class("scratch/tmp/x", Change::Content), Class::Escape);
    }
}
