//! What state a run is in now: its manifest, read together with its lock (a run whose process
//! died still says "running" in its manifest).

use serde::Serialize;

use super::{FileLock, ManifestError, RunManifest, RunState, StateLayout, TaskState};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LiveState {
    /// Its process holds the run lock.
    Running,
    /// Waiting for an orchestrator's subagents (`wt step`).
    Dispatched,
    /// Its process died before it finished.
    Interrupted,
    Failed,
    Done,
}

impl LiveState {
    pub fn of(layout: &StateLayout, manifest: &RunManifest) -> LiveState {
        let dispatched =
            manifest.phases.iter().flat_map(|p| &p.tasks).any(|t| t.state == TaskState::Dispatched);
        // A held lock means a process is at it, whatever the manifest last said.
        if FileLock::is_held(&layout.run_lock(&manifest.run_id)) {
            return LiveState::Running;
        }
        match manifest.state {
            RunState::Running if dispatched => LiveState::Dispatched,
            RunState::Running => LiveState::Interrupted,
            RunState::Failed => LiveState::Failed,
            RunState::Done => LiveState::Done,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            LiveState::Running => "running",
            LiveState::Dispatched => "dispatched",
            LiveState::Interrupted => "interrupted",
            LiveState::Failed => "failed",
            LiveState::Done => "done",
        }
    }
}

/// Every run of a repository: the manifests that could be read, oldest first, and the runs
/// whose manifest could not be (each still named, so one damaged run hides no other).
#[derive(Debug, Default)]
pub struct Runs {
    pub readable: Vec<RunManifest>,
    pub unreadable: Vec<(String, ManifestError)>,
}

impl StateLayout {
    pub fn runs(&self) -> Runs {
        let mut runs = Runs::default();
        let Ok(entries) = std::fs::read_dir(self.runs_dir()) else { return runs };
        for entry in entries.flatten() {
            let run_id = entry.file_name().to_string_lossy().into_owned();
            let path = self.manifest(&run_id);
            if !path.exists() {
                continue;
            }
            match RunManifest::load(&path) {
                Ok(manifest) => runs.readable.push(manifest),
                Err(err) => runs.unreadable.push((run_id, err)),
            }
        }
        runs.readable.sort_by_key(|m| (m.started_at, m.run_id.clone()));
        runs.unreadable.sort_by(|a, b| a.0.cmp(&b.0));
        runs
    }

    /// The ids of the readable runs that are in `state` now, sorted.
    pub fn run_ids_in(&self, state: LiveState) -> Vec<String> {
        let mut ids: Vec<String> = self
            .runs()
            .readable
            .iter()
            .filter(|m| LiveState::of(self, m) == state)
            .map(|m| m.run_id.clone())
            .collect();
        ids.sort();
        ids
    }
}
