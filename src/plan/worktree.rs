//! The `[worktree]` table: how a run's worktrees are made and what becomes of them. A plan's
//! table is laid over the project's `.spectacular/worktree.toml` (the same keys at its top level,
//! found beside `guard.toml` in the main checkout), key by key; the plan wins.
//!
//! ```toml
//! recycle = true                     # reuse finished worktrees through the pool (default true)
//! pool_size = 4                      # at most this many parked (default: the run's max_parallel)
//! keep = ["target/", "node_modules/"]  # ignored paths a recycled worktree keeps (gitignore patterns)
//! sparse = ["services/api", "libs"]  # a fresh worktree checks out only these folders (cone mode)
//! copy = ["node_modules", "target"]  # ignored paths of the main checkout copied into a fresh one
//! setup = "npm ci"                   # run once in each fresh worktree, in its sandbox, before the agent
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::PlanError;
use crate::location::Location;

/// Ignored build output and dependency folders a recycled worktree keeps when neither the plan nor
/// the project says `keep`: what makes a task's first build in it incremental. Every other ignored
/// file (an `.env`, a log, a generated agent) is removed.
pub const DEFAULT_KEEP: &[&str] =
    &["target/", "node_modules/", ".venv/", "__pycache__/", "build/", "dist/", ".gradle/", ".next/"];

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WorktreeConfig {
    /// Park a finished worktree in the repository's pool and take the next one from there.
    pub recycle: Option<bool>,
    /// At most this many worktrees wait in the pool; one more is removed instead.
    pub pool_size: Option<usize>,
    /// Ignored paths (gitignore patterns, as `git clean -e` reads them) that a recycled worktree
    /// keeps; everything else untracked goes.
    pub keep: Option<Vec<String>>,
    /// Folders a fresh worktree checks out (cone-mode sparse checkout); all when unset. A sparse
    /// worktree is not recycled.
    pub sparse: Option<Vec<String>>,
    /// Ignored paths of the main checkout copied into a fresh worktree (cloned copy-on-write where
    /// the file system can).
    pub copy: Option<Vec<String>>,
    /// A shell command run once in each fresh worktree, inside its sandbox, before the agent.
    pub setup: Option<String>,
}

impl WorktreeConfig {
    /// The project's defaults, `.spectacular/worktree.toml` in the main checkout at `root`.
    pub fn project_path(root: &Path) -> PathBuf {
        root.join(".spectacular").join("worktree.toml")
    }

    /// Reads a `worktree.toml`; None when there is none. A key or value it cannot take is an
    /// error at its line and column.
    pub fn load_toml(path: &Path) -> Result<Option<WorktreeConfig>, PlanError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => {
                return Err(PlanError::file(
                    path.to_owned(),
                    format!("cannot read it: {err}"),
                    "make it readable",
                ));
            }
        };
        let fix = "fix it in .spectacular/worktree.toml (its keys and values: README, Recycled worktrees)";
        let config: WorktreeConfig = toml::from_str(&text).map_err(|err| match err.span() {
            Some(span) => PlanError::at(Location::at(path, &text, span.start), err.message(), fix),
            None => PlanError::file(path.to_owned(), err.message(), fix),
        })?;
        config.validate().map_err(|err| PlanError::file(path.to_owned(), err, fix))?;
        Ok(Some(config))
    }

    /// Every `keep` pattern is one a command line can carry; `sparse` and `copy` name paths
    /// inside the checkout; `setup` is a command.
    pub fn validate(&self) -> Result<(), String> {
        for (key, paths) in [("sparse", &self.sparse), ("copy", &self.copy)] {
            for path in paths.iter().flatten() {
                let inside = std::path::Path::new(path)
                    .components()
                    .all(|part| matches!(part, std::path::Component::Normal(_)));
                if path.is_empty() || !inside {
                    return Err(format!(
                        "{key} = {path:?}: name a folder inside the checkout, relative to its root, without `..`"
                    ));
                }
            }
        }
        if self.setup.as_deref().is_some_and(|setup| setup.trim().is_empty()) {
            return Err("setup is empty: give the command to run, or leave the key out".into());
        }
        for pattern in self.keep.iter().flatten() {
            if pattern.trim().is_empty() || pattern.contains(['\n', '\0']) {
                return Err(format!("keep = {pattern:?} is not a gitignore pattern"));
            }
            if pattern.starts_with('!') {
                return Err(format!("keep = {pattern:?}: write the paths to keep, without `!`"));
            }
        }
        Ok(())
    }

    /// `self` (the project's) with `other`'s (the plan's) keys winning where it sets them.
    pub fn merge(self, other: WorktreeConfig) -> WorktreeConfig {
        WorktreeConfig {
            recycle: other.recycle.or(self.recycle),
            pool_size: other.pool_size.or(self.pool_size),
            keep: other.keep.or(self.keep),
            sparse: other.sparse.or(self.sparse),
            copy: other.copy.or(self.copy),
            setup: other.setup.or(self.setup),
        }
    }

    pub fn recycles(&self) -> bool {
        self.recycle.unwrap_or(true)
    }

    /// The patterns a recycled worktree keeps.
    pub fn kept(&self) -> Vec<String> {
        match &self.keep {
            Some(keep) => keep.clone(),
            None => DEFAULT_KEEP.iter().map(|p| (*p).to_owned()).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_wins_key_by_key_over_the_project() {
        let project = WorktreeConfig { recycle: Some(false), pool_size: Some(2), ..Default::default() };
        let plan =
            WorktreeConfig { recycle: Some(true), keep: Some(vec!["out/".into()]), ..Default::default() };
        let merged = project.merge(plan);
        assert_eq!(
            merged,
            WorktreeConfig {
                recycle: Some(true),
                pool_size: Some(2),
                keep: Some(vec!["out/".into()]),
                ..Default::default()
            }
        );
        assert!(WorktreeConfig::default().recycles());
        assert_eq!(WorktreeConfig::default().kept()[0], "target/");
    }

    #[test]
    fn a_project_file_is_read_and_checked() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("worktree.toml");
        assert_eq!(WorktreeConfig::load_toml(&path), Ok(None));
        std::fs::write(&path, "recycle = false\nkeep = [\"target/\"]\n").unwrap();
        let config = WorktreeConfig::load_toml(&path).unwrap().unwrap();
        assert!(!config.recycles());
        std::fs::write(&path, "recycel = false\n").unwrap();
        let typo = WorktreeConfig::load_toml(&path).unwrap_err().to_string();
        assert!(typo.starts_with(&format!("{}:1:1: unknown field", path.display())), "{typo}");
        std::fs::write(&path, "keep = [\"!target/\"]\n").unwrap();
        assert!(WorktreeConfig::load_toml(&path).unwrap_err().to_string().contains("without `!`"));
    }
}
