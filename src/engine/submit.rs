//! `wt submit`: the finished stack goes up for review with `git-spice stack submit`, from the
//! top branch in the run's main worktree, under the repo lock.

use serde::Serialize;

use super::EngineError;
use super::run::{load_run, lock_run};
use super::workspace::main_worktree_path;
use crate::git::Repo;
use crate::plan::TaskId;
use crate::spice::{Spice, SpiceError, SubmitOptions, SubmitRefusal};
use crate::store::{FileLock, RunState, StateLayout};

pub struct SubmitRequest {
    pub run_id: String,
    pub draft: bool,
    /// false: only push the branches (for remotes that are not a forge).
    pub publish: bool,
}

/// A branch of the submitted stack, bottom first, with its change request when one exists.
#[derive(Debug, Clone, Serialize)]
pub struct SubmittedBranch {
    pub task: TaskId,
    pub branch: String,
    pub change: Option<String>,
    pub url: Option<String>,
}

pub fn submit(repo: &Repo, request: &SubmitRequest) -> Result<Vec<SubmittedBranch>, EngineError> {
    let layout = StateLayout::new(repo.common_dir());
    let manifest = load_run(repo, &request.run_id)?;
    if manifest.state != RunState::Done {
        return Err(EngineError::NotDone { run_id: request.run_id.clone() });
    }
    let _run_lock = lock_run(&layout, &request.run_id)?;
    let spice = Spice::discover()?;
    let main = main_worktree_path(repo, &request.run_id);
    {
        let _repo_lock = FileLock::acquire(&layout.repo_lock())?;
        let options = SubmitOptions { draft: request.draft, publish: request.publish };
        spice.stack_submit(&main, options).map_err(explain_submit_error)?;
    }
    let logged = spice.log_all(&main)?;
    let branches = manifest.phases.iter().flat_map(|p| &p.tasks);
    Ok(branches
        .map(|task| {
            let change = logged.iter().find(|b| b.name == task.branch).and_then(|b| b.change.clone());
            SubmittedBranch {
                task: task.id,
                branch: task.branch.clone(),
                change: change.as_ref().map(|c| c.id.clone()),
                url: change.and_then(|c| c.url),
            }
        })
        .collect())
}

/// The two failures of a stack submit a user can act on (`SpiceError::submit_refusal`).
fn explain_submit_error(err: SpiceError) -> EngineError {
    match err.submit_refusal() {
        Some(SubmitRefusal::UnsupportedRemote) => EngineError::UnsupportedRemote { detail: err.to_string() },
        Some(SubmitRefusal::NotLoggedIn) => EngineError::NotLoggedIn { detail: err.to_string() },
        _ => err.into(),
    }
}
