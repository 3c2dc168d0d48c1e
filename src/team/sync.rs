//! `wt sync [<runId> | <name> | --all]`: a stack brought up to date after change requests
//! merged, as research/teams/FINDINGS §1c (path A) found git-spice needs it with one worktree per
//! branch:
//!
//! 1. the trunk is fetched (`git fetch <remote> <trunk>`, nothing else) and the local trunk
//!    fast-forwarded to it — but only when no worktree has it checked out: moving a checked-out
//!    branch would change that worktree's files, and the main checkout is the user's, which wt
//!    never changes (`git-spice repo sync` would `git pull --rebase --autostash` there);
//! 2. the merged branches are those whose change request the forge reports merged (git-spice's
//!    `--cr-status`);
//! 3. each branch on a merged one moves onto the next base that survives, with its own commits
//!    only (`git-spice upstack onto`, in its own worktree), and what sits on it is restacked,
//!    bottom up, each in its own worktree; everything that would stop a move is checked first;
//! 4. each of those with an open change request is submitted again (`git-spice branch submit
//!    --update-only`), which pushes it and retargets its base — each leased like `wt pr`, so
//!    someone else's push is never overwritten;
//! 5. a merged branch's team worktree and agent are removed when it is clean and the branch holds
//!    nothing the merged change request lacked, and the branch is deleted (what `git-spice repo
//!    sync` deletes, without its trunk pull); anything else is left, with the reason and the fix.
//!
//! A run's stack is the same git-spice stack, found by its branches' names (`<runId>-task-…`);
//! its main worktree holds the top and is restacked there. Progress is reported step by step.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::lease::{self, RemoteBranch};
use super::rebase::surviving_base;
use super::review_error::{ReviewError, short};
use super::{Graph, TeamError, TeamRepo, name, pushed, remove, upstack};
use crate::git::{self, WorktreeEntry};
use crate::spice::{BranchSubmit, ChangeStatus};

/// Which stacks to sync.
#[derive(Debug, Clone)]
pub enum SyncScope {
    /// Every stack git-spice tracks.
    All,
    /// The stack holding this branch (a team worktree's name is its branch): from its bottom
    /// branch up, siblings included, since all of them move when the bottom merges.
    Stack(String),
    /// The stack of a run's branches.
    Run(String),
}

/// What became of the trunk.
#[derive(Debug, Clone, Serialize)]
pub struct TrunkSync {
    pub name: String,
    pub remote: String,
    /// The local trunk before and after.
    pub before: Option<String>,
    pub after: Option<String>,
    /// `<remote>/<trunk>` after the fetch.
    pub fetched: Option<String>,
    pub state: TrunkState,
    /// The worktree that has it checked out (which kept it from moving).
    pub checked_out: Option<PathBuf>,
    /// Commits the local trunk lacks of the fetched one.
    pub behind: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TrunkState {
    UpToDate,
    FastForwarded,
    /// Behind, and checked out in a worktree (the user's checkout, usually): left as it is.
    CheckedOut,
    /// It has commits the remote's lacks: left as it is.
    Diverged,
}

/// One step of a sync, as it happens.
#[derive(Debug, Clone, Serialize)]
#[serde(tag = "step", rename_all = "snake_case")]
pub enum SyncEvent {
    Trunk(TrunkSync),
    Merged { branch: String, change: String, base: Option<String> },
    Moved { branch: String, from: String, onto: String },
    Restacked { branch: String },
    Resubmitted { branch: String, change: String, base: Option<String>, url: Option<String> },
    Removed { name: String, worktree: PathBuf },
    Deleted { branch: String, sha: String },
    Left { branch: String, reason: String, fix: String },
}

/// A branch moved off a merged one.
#[derive(Debug, Clone, Serialize)]
pub struct Moved {
    pub branch: String,
    pub from: String,
    pub onto: String,
}

/// Something sync did not do, with the reason and the fix.
#[derive(Debug, Clone, Serialize)]
pub struct Left {
    pub branch: String,
    pub reason: String,
    pub fix: String,
}

/// What `wt sync` did, by kind of step.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Synced {
    pub trunk: Option<TrunkSync>,
    pub merged: Vec<String>,
    pub moved: Vec<Moved>,
    pub restacked: Vec<String>,
    pub resubmitted: Vec<String>,
    pub removed: Vec<PathBuf>,
    pub deleted: Vec<String>,
    pub left: Vec<Left>,
}

