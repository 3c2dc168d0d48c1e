//! `wt submit`: the finished stack goes up for review with `git-spice stack submit`, from the
//! top branch in the run's main worktree, under the repo lock.

use serde::Serialize;

use super::EngineError;
use super::workspace::main_worktree_path;
use crate::git::Repo;
use crate::process::ProcessError;
use crate::spice::{Spice, SpiceError, SubmitOptions};
use crate::store::{FileLock, LockError, RunManifest, RunState, StateLayout};

pub struct SubmitRequest {
    pub run_id: String,
    pub draft: bool,
    /// false: only push the branches (for remotes that are not a forge).
    pub publish: bool,
}

/// A branch of the submitted stack, bottom first, with its change request when one exists.
#[derive(Debug, Clone, Serialize)]
pub struct SubmittedBranch {
    pub task: String,
    pub branch: String,
    pub change: Option<String>,
    pub url: Option<String>,
}

pub fn submit(repo: &Repo, request: &SubmitRequest) -> Result<Vec<SubmittedBranch>, EngineError> {
    let layout = StateLayout::new(repo.common_dir());
    let path = layout.manifest(&request.run_id);
    if !path.exists() {
        return Err(EngineError::NoSuchRun { run_id: request.run_id.clone(), root: repo.root().to_owned() });
    }
    let manifest = RunManifest::load(&path)?;
    if manifest.state != RunState::Done {
        return Err(EngineError::NotDone { run_id: request.run_id.clone() });
    }
    let _run_lock = FileLock::try_acquire(&layout.run_lock(&request.run_id)).map_err(|err| match err {
        LockError::Held { holder, .. } => EngineError::RunActive { run_id: request.run_id.clone(), holder },
        other => other.into(),
    })?;
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
                task: task.number.clone(),
                branch: task.branch.clone(),
                change: change.as_ref().map(|c| c.id.clone()),
                url: change.and_then(|c| c.url),
            }
        })
        .collect())
}

/// git-spice exits 1 for every error, so the two a user can act on are told apart by the
/// wording of its message (checked against git-spice v0.31.2).
fn explain_submit_error(err: SpiceError) -> EngineError {
    let stderr = match &err {
        SpiceError::Command(ProcessError::Failed { stderr, .. }) => stderr.to_lowercase(),
        _ => String::new(),
    };
    if stderr.contains("unsupported git remote") || stderr.contains("could not guess repository") {
        EngineError::UnsupportedRemote { detail: err.to_string() }
    } else if stderr.contains("not logged in")
        || stderr.contains("auth login")
        || stderr.contains("authenticat")
    {
        EngineError::NotLoggedIn { detail: err.to_string() }
    } else {
        err.into()
    }
}
