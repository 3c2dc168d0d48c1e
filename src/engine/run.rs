//! The coordinator's view of a run: the plan, the manifest it keeps current, and the outlets for
//! events. Only the coordinating thread holds it; workers report to it.

use std::path::PathBuf;
use std::sync::Arc;

use super::EngineError;
use super::event::{Event, EventSink};
use super::workspace::Workspace;
use crate::plan::{Plan, TaskId};
use crate::store::{EventLog, FileLock, RunManifest, TaskRecord};

pub struct Run<'s> {
    pub ws: Arc<Workspace>,
    pub plan: Plan,
    pub manifest: RunManifest,
    pub max_parallel: usize,
    manifest_path: PathBuf,
    events: EventLog,
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
        let events = EventLog::new(&ws.layout.events(&ws.run_id));
        Run {
            ws: Arc::new(ws),
            plan,
            manifest,
            max_parallel,
            manifest_path,
            events,
            sink,
            _run_lock: run_lock,
        }
    }

    /// Records the event in `events.jsonl` and shows it. A full disk must not stop a run
    /// midway, so a failed log write is reported and the run goes on.
    pub fn emit(&self, event: Event) {
        if let Err(err) = self.events.append(&event) {
            self.sink.emit(&Event::Notice { message: format!("could not append to the event log: {err}") });
        }
        self.sink.emit(&event);
    }

    pub fn save(&mut self) -> Result<(), EngineError> {
        Ok(self.manifest.save(&self.manifest_path)?)
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
