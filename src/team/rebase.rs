//! `wt rebase <name>`: the team worktree's branch onto its base's tip — or, when the base's
//! change request was merged or the base is gone, onto the next base down that survives (its own
//! commits only) — then every branch stacked on it restacked, bottom up, each in its own
//! worktree. A conflict is left under way in the worktree where it happened; `wt rebase <name>`
//! again (once the files are resolved and staged) continues it through git-spice, and
//! `--abort` undoes it. Under the repo lock.

use serde::Serialize;

use super::review_error::ReviewError;
use super::upstack::{self, OnConflict};
use super::{Graph, TeamError, TeamRepo, own};
use crate::git;
use crate::spice::ChangeStatus;

pub struct RebaseRequest {
    pub name: String,
    /// Undo a rebase left under way instead.
    pub abort: bool,
}

/// What `wt rebase` did.
#[derive(Debug, Clone, Serialize)]
pub struct RebaseReport {
    pub name: String,
    pub branch: String,
    /// The base it sits on now.
    pub base: Option<String>,
    /// The base it sat on before, when it moved.
    pub from: Option<String>,
    /// Bases passed over because their change request was merged or the branch is gone.
    pub passed: Vec<String>,
    pub outcome: RebaseOutcome,
    /// Branches above it that were rebased, bottom up.
    pub restacked: Vec<String>,
    /// Branches above it that still need a rebase (git-spice could not do them).
    pub needs_restack: Vec<String>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RebaseOutcome {
    /// It already sat on its base's tip (what sits on it may still have been restacked).
    AlreadyCurrent,
    /// Rebased onto its base's new tip.
    Rebased,
    /// Moved onto another base (its own had merged or gone).
    Moved,
    /// A rebase left on a conflict was finished.
    Continued,
    /// A rebase left on a conflict was undone.
    Aborted,
}

pub fn rebase(team: &TeamRepo, request: &RebaseRequest) -> Result<RebaseReport, TeamError> {
    let own = own::resolve(team, &request.name)?;
    if git::rebase_in_progress(&own.worktree)? {
        return resume(team, &own, request.abort);
    }
    if request.abort {
        return Err(ReviewError::NoRebaseToAbort { worktree: own.worktree.clone() }.into());
    }
    let branch = own.branch.as_str();
    let graph = team.graph_with_changes()?;
    let Some(base) = graph.base(branch).map(str::to_owned) else {
        return Err(TeamError::NoBase { name: own.name.clone(), path: own.worktree.clone() });
    };
    let (onto, passed) = surviving_base(team, &graph, &base)?;
    let above = graph.upstack(branch);
    let mut report = RebaseReport {
        name: own.name.clone(),
        branch: branch.to_owned(),
        base: Some(onto.clone()),
        from: (onto != base).then(|| base.clone()),
        passed,
        outcome: RebaseOutcome::AlreadyCurrent,
        restacked: Vec::new(),
        needs_restack: Vec::new(),
    };
    if onto == base && !graph.needs_restack(branch) && !above.iter().any(|b| graph.needs_restack(b)) {
        return Ok(report);
    }
    let _lock = team.lock()?;
    let affected: Vec<String> = std::iter::once(branch.to_owned()).chain(above.iter().cloned()).collect();
    let blockers = upstack::blockers(team, &affected)?;
    if !blockers.is_empty() {
        return Err(TeamError::Blocked { doing: format!("rebasing {branch}"), blockers });
    }
    let tips = tips(team, &affected)?;
    if onto != base {
        upstack::move_onto_with(team, branch, &onto, OnConflict::Leave)?;
        report.outcome = RebaseOutcome::Moved;
    } else {
        upstack::restack(team, branch, OnConflict::Leave)?;
        if team.repo().branch_commit(branch)? != tips[0] {
            report.outcome = RebaseOutcome::Rebased;
        }
    }
    report.needs_restack = upstack::restack_upstack_with(team, branch, OnConflict::Leave)?;
    report.restacked = changed(team, &above, &tips[1..])?;
    Ok(report)
}

/// Finishes (git-spice's `rebase continue`) or undoes the rebase left in the worktree.
fn resume(team: &TeamRepo, own: &own::OwnBranch, abort: bool) -> Result<RebaseReport, TeamError> {
    let dir = own.worktree.as_path();
    let _lock = team.lock()?;
    let mut report = RebaseReport {
        name: own.name.clone(),
        branch: own.branch.clone(),
        base: None,
        from: None,
        passed: Vec::new(),
        outcome: RebaseOutcome::Aborted,
        restacked: Vec::new(),
        needs_restack: Vec::new(),
    };
    if abort {
        if team.spice().rebase_abort(dir).is_err() || git::rebase_in_progress(dir)? {
            git::abort_rebase(dir)?;
        }
        report.base = team.graph()?.base(&own.branch).map(str::to_owned);
        return Ok(report);
    }
    let files = git::conflicted_paths(dir)?;
    if !files.is_empty() {
        return Err(ReviewError::ConflictsUnresolved {
            name: own.name.clone(),
            worktree: dir.to_owned(),
            files,
        }
        .into());
    }
    if let Err(err) = team.spice().rebase_continue(dir) {
        if !git::rebase_in_progress(dir)? {
            return Err(err.into());
        }
        let base = team.graph()?.base(&own.branch).unwrap_or_default().to_owned();
        return Err(ReviewError::ConflictLeft {
            name: own.name.clone(),
            branch: own.branch.clone(),
            onto: base,
            worktree: dir.to_owned(),
            files: git::conflicted_paths(dir)?,
        }
        .into());
    }
    let above = team.graph()?.upstack(&own.branch);
    let tips = tips(team, &above)?;
    report.outcome = RebaseOutcome::Continued;
    report.needs_restack = upstack::restack_upstack_with(team, &own.branch, OnConflict::Leave)?;
    report.restacked = changed(team, &above, &tips)?;
    report.base = team.graph()?.base(&own.branch).map(str::to_owned);
    Ok(report)
}

/// The base to sit on: `base`, or — while its change request was merged or its branch is gone
/// — the base below it, down to the trunk; with the bases passed over.
pub(super) fn surviving_base(
    team: &TeamRepo,
    graph: &Graph,
    base: &str,
) -> Result<(String, Vec<String>), TeamError> {
    let mut current = base.to_owned();
    let mut passed = Vec::new();
    // Each step goes one base down; more steps than branches would be a cycle.
    let limit = graph.topological(|_| true).len() + 1;
    while graph.trunk() != Some(current.as_str()) && passed.len() <= limit {
        let merged = graph.change(&current).is_some_and(|c| c.status == Some(ChangeStatus::Merged));
        if !merged && team.repo().branch_exists(&current)? {
            break;
        }
        let below = graph.base(&current).or(graph.trunk()).map(str::to_owned);
        passed.push(std::mem::replace(&mut current, below.unwrap_or_default()));
        if current.is_empty() {
            break;
        }
    }
    Ok((current, passed))
}

fn tips(team: &TeamRepo, branches: &[String]) -> Result<Vec<Option<String>>, TeamError> {
    branches.iter().map(|b| Ok(team.repo().branch_commit(b)?)).collect()
}

/// Those of `branches` whose tip is no longer the one in `before`.
fn changed(
    team: &TeamRepo,
    branches: &[String],
    before: &[Option<String>],
) -> Result<Vec<String>, TeamError> {
    let mut moved = Vec::new();
    for (branch, tip) in branches.iter().zip(before) {
        if team.repo().branch_commit(branch)? != *tip {
            moved.push(branch.clone());
        }
    }
    Ok(moved)
}
