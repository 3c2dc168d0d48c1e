//! The lines of a run's `events.jsonl` that a timeline needs, read leniently: a line this build
//! does not know (a newer event, a torn last line of a killed run) is skipped, never an error.
//! Also where each attempt at the run (each `run_started`) begins and ends.

use serde::Deserialize;

use crate::plan::TaskId;

/// One line of the event log with its time (`ts`, milliseconds since the epoch).
#[derive(Debug, Clone, PartialEq)]
pub struct Record {
    pub ts: u64,
    pub line: Line,
}

/// The events a timeline draws (see `engine::Event`), and the journal's `step` records, whose
/// names tell a new attempt's preparation from the end of the attempt before it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Line {
    RunStarted {},
    PhaseStarted {
        phase: usize,
        name: String,
    },
    TaskStarted {
        task: TaskId,
        name: String,
    },
    TaskActivity {
        task: TaskId,
        activity: String,
    },
    TaskSkipped {
        task: TaskId,
        name: String,
    },
    TaskFinished {
        task: TaskId,
        name: String,
        ok: bool,
        #[serde(default)]
        error: Option<String>,
    },
    PhaseLinearizing {
        phase: usize,
    },
    PhaseFinished {
        phase: usize,
        ok: bool,
    },
    RunFinished {
        ok: bool,
    },
    Notice {},
    Step {
        step: String,
        #[serde(default)]
        target: String,
    },
    #[serde(other)]
    Other,
}

/// The records of an event log, in the order they were written.
pub fn parse(text: &str) -> Vec<Record> {
    text.lines().filter_map(parse_line).collect()
}

fn parse_line(text: &str) -> Option<Record> {
    let value: serde_json::Value = serde_json::from_str(text).ok()?;
    let ts = value.get("ts")?.as_u64()?;
    let line = Line::deserialize(value).ok()?;
    Some(Record { ts, line })
}

/// One attempt at the run: from the first line its process wrote to its last, as indices into
/// the records.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Attempt {
    pub first: usize,
    pub last: usize,
}

/// Splits the records into attempts. Each attempt has one `run_started`; the lines that prepare
/// it (the run's ignore rule, git-spice's record, the main worktree, notices of what a resume
/// found) come just before it and belong to it, not to the attempt before. Lines before the
/// first `run_started` belong to the first attempt.
pub fn attempts(records: &[Record]) -> Vec<Attempt> {
    let starts: Vec<usize> = records
        .iter()
        .enumerate()
        .filter(|(_, record)| matches!(record.line, Line::RunStarted {}))
        .map(|(index, _)| index)
        .collect();
    if records.is_empty() {
        return Vec::new();
    }
    let mut firsts = Vec::with_capacity(starts.len().max(1));
    for (k, &start) in starts.iter().enumerate() {
        let floor = if k == 0 { 0 } else { starts[k - 1] + 1 };
        let mut first = start;
        while first > floor && prepares_a_run(&records[first - 1].line) {
            first -= 1;
        }
        firsts.push(if k == 0 { 0 } else { first });
    }
    if firsts.is_empty() {
        firsts.push(0);
    }
    firsts
        .iter()
        .enumerate()
        .map(|(k, &first)| Attempt {
            first,
            last: firsts.get(k + 1).map_or(records.len() - 1, |next| next.saturating_sub(1).max(first)),
        })
        .collect()
}

/// Whether a line is written while a run is prepared, before its `run_started`.
fn prepares_a_run(line: &Line) -> bool {
    match line {
        Line::Notice {} => true,
        Line::Step { step, target } => {
            matches!(step.as_str(), "exclude" | "spice-init" | "track-base" | "worktree-repair")
                || (step == "worktree-add" && target == "main")
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_events_and_torn_lines_are_skipped() {
        let text = concat!(
            r#"{"event":"run_started","run_id":"a1b2c3","resumed":false,"ts":10}"#,
            "\n",
            r#"{"event":"something_new","ts":11}"#,
            "\n",
            r#"{"event":"task_started","task":"1.1","name":"a","ts":12}"#,
            "\n",
            r#"{"event":"task_activity","task":"1.1","activity":"age"#,
        );
        let records = parse(text);
        assert_eq!(records.len(), 3);
        assert_eq!(records[1].line, Line::Other);
        assert_eq!(
            records[2],
            Record {
                ts: 12,
                line: Line::TaskStarted { task: TaskId { phase: 1, task: 1 }, name: "a".into() }
            }
        );
    }

    fn step(step: &str, target: &str, ts: u64) -> Record {
        Record { ts, line: Line::Step { step: step.into(), target: target.into() } }
    }

    fn at(line: Line, ts: u64) -> Record {
        Record { ts, line }
    }

    #[test]
    fn a_resumed_attempt_begins_with_its_preparation() {
        let records = vec![
            step("exclude", "info/exclude", 0),
            at(Line::RunStarted {}, 1),
            step("agent", "1.1", 2),
            step("worktree-repair", "main", 100),
            at(Line::Notice {}, 101),
            at(Line::RunStarted {}, 102),
            at(Line::RunFinished { ok: true }, 103),
        ];
        assert_eq!(attempts(&records), [Attempt { first: 0, last: 2 }, Attempt { first: 3, last: 6 }]);
    }

    #[test]
    fn a_log_without_run_started_is_one_attempt() {
        let records = vec![step("exclude", "info/exclude", 0), step("spice-init", "main", 5)];
        assert_eq!(attempts(&records), [Attempt { first: 0, last: 1 }]);
        assert!(attempts(&[]).is_empty());
    }
}