/// Collects the steps and reports each as it happens.
struct Steps<'a> {
    synced: Synced,
    progress: &'a mut dyn FnMut(&SyncEvent),
}

impl Steps<'_> {
    fn add(&mut self, event: SyncEvent) {
        (self.progress)(&event);
        let synced = &mut self.synced;
        match event {
            SyncEvent::Trunk(trunk) => synced.trunk = Some(trunk),
            SyncEvent::Merged { branch, .. } => synced.merged.push(branch),
            SyncEvent::Moved { branch, from, onto } => synced.moved.push(Moved { branch, from, onto }),
            SyncEvent::Restacked { branch } => synced.restacked.push(branch),
            SyncEvent::Resubmitted { branch, .. } => synced.resubmitted.push(branch),
            SyncEvent::Removed { worktree, .. } => synced.removed.push(worktree),
            SyncEvent::Deleted { branch, .. } => synced.deleted.push(branch),
            SyncEvent::Left { branch, reason, fix } => synced.left.push(Left { branch, reason, fix }),
        }
    }

    fn leave(&mut self, branch: &str, reason: String, fix: String) {
        self.add(SyncEvent::Left { branch: branch.to_owned(), reason, fix });
    }
}

pub fn sync(
    team: &TeamRepo,
    scope: &SyncScope,
    progress: &mut dyn FnMut(&SyncEvent),
) -> Result<Synced, TeamError> {
    let mut steps = Steps { synced: Synced::default(), progress };
    let Some(trunk) = team.graph()?.trunk().map(str::to_owned) else {
        return Err(ReviewError::NothingToSync {
            target: describe(scope),
            detail: "git-spice does not know this repository yet".into(),
        }
        .into());
    };
    let remote = lease::push_remote(team)?;
    {
        let _lock = team.lock()?;
        steps.add(SyncEvent::Trunk(update_trunk(team, &remote, &trunk)?));
    }
    let graph = team.graph_with_changes()?;
    let branches = scope_branches(&graph, scope)?;
    check_forge_answered(&graph, &branches)?;
    let merged: Vec<String> = branches.iter().filter(|b| is_merged(&graph, b)).cloned().collect();
    for branch in &merged {
        let change = graph.change(branch).map(|c| c.id.clone()).unwrap_or_default();
        let base = graph.base(branch).map(str::to_owned);
        steps.add(SyncEvent::Merged { branch: branch.clone(), change, base });
    }
    if merged.is_empty() {
        return Ok(steps.synced);
    }
    {
        let _lock = team.lock()?;
        let rebased = move_off_merged(team, &graph, &merged, &mut steps)?;
        resubmit(team, &graph, &remote, &rebased, &mut steps)?;
    }
    for branch in merged.iter().rev() {
        remove_merged(team, &remote, branch, &mut steps)?;
    }
    Ok(steps.synced)
}

fn describe(scope: &SyncScope) -> String {
    match scope {
        SyncScope::All => "this repository".into(),
        SyncScope::Stack(name) => name.clone(),
        SyncScope::Run(run_id) => format!("run {run_id}"),
    }
}

