//! The timeline of a run, built from its event log and nothing else (pure, so tests build one
//! from a few records): per task the parts it spent time in, per phase its span and its
//! stacking, and the pauses between attempts of a resumed run.
//!
//! How the events mark the parts: `worktree preparation` runs from the task's `preparing`
//! activity (parallel phases) or its `task_started` (sequential ones) to its `agent` activity;
//! each activity lasts until the next one or the task's `task_finished`; stacking runs from the
//! phase's `phase_linearizing` to its `phase_finished`. A part still open when an attempt ends
//! was interrupted there; one still open in a running run lasts until now.

use serde::Serialize;

use super::records::{Line, Record, attempts};
use crate::plan::TaskId;

/// Where a task's time goes; stacking belongs to a phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Part {
    Preparing,
    Agent,
    Committing,
    Verifying,
    Stacking,
}

impl Part {
    pub const ALL: [Part; 5] =
        [Part::Preparing, Part::Agent, Part::Committing, Part::Verifying, Part::Stacking];

    /// The part an activity of `events.jsonl` starts.
    fn of_activity(activity: &str) -> Option<Part> {
        Some(match activity {
            "preparing" => Part::Preparing,
            "agent" => Part::Agent,
            "committing" => Part::Committing,
            "verifying" => Part::Verifying,
            _ => return None,
        })
    }

    pub fn key(self) -> &'static str {
        match self {
            Part::Preparing => "preparing",
            Part::Agent => "agent",
            Part::Committing => "committing",
            Part::Verifying => "verifying",
            Part::Stacking => "stacking",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            Part::Preparing => "worktree preparation",
            Part::Agent => "agent",
            Part::Committing => "commit",
            Part::Verifying => "verify",
            Part::Stacking => "stacking",
        }
    }
}

/// Where the run is now, as the timeline says it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunState {
    /// A process is at it: the timeline runs until now.
    Running,
    /// Waiting for an orchestrator's subagents (`wt step`): also until now.
    Dispatched,
    /// Its process died; the timeline ends at its last event.
    Interrupted,
    Failed,
    Done,
}

impl RunState {
    pub fn as_str(self) -> &'static str {
        match self {
            RunState::Running => "running",
            RunState::Dispatched => "dispatched",
            RunState::Interrupted => "interrupted",
            RunState::Failed => "failed",
            RunState::Done => "done",
        }
    }

    pub fn is_live(self) -> bool {
        matches!(self, RunState::Running | RunState::Dispatched)
    }
}

/// A stretch of time, in milliseconds since the epoch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Span {
    pub from: u64,
    pub to: u64,
}

impl Span {
    pub fn length(self) -> u64 {
        self.to.saturating_sub(self.from)
    }
}

/// How a bar ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    Done,
    /// The task failed in this part, with its error.
    Failed(String),
    /// The attempt stopped while the part was under way.
    Interrupted,
    /// Still under way (the run is live).
    Open,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Bar {
    pub part: Part,
    pub span: Span,
    pub end: End,
}

/// What became of a task, as the last event about it says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    NotRun,
    Running,
    Verified,
    Failed,
    Interrupted,
}

#[derive(Debug, Clone)]
pub struct TaskRow {
    pub id: TaskId,
    pub name: String,
    pub bars: Vec<Bar>,
    pub state: TaskState,
    /// The error of its last attempt, if that failed.
    pub error: Option<String>,
    /// How many of its attempts failed (a resumed run retries a failed task).
    pub failures: usize,
}

impl TaskRow {
    pub fn time_in(&self, part: Part) -> u64 {
        self.bars.iter().filter(|bar| bar.part == part).map(|bar| bar.span.length()).sum()
    }

    /// What became of it: `verified`, `failed`, `verified after 1 failed attempt` …
    pub fn outcome(&self) -> String {
        let state = match self.state {
            TaskState::NotRun => "not run",
            TaskState::Running => "running",
            TaskState::Verified => "verified",
            TaskState::Failed => "failed",
            TaskState::Interrupted => "interrupted",
        };
        let earlier = self.failures.saturating_sub(usize::from(self.state == TaskState::Failed));
        match earlier {
            0 => state.to_owned(),
            1 => format!("{state} after 1 failed attempt"),
            n => format!("{state} after {n} failed attempts"),
        }
    }

    /// `P.T name`, as the picture labels it.
    pub fn label(&self) -> String {
        format!("{} {}", self.id, self.name)
    }
}

#[derive(Debug, Clone)]
pub struct PhaseRow {
    pub number: usize,
    pub name: String,
    pub strategy: String,
    /// From each `phase_started` to its `phase_finished` (or the attempt's end).
    pub spans: Vec<Span>,
    pub stacking: Vec<Bar>,
    pub tasks: Vec<TaskRow>,
}

/// A phase of the plan and its tasks, as the run's manifest lists them: the rows of the picture,
/// drawn even for tasks that never started.
#[derive(Debug, Clone)]
pub struct PhaseOutline {
    pub number: usize,
    pub name: String,
    pub strategy: String,
    pub tasks: Vec<(TaskId, String)>,
}

