//! The write-ahead journal: every step that mutates git is appended to the run's `events.jsonl`
//! as an intent before it runs and as an outcome after, so a resumed run (and a person reading
//! the log) knows what was under way when a process died.
//!
//! Crash injection for tests: `WT_CRASH_AT=<step>` aborts the process right after the intent of
//! the first matching step is journaled, `WT_CRASH_AT=<step>:after` right after the step
//! succeeded, before anything else is recorded. `<step>@<target>` matches one target only
//! (a task number such as `2.1`, or a branch).

use serde::Serialize;

use super::EngineError;
use crate::store::EventLog;

#[derive(Debug, Clone)]
pub struct Journal {
    log: EventLog,
    crash_at: Option<String>,
}

#[derive(Serialize)]
struct StepRecord<'a> {
    event: &'static str,
    step: &'a str,
    target: &'a str,
    at: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
}

impl Journal {
    pub fn new(log: EventLog) -> Self {
        Journal { log, crash_at: std::env::var("WT_CRASH_AT").ok().filter(|v| !v.is_empty()) }
    }

    pub fn log(&self) -> &EventLog {
        &self.log
    }

    /// Journals the intent, runs `mutation`, journals the outcome.
    pub fn step<T>(
        &self,
        step: &str,
        target: &str,
        mutation: impl FnOnce() -> Result<T, EngineError>,
    ) -> Result<T, EngineError> {
        self.record(step, target, "intent", None);
        self.crash_point(step, target, false);
        let result = mutation();
        match &result {
            Ok(_) => {
                self.record(step, target, "done", None);
                self.crash_point(step, target, true);
            }
            Err(err) => self.record(step, target, "failed", Some(err.to_string())),
        }
        result
    }

    /// A crash point outside any git mutation (for steps that only write state).
    pub fn crash_point(&self, step: &str, target: &str, after: bool) {
        let Some(spec) = &self.crash_at else { return };
        let (spec, spec_after) = match spec.strip_suffix(":after") {
            Some(rest) => (rest, true),
            None => (spec.as_str(), false),
        };
        let (spec_step, spec_target) = match spec.split_once('@') {
            Some((step, target)) => (step, Some(target)),
            None => (spec, None),
        };
        if spec_after == after && spec_step == step && spec_target.is_none_or(|t| t == target) {
            eprintln!(
                "wt: WT_CRASH_AT={}: aborting at step {step} ({target})",
                self.crash_at.as_deref().unwrap_or("")
            );
            std::process::abort();
        }
    }

    /// The `(step, target)` pairs whose intent was journaled with no outcome after it: what a
    /// killed process was doing.
    pub fn unfinished(path: &std::path::Path) -> std::collections::HashSet<(String, String)> {
        let mut open = std::collections::HashSet::new();
        let Ok(text) = std::fs::read_to_string(path) else { return open };
        for line in text.lines() {
            let Ok(record) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            if record["event"] != "step" {
                continue;
            }
            let key = (
                record["step"].as_str().unwrap_or_default().to_owned(),
                record["target"].as_str().unwrap_or_default().to_owned(),
            );
            if record["at"] == "intent" {
                open.insert(key);
            } else {
                open.remove(&key);
            }
        }
        open
    }

    fn record(&self, step: &str, target: &str, at: &'static str, error: Option<String>) {
        // The journal is advisory next to the manifest: a failed append must not stop the run.
        let _ = self.log.append(&StepRecord { event: "step", step, target, at, error });
    }
}
