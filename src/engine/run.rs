//! The coordinator's view of a run: the plan, the manifest it keeps current, and the outlets for
//! events. Only the coordinating thread holds it; workers report to it.

use std::path::PathBuf;
use std::sync::Arc;

use super::EngineError;
use super::event::{Event, EventSink};
use super::workspace::Workspace;
use crate::plan::{Plan, Task, TaskId};
use crate::store::{FileLock, RunManifest, TaskRecord};

pub struct Run<'s> {
    pub ws: Arc<Workspace>,
    pub plan: Plan,
    pub manifest: RunManifest,
    pub max_parallel: usize,
    manifest_path: PathBuf,
    sink: &'s dyn EventSink,
    _run_lock: FileLock,
}

impl<'s> Run<'s> {
    pub fn new(
        ws: Workspace,
        plan: Plan,
        manifest: RunManifest,
        max_parallel: usize,
        sink: &'s dyn EventSink,
        run_lock: FileLock,
    ) -> Self {
        let manifest_path = ws.layout.manifest(&ws.run_id);
        Run { ws: Arc::new(ws), plan, manifest, max_parallel, manifest_path, sink, _run_lock: run_lock }
    }

    /// Records the event in `events.jsonl` and shows it. A full disk must not stop a run
    /// midway, so a failed log write is reported and the run goes on.
    pub fn emit(&self, event: Event) {
        if let Err(err) = self.ws.journal.log().append(&event) {
            self.sink.emit(&Event::Notice { message: format!("could not append to the event log: {err}") });
        }
        self.sink.emit(&event);
    }

    pub fn save(&mut self) -> Result<(), EngineError> {
        Ok(self.manifest.save(&self.manifest_path)?)
    }

    /// Records, before the task's branch is created, the commit it starts from: from then on a
    /// branch of that name is this run's. A branch that exists without such a record is someone
    /// else's and is refused. Returns the task's base commit.
    pub fn claim_task(&mut self, task: &Task, below: &str) -> Result<String, EngineError> {
        if let Some(base) = self.manifest.task(task.id).and_then(|record| record.base_commit.clone()) {
            return Ok(base);
        }
        if self.ws.repo.branch_exists(&task.branch)? {
            return Err(EngineError::BranchTaken {
                branch: task.branch.clone(),
                run_id: self.ws.run_id.clone(),
            });
        }
        let base = self.ws.repo.branch_commit(below)?.unwrap_or_default();
        self.update_task(task.id, |record| record.base_commit = Some(base.clone()))?;
        self.ws.journal.crash_point("claim", &task.id.to_string(), true);
        Ok(base)
    }

    pub fn update_task(
        &mut self,
        id: TaskId,
        change: impl FnOnce(&mut TaskRecord),
    ) -> Result<(), EngineError> {
        if let Some(record) = self.manifest.task_mut(id) {
            change(record);
        }
        self.save()
    }
}