/// Step 1: fetch the trunk, and fast-forward it where no worktree has it checked out.
fn update_trunk(team: &TeamRepo, remote: &str, trunk: &str) -> Result<TrunkSync, TeamError> {
    let (repo, root) = (team.repo(), team.repo().root());
    git::fetch_branch(root, remote, trunk)?;
    let fetched = repo.reference_commit(&format!("refs/remotes/{remote}/{trunk}"))?;
    let before = repo.branch_commit(trunk)?;
    let checked_out = git::list_worktrees(root)?.into_iter().find(|w| w.branch.as_deref() == Some(trunk));
    let mut sync = TrunkSync {
        name: trunk.to_owned(),
        remote: remote.to_owned(),
        after: before.clone(),
        before: before.clone(),
        fetched: fetched.clone(),
        state: TrunkState::UpToDate,
        checked_out: checked_out.map(|w| w.path),
        behind: 0,
    };
    let (Some(local), Some(theirs)) = (before, fetched) else { return Ok(sync) };
    if local == theirs {
        return Ok(sync);
    }
    if !repo.contains_commit(&theirs, &local)? {
        sync.state = TrunkState::Diverged;
        return Ok(sync);
    }
    sync.behind = repo.count_commits(&local, &theirs)?;
    if sync.checked_out.is_some() {
        sync.state = TrunkState::CheckedOut;
        return Ok(sync);
    }
    let message = format!("wt sync: fast-forward to {remote}/{trunk}");
    git::move_branch(root, trunk, &theirs, &local, &message)?;
    sync.state = TrunkState::FastForwarded;
    sync.after = Some(theirs);
    Ok(sync)
}

/// The branches of `scope`, in topological order.
fn scope_branches(graph: &Graph, scope: &SyncScope) -> Result<Vec<String>, TeamError> {
    let stack_of = |branch: &str| -> Vec<String> {
        let bottom = graph.downstack(branch).last().cloned().unwrap_or_else(|| branch.to_owned());
        std::iter::once(bottom.clone()).chain(graph.upstack(&bottom)).collect()
    };
    let nothing = |detail: String| ReviewError::NothingToSync { target: describe(scope), detail };
    let members: Vec<String> = match scope {
        SyncScope::All => return Ok(graph.topological(|_| true)),
        SyncScope::Stack(branch) if graph.is_tracked(branch) => stack_of(branch),
        SyncScope::Stack(branch) => {
            return Err(nothing(format!(
                "git-spice tracks no branch {branch} (the trunk has nothing to sync)"
            ))
            .into());
        }
        SyncScope::Run(run_id) => {
            let own = graph.topological(|b| name::run_of(b) == Some(run_id.as_str()));
            if own.is_empty() {
                return Err(nothing(format!("git-spice tracks no branch of run {run_id}")).into());
            }
            own.iter().flat_map(|b| stack_of(b)).collect()
        }
    };
    Ok(graph.topological(|b| members.iter().any(|m| m == b)))
}

fn is_merged(graph: &Graph, branch: &str) -> bool {
    graph.change(branch).is_some_and(|c| c.status == Some(ChangeStatus::Merged))
}

/// Sync decides from the forge's states: without them it must not guess.
fn check_forge_answered(graph: &Graph, branches: &[String]) -> Result<(), TeamError> {
    if graph.changes_read() == super::ChangesRead::Unavailable {
        let detail = "git-spice failed to ask it".to_owned();
        return Err(ReviewError::ForgeUnavailable { detail }.into());
    }
    let unknown: Vec<String> = branches
        .iter()
        .filter_map(|b| graph.change(b).filter(|c| c.status.is_none()).map(|c| format!("{b} {}", c.id)))
        .collect();
    if !unknown.is_empty() {
        let detail =
            format!("no state for {}: not logged in, or the forge is unreachable", unknown.join(", "));
        return Err(ReviewError::ForgeUnavailable { detail }.into());
    }
    Ok(())
}

