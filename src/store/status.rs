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

impl StateLayout {
    /// The runs with a manifest, oldest first.
    pub fn runs(&self) -> Result<Vec<RunManifest>, ManifestError> {
        let Ok(entries) = std::fs::read_dir(self.runs_dir()) else { return Ok(Vec::new()) };
        let mut manifests = Vec::new();
        for entry in entries.flatten() {
            let path = self.manifest(&entry.file_name().to_string_lossy());
            if path.exists() {
                manifests.push(RunManifest::load(&path)?);
            }
        }
        manifests.sort_by_key(|m| (m.started_at, m.run_id.clone()));
        Ok(manifests)
    }
}
