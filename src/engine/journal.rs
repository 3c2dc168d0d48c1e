//! The write-ahead journal: every step that mutates git is appended to the run's `events.jsonl`
//! as an intent before it runs and as an outcome after, so a resumed run (and a person reading
//! the log) knows what was under way when a process died.
//!
//! Crash injection for tests: `WT_CRASH_AT=<step>` aborts the process right after the intent of
//! the first matching step is journaled, `WT_CRASH_AT=<step>:after` right after the step
//! succeeded, before anything else is recorded. `<step>@<target>` matches one target only
//! (a task number such as `2.1`, or a branch).

use std::collections::HashSet;
use std::path::Path;

use serde::Serialize;

use super::EngineError;
use crate::store::EventLog;

/// Every step the journal records or may crash at; the names are what `WT_CRASH_AT` and the
/// `step` field of `events.jsonl` use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Step {
    Exclude,
    SpiceInit,
    TrackBase,
    WorktreeRepair,
    WorktreeAdd,
    /// Crash point only: a new worktree registered, its files not written yet.
    WorktreeFill,
    BranchCreate,
    BranchTrack,
    Agent,
    Commit,
    Verify,
    Release,
    /// Records a parallel task's branch on the one before it (no rebase yet).
    Retarget,
    UpstackOnto,
    CheckoutTop,
    Reanchor,
    RebaseAbort,
    CleanupWorktree,
    CleanupBranches,
    /// A worktree moved into the pool of recycled worktrees, and out of it.
    PoolPark,
    PoolTake,
    /// Crash points only, around state writes (and, for the pool, right after its worktree moved,
    /// before anything else).
    PoolParkMoved,
    PoolTakeMoved,
    Claim,
    Manifest,
    Finish,
    CleanupState,
}

impl Step {
    const ALL: [Step; 27] = [
        Step::Exclude,
        Step::SpiceInit,
        Step::TrackBase,
        Step::WorktreeRepair,
        Step::WorktreeAdd,
        Step::WorktreeFill,
        Step::BranchCreate,
        Step::BranchTrack,
        Step::Agent,
        Step::Commit,
        Step::Verify,
        Step::Release,
        Step::Retarget,
        Step::UpstackOnto,
        Step::CheckoutTop,
        Step::Reanchor,
        Step::RebaseAbort,
        Step::CleanupWorktree,
        Step::CleanupBranches,
        Step::PoolPark,
        Step::PoolTake,
        Step::PoolParkMoved,
        Step::PoolTakeMoved,
        Step::Claim,
        Step::Manifest,
        Step::Finish,
        Step::CleanupState,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Step::Exclude => "exclude",
            Step::SpiceInit => "spice-init",
            Step::TrackBase => "track-base",
            Step::WorktreeRepair => "worktree-repair",
            Step::WorktreeAdd => "worktree-add",
            Step::WorktreeFill => "worktree-fill",
            Step::BranchCreate => "branch-create",
            Step::BranchTrack => "branch-track",
            Step::Agent => "agent",
            Step::Commit => "commit",
            Step::Verify => "verify",
            Step::Release => "release",
            Step::Retarget => "retarget",
            Step::UpstackOnto => "upstack-onto",
            Step::CheckoutTop => "checkout-top",
            Step::Reanchor => "reanchor",
            Step::RebaseAbort => "rebase-abort",
            Step::CleanupWorktree => "cleanup-worktree",
            Step::CleanupBranches => "cleanup-branches",
            Step::PoolPark => "pool-park",
            Step::PoolTake => "pool-take",
            Step::PoolParkMoved => "pool-park-moved",
            Step::PoolTakeMoved => "pool-take-moved",
            Step::Claim => "claim",
            Step::Manifest => "manifest",
            Step::Finish => "finish",
            Step::CleanupState => "cleanup-state",
        }
    }

    fn from_name(name: &str) -> Option<Step> {
        Step::ALL.into_iter().find(|step| step.name() == name)
    }
}

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
        step: Step,
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
    pub fn crash_point(&self, step: Step, target: &str, after: bool) {
        let Some(spec) = &self.crash_at else { return };
        let (spec, spec_after) = match spec.strip_suffix(":after") {
            Some(rest) => (rest, true),
            None => (spec.as_str(), false),
        };
        let (spec_step, spec_target) = match spec.split_once('@') {
            Some((step, target)) => (step, Some(target)),
            None => (spec, None),
        };
        if spec_after == after && spec_step == step.name() && spec_target.is_none_or(|t| t == target) {
            eprintln!(
                "wt: WT_CRASH_AT={}: aborting at step {} ({target})",
                self.crash_at.as_deref().unwrap_or(""),
                step.name()
            );
            std::process::abort();
        }
    }

    /// The `(step, target)` pairs whose intent was journaled with no outcome after it: what a
    /// killed process was doing.
    pub fn unfinished(path: &Path) -> HashSet<(Step, String)> {
        let mut open = HashSet::new();
        let Ok(text) = std::fs::read_to_string(path) else { return open };
        for line in text.lines() {
            let Ok(record) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            if record["event"] != "step" {
                continue;
            }
            let Some(step) = record["step"].as_str().and_then(Step::from_name) else { continue };
            let key = (step, record["target"].as_str().unwrap_or_default().to_owned());
            if record["at"] == "intent" {
                open.insert(key);
            } else {
                open.remove(&key);
            }
        }
        open
    }

    fn record(&self, step: Step, target: &str, at: &'static str, error: Option<String>) {
        // The journal is advisory next to the manifest: a failed append must not stop the run.
        let _ = self.log.append(&StepRecord { event: "step", step: step.name(), target, at, error });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_names_are_unique_and_read_back() {
        let names: HashSet<&str> = Step::ALL.iter().map(|step| step.name()).collect();
        assert_eq!(names.len(), Step::ALL.len());
        for step in Step::ALL {
            assert_eq!(Step::from_name(step.name()), Some(step));
        }
    }

    #[test]
    fn unfinished_steps_are_intents_without_an_outcome() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("events.jsonl");
        let journal = Journal::new(EventLog::new(&path));
        journal.step(Step::Commit, "1.1", || Ok(())).unwrap();
        journal.record(Step::WorktreeAdd, "2.1", "intent", None);
        assert_eq!(Journal::unfinished(&path), HashSet::from([(Step::WorktreeAdd, "2.1".to_owned())]));
    }
}