/// Step 3: every branch on a merged one onto the next surviving base, then what sits on it
/// restacked. Returns the branches whose commits changed, in topological order.
fn move_off_merged(
    team: &TeamRepo,
    graph: &Graph,
    merged: &[String],
    steps: &mut Steps,
) -> Result<Vec<String>, TeamError> {
    let mut moves = Vec::new();
    for branch in merged {
        let (onto, _) = surviving_base(team, graph, branch)?;
        for dependent in graph.dependents(branch).iter().filter(|d| !merged.contains(d)) {
            moves.push((dependent.clone(), branch.clone(), onto.clone()));
        }
    }
    let mut affected: Vec<String> = Vec::new();
    for (dependent, _, _) in &moves {
        affected.extend(std::iter::once(dependent.clone()).chain(graph.upstack(dependent)));
    }
    let affected = graph.topological(|b| affected.iter().any(|a| a == b));
    let blockers = upstack::blockers(team, &affected)?;
    if !blockers.is_empty() {
        let doing = format!("moving what sits on {} onto the next base", merged.join(", "));
        return Err(TeamError::Blocked { doing, blockers });
    }
    let before: Vec<Option<String>> =
        affected.iter().map(|b| team.repo().branch_commit(b)).collect::<Result<_, _>>()?;
    for (dependent, from, onto) in moves {
        upstack::move_onto(team, &dependent, &onto)?;
        steps.add(SyncEvent::Moved { branch: dependent.clone(), from, onto });
        upstack::restack_upstack(team, &dependent)?;
    }
    let mut rebased = Vec::new();
    for (branch, tip) in affected.iter().zip(before) {
        if team.repo().branch_commit(branch)? != tip {
            if !steps.synced.moved.iter().any(|m| &m.branch == branch) {
                steps.add(SyncEvent::Restacked { branch: branch.clone() });
            }
            rebased.push(branch.clone());
        }
    }
    Ok(rebased)
}

/// Step 4: each rebased branch with an open change request submitted again (pushed, its base
/// retargeted), bottom up, leased like `wt pr`; a refused one is left with the reason.
fn resubmit(
    team: &TeamRepo,
    graph: &Graph,
    remote: &str,
    rebased: &[String],
    steps: &mut Steps,
) -> Result<(), TeamError> {
    let worktrees = git::list_worktrees(team.repo().root())?;
    for branch in rebased {
        let Some(change) = graph.change(branch).filter(|c| c.status == Some(ChangeStatus::Open)) else {
            continue;
        };
        let state = RemoteBranch::read(team, remote, branch)?;
        let submitted = state.lease(team).and_then(|_| {
            super::submit::align_tracking_ref(team, &state)?;
            let dir = checked_out_at(&worktrees, branch).unwrap_or(team.repo().root());
            if dir != team.repo().root() {
                super::git_state::check(team.repo().common_dir(), dir, branch)?;
            }
            let options = BranchSubmit { draft: false, update_only: true };
            team.spice()
                .branch_submit(dir, branch, options)
                .map_err(|err| super::submit::refusal(team, err, &state))
        });
        match submitted {
            Ok(()) => {
                pushed::record(team, branch, remote, &state.local)?;
                let url = change.web_url().map(str::to_owned);
                let base = team.graph()?.base(branch).map(str::to_owned);
                steps.add(SyncEvent::Resubmitted {
                    branch: branch.clone(),
                    change: change.id.clone(),
                    base,
                    url,
                });
            }
            Err(err) => {
                let (_, hint) = err.explain();
                let fix = hint.unwrap_or_else(|| {
                    format!("`{} pr {branch}` once it is fixed", crate::process::own_name())
                });
                steps.leave(branch, format!("its change request {} was not updated: {err}", change.id), fix);
            }
        }
    }
    Ok(())
}

/// Step 5: the merged branch's team worktree, agent and record removed and the branch deleted,
/// when nothing would be lost; else left with the reason.
fn remove_merged(team: &TeamRepo, remote: &str, branch: &str, steps: &mut Steps) -> Result<(), TeamError> {
    let root = team.repo().root().to_owned();
    let Some(tip) = team.repo().branch_commit(branch)? else { return Ok(()) };
    let worktrees = git::list_worktrees(&root)?;
    let own_worktree = team.worktree_path(branch);
    let in_own_worktree = checked_out_at(&worktrees, branch)
        .is_some_and(|place| name::is_team_name(branch) && super::same_path(place, &own_worktree));
    if let Some((reason, fix)) = why_kept(team, remote, branch, &tip, &worktrees, in_own_worktree)? {
        steps.leave(branch, reason, fix);
        return Ok(());
    }
    let _lock = team.lock()?;
    if in_own_worktree {
        let request = remove::RemoveRequest { name: branch.to_owned(), force: false };
        let removed = remove::remove_locked(team, &request)?;
        if let Some(worktree) = removed.removed_worktree {
            steps.add(SyncEvent::Removed { name: branch.to_owned(), worktree });
        }
        if team.repo().branch_exists(branch)? {
            git::delete_branch(&root, branch)?;
        }
    } else {
        team.spice().branch_delete(&root, &[branch.to_owned()])?;
    }
    pushed::forget(team, branch)?;
    steps.add(SyncEvent::Deleted { branch: branch.to_owned(), sha: tip });
    Ok(())
}