#[derive(Debug, Clone)]
pub struct Timeline {
    pub run_id: String,
    pub state: RunState,
    /// The first event's time, and the last's (or now, for a live run).
    pub span: Span,
    /// Between one attempt's last event and the next attempt's first.
    pub pauses: Vec<Span>,
    pub phases: Vec<PhaseRow>,
}

/// The time per part across tasks, and the run's wall time.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Sums {
    pub parts_ms: Vec<(Part, u64)>,
    /// From the first event to the last (or now).
    pub wall_ms: u64,
    /// Of that, between attempts, when no process was at the run.
    pub paused_ms: u64,
    pub attempts: usize,
}

impl Sums {
    pub fn running_ms(&self) -> u64 {
        self.wall_ms.saturating_sub(self.paused_ms)
    }

    pub fn of(&self, part: Part) -> u64 {
        self.parts_ms.iter().find(|(p, _)| *p == part).map_or(0, |(_, ms)| *ms)
    }
}

impl Timeline {
    /// The timeline of `records` (an event log), with a row for every task of `outline`.
    /// `now` ends a live run's open parts.
    pub fn build(
        run_id: &str,
        outline: &[PhaseOutline],
        records: &[Record],
        state: RunState,
        now: u64,
    ) -> Timeline {
        let mut builder = Builder::new(outline);
        let attempts = attempts(records);
        let mut pauses = Vec::new();
        for (k, attempt) in attempts.iter().enumerate() {
            let lines = &records[attempt.first..=attempt.last];
            lines.iter().for_each(|record| builder.apply(record));
            let last = attempts.len() == k + 1;
            let stop = lines.iter().map(|record| record.ts).max().unwrap_or(0);
            if last && state.is_live() {
                builder.close_all(now.max(stop), End::Open);
            } else {
                builder.close_all(stop, End::Interrupted);
            }
            if let Some(next) = attempts.get(k + 1) {
                let resumed = records[next.first].ts;
                pauses.push(Span { from: stop, to: resumed.max(stop) });
            }
        }
        let from = records.iter().map(|record| record.ts).min().unwrap_or(now);
        let mut to = records.iter().map(|record| record.ts).max().unwrap_or(from);
        if state.is_live() {
            to = to.max(now);
        }
        Timeline { run_id: run_id.to_owned(), state, span: Span { from, to }, pauses, phases: builder.phases }
    }

    pub fn tasks(&self) -> impl Iterator<Item = &TaskRow> {
        self.phases.iter().flat_map(|phase| &phase.tasks)
    }

    pub fn sums(&self) -> Sums {
        let parts_ms = Part::ALL
            .iter()
            .map(|&part| {
                let ms = match part {
                    Part::Stacking => {
                        self.phases.iter().flat_map(|p| &p.stacking).map(|bar| bar.span.length()).sum()
                    }
                    _ => self.tasks().map(|task| task.time_in(part)).sum(),
                };
                (part, ms)
            })
            .collect();
        let paused_ms = self.pauses.iter().map(|pause| pause.length()).sum();
        Sums { parts_ms, wall_ms: self.span.length(), paused_ms, attempts: self.pauses.len() + 1 }
    }

    /// `t`'s distance from the start with the pauses before it cut out: where the picture's time
    /// axis puts it. A time inside a pause is where the pause begins.
    pub fn running_offset(&self, t: u64) -> u64 {
        let t = t.clamp(self.span.from, self.span.to);
        let paused: u64 = self.pauses.iter().map(|pause| t.clamp(pause.from, pause.to) - pause.from).sum();
        t - self.span.from - paused
    }
}

/// Applies events in order, keeping each task's and phase's open part.
struct Builder {
    phases: Vec<PhaseRow>,
}

impl Builder {
    fn new(outline: &[PhaseOutline]) -> Builder {
        let phases = outline
            .iter()
            .map(|phase| PhaseRow {
                number: phase.number,
                name: phase.name.clone(),
                strategy: phase.strategy.clone(),
                spans: Vec::new(),
                stacking: Vec::new(),
                tasks: phase
                    .tasks
                    .iter()
                    .map(|(id, name)| TaskRow {
                        id: *id,
                        name: name.clone(),
                        bars: Vec::new(),
                        state: TaskState::NotRun,
                        error: None,
                        failures: 0,
                    })
                    .collect(),
            })
            .collect();
        Builder { phases }
    }

    /// The phase's row, added (in number order) if the outline lacks it.
    fn phase(&mut self, number: usize, name: &str) -> &mut PhaseRow {
        let index = match self.phases.iter().position(|phase| phase.number >= number) {
            Some(index) if self.phases[index].number == number => {
                if self.phases[index].name.is_empty() {
                    self.phases[index].name = name.to_owned();
                }
                index
            }
            place => {
                let index = place.unwrap_or(self.phases.len());
                let row = PhaseRow {
                    number,
                    name: name.to_owned(),
                    strategy: String::new(),
                    spans: Vec::new(),
                    stacking: Vec::new(),
                    tasks: Vec::new(),
                };
                self.phases.insert(index, row);
                index
            }
        };
        &mut self.phases[index]
    }

