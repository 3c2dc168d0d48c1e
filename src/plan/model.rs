//! The plan model both input formats parse into: phases of tasks, each task with the names the
//! engine derives from it (number, slug, branch, worktree).

use std::fmt;
use std::path::PathBuf;

use serde::{Deserialize, Serialize};

pub use crate::location::Location;

/// A value with the place it was written, for errors found after parsing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Located<T> {
    pub value: T,
    pub location: Location,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Strategy {
    Sequential,
    Parallel,
}

impl Strategy {
    pub fn as_str(self) -> &'static str {
        match self {
            Strategy::Sequential => "sequential",
            Strategy::Parallel => "parallel",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum AgentKind {
    Claude,
    Command,
    Script,
}

impl AgentKind {
    pub const ALL: [AgentKind; 3] = [AgentKind::Claude, AgentKind::Command, AgentKind::Script];

    pub fn name(self) -> &'static str {
        match self {
            AgentKind::Claude => "claude",
            AgentKind::Command => "command",
            AgentKind::Script => "script",
        }
    }

    pub fn parse(text: &str) -> Option<AgentKind> {
        AgentKind::ALL.into_iter().find(|kind| kind.name() == text)
    }

    /// The kinds as a user writes them: `"claude", "command" or "script"` (with `quote`).
    pub fn list(quote: &str) -> String {
        let names: Vec<String> =
            AgentKind::ALL.iter().map(|kind| format!("{quote}{}{quote}", kind.name())).collect();
        let (last, rest) = names.split_last().expect("AgentKind::ALL is not empty");
        format!("{} or {last}", rest.join(", "))
    }
}

/// Where the run id came from; a derived id changes when the plan's path or content does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunIdOrigin {
    Plan,
    Flag,
    Derived,
}

#[derive(Debug, Clone, Default)]
pub struct AgentConfig {
    pub kind: Option<Located<AgentKind>>,
    /// argv of a `command` agent; `{prompt_file}` in any word is replaced by the prompt's path.
    pub command: Option<Vec<String>>,
    pub max_parallel: Option<usize>,
    /// How long any task's agent may run before it is stopped.
    pub timeout: Option<std::time::Duration>,
}

#[derive(Debug, Clone)]
pub struct Plan {
    /// Absolute path of the plan file.
    pub source: PathBuf,
    /// sha256 of the plan file's bytes, lowercase hex.
    pub digest: String,
    pub run_id: String,
    pub run_id_origin: RunIdOrigin,
    pub feature: Option<String>,
    pub base: Option<Located<String>>,
    pub agent: AgentConfig,
    /// The plan's `[guard]` rules, added to the project's guard.toml for this run.
    pub guard: crate::guard::GuardConfig,
    /// The plan's `[worktree]` table, laid over the project's worktree.toml for this run.
    pub worktree: super::WorktreeConfig,
    pub phases: Vec<Phase>,
}

#[derive(Debug, Clone)]
pub struct Phase {
    /// 1-based.
    pub number: usize,
    pub name: String,
    pub strategy: Strategy,
    pub tasks: Vec<Task>,
    pub location: Location,
}

#[derive(Debug, Clone)]
pub struct Task {
    pub id: TaskId,
    pub name: String,
    pub slug: String,
    pub branch: String,
    pub prompt: String,
    pub files: Vec<String>,
    pub acceptance: Vec<String>,
    pub verify: Option<String>,
    pub run: Option<String>,
    pub allow_empty: bool,
    /// How long this task's agent may run before it is stopped (overrides `[agent] timeout`).
    pub timeout: Option<std::time::Duration>,
    pub location: Location,
}

/// A task's 1-based phase and position in its phase: `P.T` in messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskId {
    pub phase: usize,
    pub task: usize,
}

impl fmt::Display for TaskId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.phase, self.task)
    }
}

impl std::str::FromStr for TaskId {
    type Err = String;

    /// `P.T`, both numbers from 1.
    fn from_str(text: &str) -> Result<TaskId, String> {
        let number = |part: &str| part.parse::<usize>().ok().filter(|n| *n > 0);
        let parsed =
            text.split_once('.').and_then(|(p, t)| Some(TaskId { phase: number(p)?, task: number(t)? }));
        parsed.ok_or_else(|| format!("`{text}` is not a task number like 2.1"))
    }
}

/// Records and events write a task as `"P.T"`, as people read it.
impl Serialize for TaskId {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for TaskId {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<TaskId, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

impl TaskId {
    /// `task-P-T`, the suffix shared by the task's worktree, branch and state files.
    pub fn key(self) -> String {
        format!("task-{}-{}", self.phase, self.task)
    }
}

impl Plan {
    pub fn tasks(&self) -> impl Iterator<Item = &Task> {
        self.phases.iter().flat_map(|phase| phase.tasks.iter())
    }

    pub fn task(&self, id: TaskId) -> Option<&Task> {
        self.phases.get(id.phase.checked_sub(1)?)?.tasks.get(id.task.checked_sub(1)?)
    }
}

/// `<runId>-task-<p>-<t>-<slug>`.
pub fn branch_name(run_id: &str, id: TaskId, slug: &str) -> String {
    format!("{run_id}-{}-{slug}", id.key())
}

/// The commit message `wt` writes for a task's leftover changes.
pub fn commit_message(task: &Task) -> String {
    format!("[Task {}] {}", task.id, task.name)
}
