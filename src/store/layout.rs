use std::path::{Path, PathBuf};

use crate::plan::TaskId;

/// Where each piece of state lives. Names are a contract (docs/architecture.md): tests and users rely on them.
#[derive(Debug, Clone)]
pub struct StateLayout {
    root: PathBuf,
}

impl StateLayout {
    pub fn new(common_dir: &Path) -> Self {
        StateLayout { root: common_dir.join("spectacular") }
    }

    pub fn repo_lock(&self) -> PathBuf {
        self.root.join("repo.lock")
    }

    /// The leases of the plugin's worker slots, one file per slot (`plugin::leases`).
    pub fn slots_dir(&self) -> PathBuf {
        self.root.join("slots")
    }

    /// Held for each read-modify-write of a lease (never around git or an agent).
    pub fn slots_lock(&self) -> PathBuf {
        self.root.join("slots.lock")
    }

    /// State of the team worktrees `wt create` made (`team::`): one record per name.
    pub fn team_dir(&self) -> PathBuf {
        self.root.join("team")
    }

    /// What wt keeps about the team worktree `name` besides git and git-spice (its verify).
    pub fn team_record(&self, name: &str) -> PathBuf {
        self.team_dir().join(format!("{name}.toml"))
    }

    /// Held by `wt poll` while it watches the branch `branch` (the TeammateIdle gate looks).
    pub fn team_poll_lock(&self, branch: &str) -> PathBuf {
        self.team_dir().join("polls").join(format!("{branch}.lock"))
    }

    /// The output of the last verify the TaskCompleted gate ran for the team worktree `name`
    /// (`<name>.log`), and the commit it last passed on (`<name>.passed`).
    pub fn team_verify_dir(&self) -> PathBuf {
        self.team_dir().join("verify")
    }

    /// The pool of recycled worktrees: its record and the trusted index copies.
    pub fn pool_dir(&self) -> PathBuf {
        self.root.join("pool")
    }

    /// Which worktree is parked in which slot, and which one is being moved (`store::PoolRecord`).
    pub fn pool_record(&self) -> PathBuf {
        self.pool_dir().join("pool.json")
    }

    /// The index of the worktree whose admin folder is `<common>/worktrees/<admin>`, as wt's own
    /// git last wrote it (after making or cleaning the worktree, before any task ran there). A
    /// task can rewrite its worktree's index, not this copy: recycling puts it back before it
    /// compares the files, so a change the task hid from git's stat check is still found.
    pub fn trusted_index(&self, admin: &str) -> PathBuf {
        self.pool_dir().join("index").join(admin)
    }

    pub fn runs_dir(&self) -> PathBuf {
        self.root.join("runs")
    }

    pub fn run_dir(&self, run_id: &str) -> PathBuf {
        self.runs_dir().join(run_id)
    }

    pub fn manifest(&self, run_id: &str) -> PathBuf {
        self.run_dir(run_id).join("manifest.json")
    }

    pub fn events(&self, run_id: &str) -> PathBuf {
        self.run_dir(run_id).join("events.jsonl")
    }

    pub fn run_lock(&self, run_id: &str) -> PathBuf {
        self.run_dir(run_id).join("run.lock")
    }

    /// The plan file as the run first saw it (to say what changed when it differs).
    pub fn plan_copy(&self, run_id: &str, plan: &Path) -> PathBuf {
        let extension = plan.extension().and_then(|e| e.to_str()).unwrap_or("toml");
        self.run_dir(run_id).join(format!("plan.{extension}"))
    }

    /// The guard rules of the run: the project's guard.toml merged with the plan's `[guard]`.
    pub fn guard_rules(&self, run_id: &str) -> PathBuf {
        self.run_dir(run_id).join("guard.toml")
    }

    pub fn prompt(&self, run_id: &str, task: TaskId) -> PathBuf {
        self.run_dir(run_id).join("prompts").join(format!("{}.md", task.key()))
    }

    /// The Claude Code settings of a task's agent (registers the guard).
    pub fn claude_settings(&self, run_id: &str, task: TaskId) -> PathBuf {
        self.run_dir(run_id).join("claude").join(format!("{}.settings.json", task.key()))
    }

    /// A Claude Code agent's `stream-json` transcript.
    pub fn transcript(&self, run_id: &str, task: TaskId) -> PathBuf {
        self.run_dir(run_id).join("transcripts").join(format!("{}.jsonl", task.key()))
    }

    /// A task's temporary folder (its TMPDIR under the sandbox), removed with the run's state.
    pub fn task_tmp(&self, run_id: &str, task: TaskId) -> PathBuf {
        self.run_dir(run_id).join("tmp").join(task.key())
    }

    /// The git objects a task makes under the sandbox, until wt takes them into the repository.
    pub fn task_objects(&self, run_id: &str, task: TaskId) -> PathBuf {
        self.run_dir(run_id).join("objects").join(task.key())
    }

    /// What a task must leave alone (its snapshot), from before it starts until it is checked.
    pub fn task_watch(&self, run_id: &str, task: TaskId) -> PathBuf {
        self.run_dir(run_id).join("watch").join(format!("{}.json", task.key()))
    }

    pub fn task_log(&self, run_id: &str, task: TaskId) -> PathBuf {
        self.run_dir(run_id).join("logs").join(format!("{}.log", task.key()))
    }
}
