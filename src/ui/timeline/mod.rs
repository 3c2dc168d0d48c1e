//! `wt status <runId> --timeline <file>`: where a run's time went, as a picture. The model
//! (`model.rs`) is built from the run's `events.jsonl` alone (`records.rs` reads it) and is
//! pure; `svg.rs` draws it, `html.rs` wraps the drawing in a page with tables of the sums. The
//! file's extension picks the format, and the file is replaced atomically, so a reader never
//! sees half a picture. A live run is drawn up to now.

mod axis;
mod html;
mod model;
mod records;
mod svg;

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error_kind::ErrorKind;
use crate::store::{LiveState, RunManifest, StateLayout, write_atomic};

pub use model::{Part, RunState, TaskState};
use model::{PhaseOutline, Timeline};

#[derive(Debug, thiserror::Error)]
pub enum TimelineError {
    #[error("--timeline writes a .svg or a .html file, not {}", path.display())]
    Extension { path: PathBuf },
    #[error("cannot read the run's event log {}: {source}", path.display())]
    Events { path: PathBuf, source: std::io::Error },
    #[error("cannot write the timeline {}: {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
}

impl TimelineError {
    pub fn explain(&self) -> (ErrorKind, Option<String>) {
        match self {
            TimelineError::Extension { .. } => (
                ErrorKind::BadInput,
                Some("name the file <name>.svg for the picture alone, or <name>.html for the picture with tables of the sums".into()),
            ),
            TimelineError::Events { .. } => (ErrorKind::Internal, None),
            TimelineError::Write { .. } => {
                (ErrorKind::Environment, Some("check that the folder exists and is writable".into()))
            }
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Svg,
    Html,
}

impl Format {
    /// The format a file name asks for: `.svg` or `.html` (in any case), nothing else.
    pub fn of(path: &Path) -> Result<Format, TimelineError> {
        let extension = path.extension().and_then(|ext| ext.to_str()).map(str::to_ascii_lowercase);
        match extension.as_deref() {
            Some("svg") => Ok(Format::Svg),
            Some("html") => Ok(Format::Html),
            _ => Err(TimelineError::Extension { path: path.to_owned() }),
        }
    }
}

/// What was written, for the command's output: where, and the sums.
#[derive(Debug, Clone, Serialize)]
pub struct Written {
    pub run_id: String,
    pub status: RunState,
    pub timeline: PathBuf,
    pub format: Format,
    pub wall_ms: u64,
    pub running_ms: u64,
    pub paused_ms: u64,
    pub attempts: usize,
    /// Milliseconds per part, summed over tasks (stacking over phases).
    pub parts_ms: std::collections::BTreeMap<&'static str, u64>,
    pub tasks: Vec<TaskSums>,
}

#[derive(Debug, Clone, Serialize)]
pub struct TaskSums {
    pub task: String,
    pub name: String,
    pub state: TaskState,
    pub parts_ms: std::collections::BTreeMap<&'static str, u64>,
    /// Attempts at the task that failed, the last one included if it did.
    pub failed_attempts: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl Written {
    /// The lines `wt status --timeline` prints without `--json`.
    pub fn describe(&self) -> Vec<String> {
        let parts: Vec<String> = Part::ALL
            .iter()
            .map(|part| format!("{} {}", part.label(), axis::duration(self.parts_ms[part.key()])))
            .collect();
        let mut wall = format!("wall time {}", axis::duration(self.wall_ms));
        if self.attempts > 1 {
            wall.push_str(&format!(
                " ({} running in {} attempts, {} paused)",
                axis::duration(self.running_ms),
                self.attempts,
                axis::duration(self.paused_ms)
            ));
        }
        vec![
            format!(
                "timeline of run {} ({}) written to {}",
                self.run_id,
                self.status.as_str(),
                self.timeline.display()
            ),
            format!("  {wall}"),
            format!("  {}", parts.join(", ")),
        ]
    }
}

/// Draws the run of `manifest` into `path` (`.svg` or `.html`, see [`Format::of`]).
pub fn write_timeline(
    layout: &StateLayout,
    manifest: &RunManifest,
    live: LiveState,
    path: &Path,
) -> Result<Written, TimelineError> {
    let format = Format::of(path)?;
    let events = layout.events(&manifest.run_id);
    let text = match std::fs::read_to_string(&events) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(source) => return Err(TimelineError::Events { path: events, source }),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64);
    let timeline =
        Timeline::build(&manifest.run_id, &outline(manifest), &records::parse(&text), state_of(live), now);
    let document = match format {
        Format::Svg => svg::render(&timeline),
        Format::Html => html::render(&timeline),
    };
    write_atomic(path, document.as_bytes())
        .map_err(|source| TimelineError::Write { path: path.to_owned(), source })?;
    Ok(written(&timeline, path, format))
}

fn outline(manifest: &RunManifest) -> Vec<PhaseOutline> {
    manifest
        .phases
        .iter()
        .map(|phase| PhaseOutline {
            number: phase.number,
            name: phase.name.clone(),
            strategy: phase.strategy.as_str().to_owned(),
            tasks: phase.tasks.iter().map(|task| (task.id, task.name.clone())).collect(),
        })
        .collect()
}

fn state_of(live: LiveState) -> RunState {
    match live {
        LiveState::Running => RunState::Running,
        LiveState::Dispatched => RunState::Dispatched,
        LiveState::Interrupted => RunState::Interrupted,
        LiveState::Failed => RunState::Failed,
        LiveState::Done => RunState::Done,
    }
}

fn written(timeline: &Timeline, path: &Path, format: Format) -> Written {
    let sums = timeline.sums();
    let tasks = timeline
        .tasks()
        .map(|task| TaskSums {
            task: task.id.to_string(),
            name: task.name.clone(),
            state: task.state,
            parts_ms: Part::ALL[..4].iter().map(|&part| (part.key(), task.time_in(part))).collect(),
            failed_attempts: task.failures,
            error: task.error.clone(),
        })
        .collect();
    Written {
        run_id: timeline.run_id.clone(),
        status: timeline.state,
        timeline: path.to_owned(),
        format,
        wall_ms: sums.wall_ms,
        running_ms: sums.running_ms(),
        paused_ms: sums.paused_ms,
        attempts: sums.attempts,
        parts_ms: sums.parts_ms.iter().map(|(part, ms)| (part.key(), *ms)).collect(),
        tasks,
    }
}
