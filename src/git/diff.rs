//! `git diff` between two commits, as text for a person or an agent to read.

use std::path::Path;

use super::{GitError, git};

/// `git diff <from> <to>` (with `--stat`, the summary), run in `root`: no colour, no external diff
/// driver or text conversion (those run programs a worktree's attributes could name).
pub fn diff(root: &Path, from: &str, to: &str, stat: bool) -> Result<String, GitError> {
    let mut cmd = git(root).args(["diff", "--no-color", "--no-ext-diff", "--no-textconv"]);
    if stat {
        cmd = cmd.arg("--stat");
    }
    Ok(cmd.args([from, to, "--"]).read()?.stdout)
}
