//! Whether wt may replace what a remote holds of a branch. The remote is asked directly
//! (`git ls-remote`), never through a remote-tracking ref a broad `git fetch` may have moved,
//! and its answer is judged against the commit wt last pushed ([`super::pushed`]) — or, for a
//! branch git-spice pushed (`wt submit`, a user's own submit), the one git's reflog shows this
//! clone pushed last: the remote may hold nothing, our commit, an ancestor of ours, or exactly
//! what we pushed last; anything else is someone else's push, which nothing in wt overwrites
//! (research/teams/FINDINGS §1f).

use super::review_error::ReviewError;
use super::{TeamError, TeamRepo, pushed};
use crate::git::{self, Lease};

/// A branch, locally and on its remote.
#[derive(Debug, Clone)]
pub struct RemoteBranch {
    pub remote: String,
    pub branch: String,
    /// The local branch's commit.
    pub local: String,
    /// The remote's commit now; None when it has no such branch.
    pub theirs: Option<String>,
    /// What wt last pushed there.
    pub last_pushed: Option<String>,
    /// What this clone last pushed there by any means (git-spice's own submits, `wt submit`),
    /// from git's reflog of the remote-tracking ref (`Repo::pushed_from_here`).
    pub pushed_from_here: Option<String>,
}

/// How the remote branch stands against ours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// Not on the remote.
    Absent,
    /// The remote has our commit.
    Same,
    /// The remote has an ancestor of ours: pushing adds commits and replaces none.
    Behind,
    /// The remote has exactly what wt (or this clone) pushed last (ours was rebased since):
    /// ours to replace.
    LastPushed,
    /// Anything else: someone else pushed.
    SomeoneElse,
}

impl RemoteBranch {
    /// The local `branch` against `remote` now. Asks the remote.
    pub fn read(team: &TeamRepo, remote: &str, branch: &str) -> Result<RemoteBranch, TeamError> {
        let local = team
            .repo()
            .branch_commit(branch)?
            .ok_or_else(|| ReviewError::NoBranch { branch: branch.to_owned() })?;
        Ok(RemoteBranch {
            remote: remote.to_owned(),
            branch: branch.to_owned(),
            theirs: git::remote_branch(team.repo().root(), remote, branch)?,
            last_pushed: pushed::last_pushed(team, branch, remote)?,
            pushed_from_here: team.repo().pushed_from_here(remote, branch)?,
            local,
        })
    }

    pub fn standing(&self, team: &TeamRepo) -> Result<Standing, TeamError> {
        let Some(theirs) = self.theirs.as_deref() else { return Ok(Standing::Absent) };
        Ok(if theirs == self.local {
            Standing::Same
        } else if team.repo().contains_commit(&self.local, theirs)? {
            Standing::Behind
        } else if [&self.last_pushed, &self.pushed_from_here]
            .iter()
            .any(|ours| ours.as_deref() == Some(theirs))
        {
            Standing::LastPushed
        } else {
            Standing::SomeoneElse
        })
    }

    /// The lease a push of ours needs (the remote's exact commit, or its absence), or the
    /// refusal when the remote holds someone else's push.
    pub fn lease(&self, team: &TeamRepo) -> Result<Lease<'_>, TeamError> {
        match (self.standing(team)?, self.theirs.as_deref()) {
            (Standing::SomeoneElse, _) => Err(self.someone_else(self.theirs.clone().unwrap_or_default())),
            (_, Some(theirs)) => Ok(Lease::Exactly(theirs)),
            (_, None) => Ok(Lease::Absent),
        }
    }

    /// The refusal for a remote found at `theirs`.
    pub fn someone_else(&self, theirs: String) -> TeamError {
        ReviewError::SomeoneElsePushed {
            branch: self.branch.clone(),
            remote: self.remote.clone(),
            theirs,
            last_pushed: self.last_pushed.clone(),
        }
        .into()
    }
}

/// The remote branches go to: git-spice's (`repo init` recorded it), else `origin`.
pub fn push_remote(team: &TeamRepo) -> Result<String, TeamError> {
    if let Some(remote) = crate::spice::state::push_remote(team.repo())? {
        return Ok(remote);
    }
    match team.repo().has_remote("origin")? {
        true => Ok("origin".to_owned()),
        false => Err(ReviewError::NoRemote.into()),
    }
}