/// Why the merged `branch` (at `tip`) must stay, with the fix; None when removing it loses
/// nothing: no branch sits on it any more, it is checked out in its own team worktree (which is
/// clean) or nowhere, and the merged change request held all of it.
fn why_kept(
    team: &TeamRepo,
    remote: &str,
    branch: &str,
    tip: &str,
    worktrees: &[WorktreeEntry],
    in_own_worktree: bool,
) -> Result<Option<(String, String)>, TeamError> {
    let wt = crate::process::own_name();
    let dependents = team.graph()?.dependents(branch).to_vec();
    if !dependents.is_empty() {
        let reason = format!("{} still sit(s) on it", dependents.join(", "));
        return Ok(Some((reason, format!("`{wt} sync` again once they have moved"))));
    }
    match checked_out_at(worktrees, branch) {
        Some(place) if !in_own_worktree => return Ok(Some(checked_out_elsewhere(team, place))),
        Some(place) => {
            let files = git::status_paths(place)?;
            if !files.is_empty() {
                let reason = format!("{} has uncommitted files: {}", place.display(), files.join(", "));
                let fix = format!(
                    "commit or remove them, then `{wt} sync` again (or `{wt} cleanup {branch} --force`)"
                );
                return Ok(Some((reason, fix)));
            }
        }
        None => {}
    }
    if !merged_head_holds(team, remote, branch, tip)? {
        let reason = format!("it has commits its merged change request did not have (at {})", short(tip));
        let fix = format!(
            "look at them with `git fetch {remote} {branch} && git log {remote}/{branch}..{branch}`, and open them for \
             review from a new branch; `{wt} cleanup {branch}` removes the worktree and keeps the branch"
        );
        return Ok(Some((reason, fix)));
    }
    Ok(None)
}

/// Whether the merged change request held all of the local `branch` (what `git-spice repo sync`
/// checks before it deletes one): its head on the remote (or, once the remote branch is gone,
/// what wt last pushed), or the trunk, contains the local tip.
fn merged_head_holds(team: &TeamRepo, remote: &str, branch: &str, tip: &str) -> Result<bool, TeamError> {
    let repo = team.repo();
    let head = match git::remote_branch(repo.root(), remote, branch)? {
        Some(head) => Some(head),
        None => pushed::last_pushed(team, branch, remote)?,
    };
    let trunk = team.graph()?.trunk().map(str::to_owned);
    let fetched_trunk = trunk.as_ref().map(|t| format!("refs/remotes/{remote}/{t}"));
    let trunk_tip = match &fetched_trunk {
        Some(reference) => repo.reference_commit(reference)?,
        None => None,
    };
    for holder in [head, trunk_tip].into_iter().flatten() {
        if holder == tip || repo.contains_commit(&holder, tip)? {
            return Ok(true);
        }
    }
    Ok(false)
}

/// Why a merged branch checked out outside its team worktree stays, and what to do.
fn checked_out_elsewhere(team: &TeamRepo, place: &Path) -> (String, String) {
    let wt = crate::process::own_name();
    let reason = format!("it is checked out in {}", place.display());
    let folder = place.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let fix = if super::same_path(place, team.repo().root()) {
        "switch your checkout to another branch, then sync again (wt never changes your checkout)".to_owned()
    } else if let Some(run_id) = name::run_of(&folder) {
        format!("`{wt} cleanup {run_id}` removes the run's worktrees once you are done with it")
    } else {
        format!("check another branch out there (or remove that worktree), then `{wt} sync` again")
    };
    (reason, fix)
}

/// The worktree that has `branch` checked out.
fn checked_out_at<'a>(worktrees: &'a [WorktreeEntry], branch: &str) -> Option<&'a Path> {
    worktrees.iter().find(|w| w.branch.as_deref() == Some(branch)).map(|w| w.path.as_path())
}
