//! A task worktree for `wt sandbox` tests: a repository with two task worktrees, run state, and
//! symlinks that lead out of the worktree; the command under test runs in the first worktree
//! with the paths escapes aim at in its environment.

use std::path::PathBuf;

use crate::common::{TestRepo, WtOutput};
use crate::tree_snapshot::{Change, Entry, TreeSnapshot};

/// A repository with two task worktrees, run state and symlinks that lead out of the worktree.
pub struct Task {
    pub repo: TestRepo,
    pub base: PathBuf,
    pub worktree: PathBuf,
    pub sibling: PathBuf,
    pub common: PathBuf,
    pub outside: PathBuf,
}

impl Task {
    pub fn new() -> Task {
        let repo = TestRepo::new();
        let base = repo.root.parent().unwrap().to_owned();
        let common = repo.root.join(".git");
        std::fs::write(common.join("info/exclude"), ".worktrees/\n").unwrap();
        repo.git(&["worktree", "add", "--quiet", "-b", "task-1-1", ".worktrees/run1-task-1-1"]);
        repo.git(&["worktree", "add", "--quiet", "-b", "task-1-2", ".worktrees/run1-task-1-2"]);
        let worktree = repo.root.join(".worktrees/run1-task-1-1");
        let sibling = repo.root.join(".worktrees/run1-task-1-2");
        let state = common.join("spectacular/runs/run1");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(state.join("manifest.json"), "{\"version\":1}\n").unwrap();
        std::fs::write(common.join("hooks/x"), "#!/bin/sh\n").unwrap();
        let outside = repo.scratch.join("outside");
        std::fs::create_dir_all(outside.join("dir")).unwrap();
        std::fs::write(outside.join("target.txt"), "outside\n").unwrap();
        std::os::unix::fs::symlink(outside.join("target.txt"), worktree.join("outside-link")).unwrap();
        std::os::unix::fs::symlink(outside.join("dir"), worktree.join("dir-link")).unwrap();
        Task { repo, base, worktree, sibling, common, outside }
    }

    /// What the command may change; everything else under the test's folder must stay as it was.
    pub fn allowed(&self) -> Vec<PathBuf> {
        let common = &self.common;
        vec![
            self.worktree.clone(),
            common.join("worktrees/run1-task-1-1"),
            common.join("spectacular/objects/run1-task-1-1"),
            common.join("refs/heads"),
            common.join("logs/refs/heads"),
            common.join("spectacular/tmp/run1-task-1-1"),
        ]
    }

    pub fn snapshot(&self) -> TreeSnapshot {
        TreeSnapshot::take(&self.base, &self.allowed())
    }

    /// What changed outside the allowed set since `before`, but for objects added to the
    /// repository's store: wt sandbox takes a task's new objects in once the command ends.
    pub fn outside_changes(&self, before: &TreeSnapshot) -> Vec<String> {
        let objects = self.common.join("objects");
        let after = self.snapshot();
        let plain = |path: &PathBuf| matches!(after.get(path), Some((Entry::File(_) | Entry::Dir, _)));
        before
            .diff(&after)
            .into_iter()
            .filter(|(path, change)| !(path.starts_with(&objects) && *change == Change::Added && plain(path)))
            .map(|(path, change)| format!("{change:?} {}", path.display()))
            .collect()
    }

    /// `wt sandbox <args> -- <command>` in the worktree, with the paths escapes aim at in the
    /// environment.
    pub fn run(&self, args: &[&str], command: &[&str], env: &[(&str, &str)]) -> WtOutput {
        let mut cmd = self.repo.command(env!("CARGO_BIN_EXE_wt"), &self.worktree);
        cmd.arg("sandbox").arg("--root").arg(&self.worktree).args(args).arg("--").args(command);
        cmd.envs(self.escape_env()).envs(env.iter().copied());
        WtOutput(cmd.output().unwrap())
    }

    /// The paths escapes aim at, by name.
    pub fn escape_env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("MAIN", self.repo.root.clone()),
            ("WT", self.worktree.clone()),
            ("SIBLING", self.sibling.clone()),
            ("COMMON", self.common.clone()),
            ("OUTSIDE", self.outside.clone()),
            ("STATE", self.common.join("spectacular/runs/run1/manifest.json")),
        ]
    }

    pub fn bash(&self, script: &str) -> WtOutput {
        self.run(&[], &["bash", "-c", script], &[])
    }

    pub fn write_rules(&self, text: &str) -> PathBuf {
        let path = self.repo.scratch.join("guard.toml");
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// EACCES: the usual answer of Landlock.
pub const DENIED: &str = "Permission denied";
