//! `wt pr <name>`: the team worktree's branch as a change request based on its base
//! (`git-spice branch submit`, in the worktree): a new one is a draft filled from the commits;
//! again, it is updated — pushed, and retargeted when the base changed. Before git-spice pushes,
//! the remote is asked what it holds: git-spice leases on the remote-tracking ref, which a broad
//! `git fetch` may have moved past someone else's push, so wt refuses when the remote is not
//! at what wt pushed last (or an ancestor of ours), and points the remote-tracking ref at what it
//! checked, so git-spice's lease is exactly that (research/teams/FINDINGS §1f). The change
//! request's number and URL come from git-spice's `--json` log, never its messages.

use serde::Serialize;

use super::lease::{self, RemoteBranch};
use super::review_error::ReviewError;
use super::{Graph, TeamError, TeamRepo, name, own, pushed};
use crate::git;
use crate::spice::{BranchSubmit, ChangeStatus, SpiceError, SubmitRefusal};

/// What `wt pr` did.
#[derive(Debug, Clone, Serialize)]
pub struct PrReport {
    pub name: String,
    pub branch: String,
    /// The branch the change request is based on.
    pub base: String,
    /// `#12` (GitHub, shamhub) or `!12` (GitLab).
    pub id: String,
    pub number: Option<u64>,
    pub url: Option<String>,
    /// false: it existed and was updated (or was up to date).
    pub created: bool,
    /// The commit the remote has now.
    pub sha: String,
}

pub fn open_or_update(team: &TeamRepo, name: &str) -> Result<PrReport, TeamError> {
    let own = own::resolve(team, name)?;
    let branch = own.branch.as_str();
    let graph = team.graph_with_changes()?;
    let Some(base) = graph.base(branch).map(str::to_owned) else {
        return Err(TeamError::NoBase { name: own.name.clone(), path: own.worktree.clone() });
    };
    check_ready(team, &graph, branch, &base)?;
    let existing = graph.change(branch).cloned();
    if let Some(change) = existing.as_ref().filter(|c| c.status == Some(ChangeStatus::Merged)) {
        return Err(ReviewError::ChangeMerged { branch: branch.to_owned(), change: change.id.clone() }.into());
    }
    let remote = lease::push_remote(team)?;
    let _lock = team.lock()?;
    let state = RemoteBranch::read(team, &remote, branch)?;
    state.lease(team)?;
    align_tracking_ref(team, &state)?;
    let options = BranchSubmit { draft: existing.is_none(), update_only: false };
    team.spice().branch_submit(&own.worktree, branch, options).map_err(|err| refusal(team, err, &state))?;
    pushed::record(team, branch, &remote, &state.local)?;
    let graph = team.graph()?;
    let change = graph.change(branch).ok_or_else(|| SpiceError::Output {
        command: "git-spice log short --all --json".into(),
        detail: format!("no change request for {branch} after submitting it"),
    })?;
    Ok(PrReport {
        name: own.name.clone(),
        branch: branch.to_owned(),
        base: graph.base(branch).unwrap_or(&base).to_owned(),
        id: change.id.clone(),
        number: change.number(),
        url: change.web_url().map(str::to_owned),
        created: existing.is_none(),
        sha: state.local.clone(),
    })
}

/// What must hold before a change request can be based on `base`: the base is the trunk or has
/// an open change request of its own, and `branch` sits on the base's tip.
fn check_ready(team: &TeamRepo, graph: &Graph, branch: &str, base: &str) -> Result<(), TeamError> {
    if graph.trunk() != Some(base) {
        match graph.change(base) {
            None => {
                let wt = crate::process::own_name();
                let has_worktree =
                    name::is_team_name(base) && team.worktree_at(&team.worktree_path(base))?.is_some();
                let fix = match has_worktree {
                    true => format!("open the base's first: `{wt} pr {base}`, then `{wt} pr {branch}` again"),
                    false => format!(
                        "submit the base first (`git-spice branch submit --branch {base}`), then `{wt} pr {branch}` again"
                    ),
                };
                return Err(ReviewError::BaseNotSubmitted {
                    branch: branch.to_owned(),
                    base: base.to_owned(),
                    fix,
                }
                .into());
            }
            Some(change) if change.status == Some(ChangeStatus::Merged) => {
                return Err(ReviewError::BaseMerged {
                    branch: branch.to_owned(),
                    base: base.to_owned(),
                    change: change.id.clone(),
                }
                .into());
            }
            Some(_) => {}
        }
    }
    if graph.needs_restack(branch) {
        return Err(ReviewError::NeedsRestack { branch: branch.to_owned(), base: base.to_owned() }.into());
    }
    Ok(())
}

/// Points `refs/remotes/<remote>/<branch>` at the commit the remote was just found at, so
/// git-spice's lease (that ref) is what wt checked: fetched when it differs, and checked again
/// after the fetch (a push landing in between is refused, not leased away).
pub(super) fn align_tracking_ref(team: &TeamRepo, state: &RemoteBranch) -> Result<(), TeamError> {
    let Some(theirs) = state.theirs.as_deref() else { return Ok(()) };
    let tracking = format!("refs/remotes/{}/{}", state.remote, state.branch);
    if team.repo().reference_commit(&tracking)?.as_deref() == Some(theirs) {
        return Ok(());
    }
    git::fetch_branch(team.repo().root(), &state.remote, &state.branch)?;
    match team.repo().reference_commit(&tracking)? {
        Some(now) if now == theirs => Ok(()),
        now => Err(state.someone_else(now.unwrap_or_default())),
    }
}

/// A failed submit as the refusal a user can act on.
pub(super) fn refusal(team: &TeamRepo, err: SpiceError, state: &RemoteBranch) -> TeamError {
    match err.submit_refusal() {
        Some(SubmitRefusal::UnsupportedRemote) => {
            ReviewError::UnsupportedRemote { detail: err.to_string() }.into()
        }
        Some(SubmitRefusal::NotLoggedIn) => ReviewError::NotLoggedIn { detail: err.to_string() }.into(),
        Some(SubmitRefusal::PushRejected) => {
            let theirs = git::remote_branch(team.repo().root(), &state.remote, &state.branch);
            state.someone_else(theirs.ok().flatten().unwrap_or_default())
        }
        _ => err.into(),
    }
}