    /// The task's row, added (in id order) if the outline lacks it.
    fn task(&mut self, id: TaskId, name: &str) -> &mut TaskRow {
        let phase = self.phase(id.phase, "");
        let index = match phase.tasks.iter().position(|task| task.id >= id) {
            Some(index) if phase.tasks[index].id == id => {
                if phase.tasks[index].name.is_empty() {
                    phase.tasks[index].name = name.to_owned();
                }
                index
            }
            place => {
                let index = place.unwrap_or(phase.tasks.len());
                let row = TaskRow {
                    id,
                    name: name.to_owned(),
                    bars: Vec::new(),
                    state: TaskState::NotRun,
                    error: None,
                    failures: 0,
                };
                phase.tasks.insert(index, row);
                index
            }
        };
        &mut phase.tasks[index]
    }

    fn apply(&mut self, record: &Record) {
        let ts = record.ts;
        match &record.line {
            Line::PhaseStarted { phase, name } => {
                let row = self.phase(*phase, name);
                if row.spans.last().is_none_or(|span| span.to != u64::MAX) {
                    row.spans.push(Span { from: ts, to: u64::MAX });
                }
            }
            Line::TaskStarted { task, name } => {
                let row = self.task(*task, name);
                row.state = TaskState::Running;
                if open(&row.bars).is_none() {
                    row.bars.push(Bar {
                        part: Part::Preparing,
                        span: Span { from: ts, to: u64::MAX },
                        end: End::Open,
                    });
                }
            }
            Line::TaskActivity { task, activity } => {
                let Some(part) = Part::of_activity(activity) else { return };
                let row = self.task(*task, "");
                row.state = TaskState::Running;
                if open(&row.bars).is_some_and(|bar| bar.part == part) {
                    return;
                }
                close(&mut row.bars, ts, End::Done);
                row.bars.push(Bar { part, span: Span { from: ts, to: u64::MAX }, end: End::Open });
            }
            Line::TaskSkipped { task, name } => {
                let row = self.task(*task, name);
                if row.state == TaskState::NotRun {
                    row.state = TaskState::Verified;
                }
            }
            Line::TaskFinished { task, name, ok, error } => {
                finish_task(self.task(*task, name), ts, *ok, error)
            }
            Line::PhaseLinearizing { phase } => {
                let row = self.phase(*phase, "");
                if open(&row.stacking).is_none() {
                    row.stacking.push(Bar {
                        part: Part::Stacking,
                        span: Span { from: ts, to: u64::MAX },
                        end: End::Open,
                    });
                }
            }
            Line::PhaseFinished { phase, ok } => {
                let row = self.phase(*phase, "");
                let end = if *ok { End::Done } else { End::Failed("the phase failed".into()) };
                close(&mut row.stacking, ts, end);
                close_spans(&mut row.spans, ts);
            }
            Line::RunStarted {}
            | Line::RunFinished { .. }
            | Line::Notice {}
            | Line::Step { .. }
            | Line::Other => {}
        }
    }

    /// Ends every open part at `ts` (an attempt's end, or now).
    fn close_all(&mut self, ts: u64, end: End) {
        for phase in &mut self.phases {
            close_spans(&mut phase.spans, ts);
            close(&mut phase.stacking, ts, end.clone());
            for task in &mut phase.tasks {
                if open(&task.bars).is_some() {
                    close(&mut task.bars, ts, end.clone());
                    if end == End::Interrupted {
                        task.state = TaskState::Interrupted;
                    }
                }
            }
        }
    }
}

fn finish_task(row: &mut TaskRow, ts: u64, ok: bool, error: &Option<String>) {
    let failure = (!ok).then(|| error.clone().unwrap_or_else(|| "failed".into()));
    row.state = if ok { TaskState::Verified } else { TaskState::Failed };
    row.error = failure.clone();
    row.failures += usize::from(!ok);
    let end = failure.map_or(End::Done, End::Failed);
    if open(&row.bars).is_some() {
        close(&mut row.bars, ts, end);
    } else if matches!(end, End::Failed(_)) {
        // Finished with no part seen (a subagent's task, checked by `wt step`): a mark where
        // it was found failed.
        row.bars.push(Bar { part: Part::Agent, span: Span { from: ts, to: ts }, end });
    }
}

fn open(bars: &[Bar]) -> Option<&Bar> {
    bars.last().filter(|bar| bar.span.to == u64::MAX)
}

fn close(bars: &mut [Bar], ts: u64, end: End) {
    if let Some(bar) = bars.last_mut().filter(|bar| bar.span.to == u64::MAX) {
        bar.span.to = ts.max(bar.span.from);
        bar.end = end;
    }
}

fn close_spans(spans: &mut [Span], ts: u64) {
    if let Some(span) = spans.last_mut().filter(|span| span.to == u64::MAX) {
        span.to = ts.max(span.from);
    }
}

#[cfg(test)]
#[path = "model_tests.rs"]
mod tests;
