//! `wt push <name>`: the team worktree's own branch, and nothing else, to its remote — a new
//! branch (which becomes its upstream), a fast-forward, or, after a rebase, a replacement leased
//! on exactly the commit wt pushed last. What the remote holds is asked of the remote itself
//! first, and a push someone else made is refused before anything is sent; git's own lease
//! catches one made in between. Under the repo lock; the pushed commit is recorded.

use serde::Serialize;

use super::lease::{self, RemoteBranch, Standing};
use super::review_error::ReviewError;
use super::{TeamError, TeamRepo, own, pushed};
use crate::git::{self, Pushed};

/// What `wt push` did.
#[derive(Debug, Clone, Serialize)]
pub struct PushReport {
    pub name: String,
    pub branch: String,
    pub remote: String,
    /// The commit the remote has now.
    pub sha: String,
    /// What it had before (None: nothing).
    pub before: Option<String>,
    pub outcome: PushOutcome,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PushOutcome {
    /// The branch is new on the remote (and now the local branch's upstream).
    Created,
    /// The remote's branch gained commits; none was replaced.
    FastForward,
    /// The remote's branch was replaced (after a rebase), leased on what wt pushed last.
    Replaced,
    /// The remote already had it.
    UpToDate,
}

pub fn push(team: &TeamRepo, name: &str) -> Result<PushReport, TeamError> {
    let own = own::resolve(team, name)?;
    let remote = lease::push_remote(team)?;
    let _lock = team.lock()?;
    let state = RemoteBranch::read(team, &remote, &own.branch)?;
    let report = |outcome| PushReport {
        name: own.name.clone(),
        branch: own.branch.clone(),
        remote: remote.clone(),
        sha: state.local.clone(),
        before: state.theirs.clone(),
        outcome,
    };
    if state.standing(team)? == Standing::Same {
        pushed::record(team, &own.branch, &remote, &state.local)?;
        return Ok(report(PushOutcome::UpToDate));
    }
    let lease = state.lease(team)?;
    let outcome = match git::push_branch(team.repo().root(), &remote, &own.branch, lease)? {
        Pushed::New => PushOutcome::Created,
        Pushed::FastForward => PushOutcome::FastForward,
        Pushed::Forced => PushOutcome::Replaced,
        Pushed::UpToDate => PushOutcome::UpToDate,
        Pushed::RemoteMoved { .. } => {
            // Pushed between our look and the push: say what is there now.
            let theirs = git::remote_branch(team.repo().root(), &remote, &own.branch)?;
            return Err(state.someone_else(theirs.unwrap_or_default()));
        }
        Pushed::Rejected { summary } => {
            return Err(ReviewError::PushRejected { branch: own.branch.clone(), remote, summary }.into());
        }
    };
    pushed::record(team, &own.branch, &remote, &state.local)?;
    Ok(report(outcome))
}
