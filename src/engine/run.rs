//! The coordinator's view of a run: the plan, the manifest it keeps current, and the outlets for
//! events. Only the coordinating thread holds it; workers report to it.

use std::path::PathBuf;
use std::sync::Arc;

use super::EngineError;
use super::event::{Activity, Event, EventSink};
use super::journal::Step;
use super::task::{Progress, TaskOutcome};
use super::workspace::Workspace;
use crate::git::Repo;
use crate::plan::{Plan, Task, TaskId};
use crate::store::{FileLock, LockError, RunManifest, StateLayout, TaskRecord, TaskState};

pub struct Run<'s> {
    pub ws: Arc<Workspace>,
    pub plan: Plan,
    pub manifest: RunManifest,
    pub max_parallel: usize,
    /// Whether the run existed before this process took it up.
    pub resumed: bool,
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
        resumed: bool,
        sink: &'s dyn EventSink,
        run_lock: FileLock,
    ) -> Self {
        let manifest_path = ws.layout.manifest(&ws.run_id);
        Run {
            ws: Arc::new(ws),
            plan,
            manifest,
            max_parallel,
            resumed,
            manifest_path,
            sink,
            _run_lock: run_lock,
        }
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

    /// The record of a task of the plan (every task has one).
    pub fn record(&self, id: TaskId) -> Option<&TaskRecord> {
        self.manifest.task(id)
    }

    pub fn task_state(&self, id: TaskId) -> TaskState {
        self.record(id).map_or(TaskState::Pending, |record| record.state)
    }

    /// Where the task works: its own worktree in a parallel phase, else the main one.
    pub fn task_worktree(&self, id: TaskId) -> PathBuf {
        self.record(id).map_or_else(|| self.ws.main_worktree(), |record| record.worktree.clone())
    }

    /// Records, before the task's branch is created, the commit it starts from: from then on a
    /// branch of that name is this run's. A branch that exists without such a record is someone
    /// else's and is refused. Returns the task's base commit.
    pub fn claim_task(&mut self, task: &Task, below: &str) -> Result<String, EngineError> {
        Ok(self.claim_tasks(&[task], below)?.remove(0))
    }

    /// [`Run::claim_task`] for several tasks on the same base, with one manifest write for all
    /// (a parallel phase claims every task before it creates any branch). Refuses before it
    /// records anything if one of the branches is someone else's.
    pub fn claim_tasks(&mut self, tasks: &[&Task], below: &str) -> Result<Vec<String>, EngineError> {
        let mut bases = Vec::with_capacity(tasks.len());
        let mut new = Vec::new();
        let mut base = None;
        for task in tasks {
            if let Some(recorded) = self.record(task.id).and_then(|record| record.base_commit.clone()) {
                bases.push(recorded);
                continue;
            }
            if self.ws.repo.branch_exists(&task.branch)? {
                return Err(EngineError::BranchTaken {
                    branch: task.branch.clone(),
                    run_id: self.ws.run_id.clone(),
                });
            }
            if base.is_none() {
                base = Some(self.ws.repo.branch_commit(below)?.unwrap_or_default());
            }
            bases.push(base.clone().unwrap_or_default());
            new.push(task.id);
        }
        if let Some(base) = base {
            for id in &new {
                if let Some(record) = self.manifest.task_mut(*id) {
                    record.base_commit = Some(base.clone());
                }
            }
            self.save()?;
            for id in new {
                self.ws.journal.crash_point(Step::Claim, &id.to_string(), true);
            }
        }
        Ok(bases)
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

    /// Records that the task's agent starts now, in this process.
    pub fn start_task(&mut self, id: TaskId) -> Result<(), EngineError> {
        self.update_task(id, |record| {
            record.state = TaskState::Running;
            record.pid = Some(std::process::id());
            record.error = None;
        })
    }

    /// Records a finished task in the manifest and the event stream; returns whether it passed.
    pub fn record_outcome(&mut self, task: &Task, outcome: TaskOutcome) -> Result<bool, EngineError> {
        let (state, error) = match outcome {
            TaskOutcome::Verified => (TaskState::Verified, None),
            TaskOutcome::Failed(error) => (TaskState::Failed, Some(error)),
        };
        let log = self.ws.layout.task_log(&self.ws.run_id, task.id);
        self.update_task(task.id, |record| {
            record.state = state;
            record.pid = None;
            record.error = error.clone();
        })?;
        // The snapshot taken before the task is checked against now; a stale one must not be
        // taken for the next attempt's, should that be interrupted before it writes its own.
        let watch = self.ws.layout.task_watch(&self.ws.run_id, task.id);
        match std::fs::remove_file(&watch) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => {
                return Err(EngineError::Io {
                    context: format!("removing {}", watch.display()),
                    source: err,
                });
            }
            _ => {}
        }
        self.emit(Event::TaskFinished {
            task: task.id,
            name: task.name.clone(),
            ok: error.is_none(),
            error,
            log,
        });
        Ok(state == TaskState::Verified)
    }

    /// Shows a task's activity and records its agent's pid (a resumed run waits for an agent its
    /// killed predecessor left running).
    pub fn report_progress(&mut self, id: TaskId, progress: Progress) {
        match progress {
            Progress::Activity(activity) => {
                self.emit(Event::TaskActivity { task: id, activity, detail: None })
            }
            Progress::Detail(detail) => {
                self.emit(Event::TaskActivity { task: id, activity: Activity::Agent, detail: Some(detail) })
            }
            Progress::AgentPid(pid) => {
                if let Err(err) = self.update_task(id, |record| record.agent_pid = pid) {
                    self.emit(Event::Notice {
                        message: format!("could not record the agent of task {id}: {err}"),
                    });
                }
            }
        }
    }

    /// Says that a task verified in an earlier attempt is not run again.
    pub fn skip_verified(&self, task: &Task) {
        self.emit(Event::TaskSkipped {
            task: task.id,
            name: task.name.clone(),
            reason: "already verified in an earlier attempt".into(),
        });
    }
}

/// Takes the run's lock, or says which process holds it.
pub fn lock_run(layout: &StateLayout, run_id: &str) -> Result<FileLock, EngineError> {
    FileLock::try_acquire(&layout.run_lock(run_id)).map_err(|err| match err {
        LockError::Held { holder, .. } => EngineError::RunLocked { run_id: run_id.to_owned(), holder },
        other => other.into(),
    })
}

/// The manifest of an existing run of `repo`.
pub fn load_run(repo: &Repo, run_id: &str) -> Result<RunManifest, EngineError> {
    let path = StateLayout::new(repo.common_dir()).manifest(run_id);
    if !path.exists() {
        return Err(EngineError::NoSuchRun { run_id: run_id.to_owned(), root: repo.root().to_owned() });
    }
    Ok(RunManifest::load(&path)?)
}
