use std::io::Write;
use std::path::Path;

use super::GitError;

/// The folder of the main checkout that holds every worktree wt makes (runs' and teams').
pub const WORKTREES_DIR: &str = ".worktrees";

/// What wt adds to the main checkout and keeps out of `git status`: run and team worktrees, and
/// the agent files `wt create` generates (`.claude/agents/wt-<name>.md`).
pub const WT_EXCLUDES: &[&str] = &["/.worktrees/", "/.claude/agents/wt-*.md"];

/// Adds each pattern to `<common-dir>/info/exclude` unless a line already says it. Never touches
/// a tracked `.gitignore`: the user's checkout must not change.
pub fn ensure_excluded(common_dir: &Path, patterns: &[&str]) -> Result<(), GitError> {
    let path = common_dir.join("info").join("exclude");
    let io = |source| GitError::Io { path: path.clone(), source };
    let existing = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(err) => return Err(io(err)),
    };
    let missing: Vec<&str> =
        patterns.iter().copied().filter(|p| !existing.lines().any(|line| line.trim() == *p)).collect();
    if missing.is_empty() {
        return Ok(());
    }
    std::fs::create_dir_all(path.parent().unwrap_or(common_dir)).map_err(io)?;
    let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&path).map_err(io)?;
    let mut text = String::new();
    if !existing.is_empty() && !existing.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# added by wt (spectacular): worktrees and generated agents\n");
    for pattern in missing {
        text.push_str(pattern);
        text.push('\n');
    }
    file.write_all(text.as_bytes()).map_err(io)
}

/// Whether git ignores `path` (relative to `root`), by any rule: .gitignore files, info/exclude,
/// core.excludesFile. Tracked files do not count as exceptions (`--no-index`).
pub fn is_ignored(root: &Path, path: &str) -> Result<bool, GitError> {
    let out = super::git(root).args(["check-ignore", "--quiet", "--no-index", path]).read_unchecked()?;
    match out.status {
        crate::process::ExitDescription::Code(0) => Ok(true),
        crate::process::ExitDescription::Code(1) => Ok(false),
        status => Err(GitError::Command(crate::process::ProcessError::Failed {
            command: format!("git check-ignore --quiet --no-index {path}"),
            status,
            stderr: out.stderr,
        })),
    }
}
