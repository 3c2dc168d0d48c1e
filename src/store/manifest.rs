//! The run manifest: what a run is, where its pieces are, and every task's state. Written before
//! each git mutation (intent) and after it (outcome), atomically; versioned by `format`.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::write_atomic;
use crate::plan::{AgentKind, Strategy, TaskId};

/// The on-disk format this build reads and writes. A newer one is refused, never overwritten.
/// 2 added the `dispatched` task state and `dispatches` (for `wt step`); 1 is read as is.
pub const FORMAT: u32 = 2;

#[derive(Debug, thiserror::Error)]
pub enum ManifestError {
    #[error("cannot read {path}: {source}")]
    Read { path: PathBuf, source: std::io::Error },
    #[error("{path} is not a valid run manifest: {detail}")]
    Corrupt { path: PathBuf, detail: String },
    #[error("{path} was written by a newer wt (format {found}, this wt knows {FORMAT}); upgrade wt to go on")]
    Newer { path: PathBuf, found: u32 },
    #[error("cannot write {path}: {source}")]
    Write { path: PathBuf, source: std::io::Error },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    Running,
    Failed,
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PhaseState {
    Pending,
    Running,
    Linearizing,
    Done,
    Failed,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskState {
    Pending,
    Running,
    /// Handed to an orchestrator's subagent by `wt step`; its work is checked on the next step.
    Dispatched,
    Committed,
    Verified,
    Failed,
}

/// What keeps a run's agents in their worktrees.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Containment {
    /// Every task process runs under `wt sandbox` (Landlock): the kernel bounds its writes.
    Kernel,
    /// The kernel has no Landlock and the project allowed that (`[sandbox] required = false`):
    /// the guard's policy and the check after each task are all there is.
    PolicyOnly,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RunManifest {
    pub format: u32,
    pub run_id: String,
    pub plan_path: PathBuf,
    pub plan_digest: String,
    pub feature: Option<String>,
    pub base: String,
    pub base_commit: String,
    pub repo_root: PathBuf,
    pub main_worktree: PathBuf,
    pub state: RunState,
    /// The process running (or last running) the run.
    pub pid: u32,
    pub started_at: u64,
    pub updated_at: u64,
    /// Command-line choices that a resume without flags keeps.
    #[serde(default)]
    pub overrides: Overrides,
    /// How the run's agents are contained (absent in manifests of wt before the sandbox).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub containment: Option<Containment>,
    pub phases: Vec<PhaseRecord>,
}

/// `wt run` flags that change how tasks run, remembered for resumes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Overrides {
    pub agent_kind: Option<AgentKind>,
    pub agent_command: Option<String>,
    pub max_parallel: Option<usize>,
    /// `--timeout`, in seconds.
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

impl Overrides {
    /// These choices, each falling back to `earlier`'s.
    pub fn or(self, earlier: &Overrides) -> Overrides {
        Overrides {
            agent_kind: self.agent_kind.or(earlier.agent_kind),
            agent_command: self.agent_command.or_else(|| earlier.agent_command.clone()),
            max_parallel: self.max_parallel.or(earlier.max_parallel),
            timeout_secs: self.timeout_secs.or(earlier.timeout_secs),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct PhaseRecord {
    pub number: usize,
    pub name: String,
    pub strategy: Strategy,
    pub state: PhaseState,
    /// The branch (or, for the first phase, the base) the phase's tasks start from.
    pub base_branch: Option<String>,
    pub tasks: Vec<TaskRecord>,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TaskRecord {
    /// Written as `"number": "P.T"`.
    #[serde(rename = "number")]
    pub id: TaskId,
    pub name: String,
    pub branch: String,
    pub worktree: PathBuf,
    pub state: TaskState,
    /// The commit the task's branch started from; its own commits are base_commit..branch.
    pub base_commit: Option<String>,
    /// The wt process that runs the task.
    pub pid: Option<u32>,
    /// The agent process, while it runs: a resumed run waits for one its predecessor left behind.
    #[serde(default)]
    pub agent_pid: Option<u32>,
    /// How many times in a row `wt step` handed the task out without finding work.
    #[serde(default)]
    pub dispatches: u32,
    /// The plugin's worker slot leased to the task while `wt step` has it out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slot: Option<usize>,
    pub error: Option<String>,
    pub log: PathBuf,
}

impl RunManifest {
    pub fn load(path: &Path) -> Result<RunManifest, ManifestError> {
        let text = std::fs::read_to_string(path)
            .map_err(|source| ManifestError::Read { path: path.to_owned(), source })?;
        let corrupt = |err: serde_json::Error| ManifestError::Corrupt {
            path: path.to_owned(),
            detail: err.to_string(),
        };
        #[derive(Deserialize)]
        struct Header {
            format: u32,
        }
        let header: Header = serde_json::from_str(&text).map_err(corrupt)?;
        if header.format > FORMAT {
            return Err(ManifestError::Newer { path: path.to_owned(), found: header.format });
        }
        serde_json::from_str(&text).map_err(corrupt)
    }

    pub fn save(&mut self, path: &Path) -> Result<(), ManifestError> {
        self.updated_at = super::now();
        let text = serde_json::to_vec_pretty(self).map_err(|err| ManifestError::Write {
            path: path.to_owned(),
            source: std::io::Error::other(err),
        })?;
        write_atomic(path, &text).map_err(|source| ManifestError::Write { path: path.to_owned(), source })
    }

    pub fn task(&self, id: TaskId) -> Option<&TaskRecord> {
        self.phases.get(id.phase.checked_sub(1)?)?.tasks.get(id.task.checked_sub(1)?)
    }

    pub fn task_mut(&mut self, id: TaskId) -> Option<&mut TaskRecord> {
        self.phases.get_mut(id.phase.checked_sub(1)?)?.tasks.get_mut(id.task.checked_sub(1)?)
    }

    pub fn phase_mut(&mut self, number: usize) -> Option<&mut PhaseRecord> {
        self.phases.get_mut(number.checked_sub(1)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> RunManifest {
        RunManifest {
            format: FORMAT,
            run_id: "a1b2c3".into(),
            plan_path: "/p/plan.toml".into(),
            plan_digest: "d".into(),
            feature: None,
            base: "main".into(),
            base_commit: "c".into(),
            repo_root: "/r".into(),
            main_worktree: "/r/.worktrees/a1b2c3-main".into(),
            state: RunState::Running,
            pid: 1,
            started_at: 0,
            updated_at: 0,
            overrides: Overrides::default(),
            containment: None,
            phases: vec![],
        }
    }

    #[test]
    fn round_trips_and_refuses_a_newer_format() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("manifest.json");
        sample().save(&path).unwrap();
        assert_eq!(RunManifest::load(&path).unwrap().run_id, "a1b2c3");

        let mut newer = sample();
        newer.format = FORMAT + 1;
        newer.save(&path).unwrap();
        let before = std::fs::read(&path).unwrap();
        let err = RunManifest::load(&path).unwrap_err();
        assert!(matches!(err, ManifestError::Newer { found, .. } if found == FORMAT + 1), "{err}");
        assert!(err.to_string().contains("upgrade wt"));
        assert_eq!(std::fs::read(&path).unwrap(), before);
    }

    #[test]
    fn a_task_is_written_and_read_as_its_number() {
        let text = r#"{"number": "2.3", "name": "n", "branch": "b", "worktree": "/w", "state": "verified",
            "base_commit": null, "pid": null, "error": null, "log": "/l"}"#;
        let record: TaskRecord = serde_json::from_str(text).unwrap();
        assert_eq!(record.id, TaskId { phase: 2, task: 3 });
        assert_eq!(serde_json::to_value(&record).unwrap()["number"], "2.3");
        let bad = text.replace("\"2.3\"", "\"2.x\"");
        assert!(
            serde_json::from_str::<TaskRecord>(&bad).unwrap_err().to_string().contains("not a task number")
        );
    }
}
