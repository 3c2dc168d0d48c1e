//! Finding a repository and its worktrees from the files git keeps, without running git: the
//! common git directory of a folder, the worktree that holds a folder (`wt guard --detect`), and
//! the project's rules file.

use std::path::{Path, PathBuf};

use super::hook::Target;

/// The worktree holding `cwd`, by the longest match among the repository's worktrees; the main
/// checkout only when `include_main`.
pub fn detect(common: &Path, cwd: &Path, include_main: bool) -> Option<Target> {
    let mut candidates: Vec<(PathBuf, Option<String>)> = Vec::new();
    if include_main {
        let main = common.parent()?.to_owned();
        candidates.push((main, read_branch(&common.join("HEAD"))));
    }
    for entry in std::fs::read_dir(common.join("worktrees")).ok()?.flatten() {
        let admin = entry.path();
        let Ok(gitdir) = std::fs::read_to_string(admin.join("gitdir")) else { continue };
        let Some(root) = Path::new(gitdir.trim()).parent() else { continue };
        candidates.push((root.to_owned(), read_branch(&admin.join("HEAD"))));
    }
    let cwd = super::paths::real_path(cwd);
    candidates
        .into_iter()
        .filter(|(root, _)| cwd.starts_with(super::paths::real_path(root)))
        .max_by_key(|(root, _)| root.components().count())
        .map(|(root, branch)| Target { root, branch })
}

fn read_branch(head: &Path) -> Option<String> {
    let text = std::fs::read_to_string(head).ok()?;
    text.trim().strip_prefix("ref: refs/heads/").map(str::to_owned)
}

/// The repository's common git directory, found by walking up from `dir` (reading `.git`
/// files of linked worktrees, never running git).
pub fn common_dir(dir: &Path) -> Option<PathBuf> {
    let mut current = Some(dir);
    while let Some(path) = current {
        let dot_git = path.join(".git");
        if dot_git.is_dir() {
            return Some(dot_git);
        }
        if let Ok(text) = std::fs::read_to_string(&dot_git) {
            let admin = path.join(text.trim().strip_prefix("gitdir:")?.trim());
            let common = std::fs::read_to_string(admin.join("commondir")).ok()?;
            return Some(super::paths::lexical(&admin.join(common.trim())));
        }
        current = path.parent();
    }
    None
}

/// The project's `.spectacular/guard.toml`, read from the main checkout (which agents cannot
/// edit), given the repository's git directory.
pub fn project_rules_path(common: &Path) -> Option<PathBuf> {
    Some(common.parent()?.join(".spectacular").join("guard.toml"))
}
