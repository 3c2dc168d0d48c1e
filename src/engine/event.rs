//! What a run reports as it goes: written to `events.jsonl`, shown by the UI, printed by `--json`.

use std::path::PathBuf;

use serde::Serialize;

use crate::plan::{Strategy, TaskId};

#[derive(Debug, Clone, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    RunStarted {
        run_id: String,
        base: String,
        main_worktree: PathBuf,
        resumed: bool,
    },
    PhaseStarted {
        phase: usize,
        name: String,
        strategy: Strategy,
        tasks: usize,
    },
    TaskStarted {
        task: TaskId,
        name: String,
        branch: String,
        worktree: PathBuf,
    },
    TaskActivity {
        task: TaskId,
        activity: Activity,
        #[serde(skip_serializing_if = "Option::is_none")]
        detail: Option<String>,
    },
    TaskSkipped {
        task: TaskId,
        name: String,
        reason: String,
    },
    TaskFinished {
        task: TaskId,
        name: String,
        ok: bool,
        error: Option<String>,
        log: PathBuf,
    },
    PhaseLinearizing {
        phase: usize,
        branches: Vec<String>,
    },
    PhaseFinished {
        phase: usize,
        ok: bool,
    },
    Notice {
        message: String,
    },
    RunFinished {
        run_id: String,
        ok: bool,
        stack: Vec<StackEntry>,
        message: String,
    },
}

/// What a task is doing now, for the live display.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Activity {
    Preparing,
    Agent,
    Committing,
    Verifying,
}

impl Activity {
    pub fn describe(self) -> &'static str {
        match self {
            Activity::Preparing => "preparing worktree",
            Activity::Agent => "agent working",
            Activity::Committing => "committing",
            Activity::Verifying => "verifying",
        }
    }
}

/// One branch of the finished stack, bottom first.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct StackEntry {
    pub task: TaskId,
    pub name: String,
    pub branch: String,
    pub commit: String,
    pub commits: usize,
}

/// Receives events on the thread that coordinates the run.
pub trait EventSink {
    fn emit(&self, event: &Event);
}
