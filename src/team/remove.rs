//! `wt cleanup <name>`: removes a team worktree, its generated agent and its record. What sits
//! on its branch moves onto its base first, with its own commits only (as `git-spice branch
//! delete` would leave it), each in its own worktree; the branch then leaves git-spice's stack —
//! deleted when its base holds all of it, else kept in git (`git-spice branch untrack`), so no
//! commit is lost. Each step can be run again: a cleanup cut short finishes on the next call.

use std::path::PathBuf;

use serde::Serialize;

use super::{TeamError, TeamRepo, agent_file, name, upstack};
use crate::git;

pub struct RemoveRequest {
    pub name: String,
    /// Remove the worktree even with uncommitted files (they are lost).
    pub force: bool,
}

/// What became of the branch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BranchFate {
    /// Its base holds all of it: deleted.
    Deleted,
    /// It has commits its base lacks: kept in git, no longer in git-spice's stack.
    Kept,
    /// git-spice did not track it (an earlier cleanup took it out): left as it is.
    Untracked,
    /// There was no such branch (left by an earlier cleanup).
    Absent,
}

#[derive(Debug, Clone, Serialize)]
pub struct Removed {
    pub name: String,
    /// The base its dependents moved onto.
    pub base: Option<String>,
    pub removed_worktree: Option<PathBuf>,
    /// Branches that sat on it and now sit on its base.
    pub moved: Vec<String>,
    /// Branches further up that still need a restack (git-spice could not do them).
    pub needs_restack: Vec<String>,
    pub branch: BranchFate,
    pub removed_files: Vec<PathBuf>,
}

impl Removed {
    /// Nothing was there to remove.
    pub fn is_empty(&self) -> bool {
        self.removed_worktree.is_none()
            && self.moved.is_empty()
            && matches!(self.branch, BranchFate::Absent | BranchFate::Untracked)
            && self.removed_files.is_empty()
    }
}

pub fn remove(team: &TeamRepo, request: &RemoveRequest) -> Result<Removed, TeamError> {
    name::check(&request.name)?;
    let _lock = team.lock()?;
    remove_locked(team, request)
}

/// [`remove`], for a caller that holds the repo lock already (`wt sync`).
pub(super) fn remove_locked(team: &TeamRepo, request: &RemoveRequest) -> Result<Removed, TeamError> {
    let name = request.name.as_str();
    name::check(name)?;
    let path = team.worktree_path(name);
    let registered = team.worktree_at(&path)?;
    match &registered {
        Some(entry) if entry.branch.as_deref() != Some(name) && path.exists() => {
            let detail = match &entry.branch {
                Some(other) => format!("it is a worktree on branch {other}, not {name}; wt leaves it alone"),
                None => "it is a worktree on a detached HEAD; wt leaves it alone".to_owned(),
            };
            return Err(TeamError::PathInTheWay { path, detail });
        }
        None if path.symlink_metadata().is_ok() => {
            let detail = "it is not a worktree of this repository; wt leaves it alone".to_owned();
            return Err(TeamError::PathInTheWay { path, detail });
        }
        _ => {}
    }
    if registered.is_some() && path.exists() && !request.force {
        let files = git::status_paths(&path)?;
        if !files.is_empty() {
            return Err(TeamError::Dirty { path, files });
        }
    }
    let graph = team.graph()?;
    let base = graph.base(name).map(str::to_owned);
    let moved = move_dependents(team, name, base.as_deref())?;
    let needs_restack = match moved.is_empty() {
        true => Vec::new(),
        false => {
            moved.iter().map(|b| upstack::restack_upstack(team, b)).collect::<Result<Vec<_>, _>>()?.concat()
        }
    };
    let removed_worktree = match registered {
        Some(_) => {
            git::remove_worktree(team.repo().root(), &path, request.force || !path.exists())?;
            Some(path)
        }
        None => None,
    };
    let branch = settle_branch(team, name, base.as_deref())?;
    let mut removed_files = Vec::new();
    let agent = team.agent_path(name);
    if agent_file::remove(&agent)? {
        removed_files.push(agent);
    }
    let record = team.layout().team_record(name);
    if record.exists() {
        std::fs::remove_file(&record).map_err(TeamError::io(format!("removing {}", record.display())))?;
        removed_files.push(record);
    }
    Ok(Removed { name: name.to_owned(), base, removed_worktree, moved, needs_restack, branch, removed_files })
}

/// Moves the branches on `name` onto `base`, after checking that each can move.
fn move_dependents(team: &TeamRepo, name: &str, base: Option<&str>) -> Result<Vec<String>, TeamError> {
    let graph = team.graph()?;
    let dependents = graph.dependents(name).to_vec();
    if dependents.is_empty() {
        return Ok(dependents);
    }
    let Some(base) = base else {
        return Err(TeamError::NoBase { name: name.to_owned(), path: team.worktree_path(name) });
    };
    let mut affected = dependents.clone();
    affected.extend(graph.upstack(name).into_iter().filter(|b| !dependents.contains(b)));
    let blockers = upstack::blockers(team, &affected)?;
    if !blockers.is_empty() {
        return Err(TeamError::Blocked {
            doing: format!("moving what sits on {name} onto {base}"),
            blockers,
        });
    }
    for dependent in &dependents {
        upstack::move_onto(team, dependent, base)?;
    }
    Ok(dependents)
}

/// Deletes the branch when its base holds all of it, else takes it out of git-spice's stack
/// and keeps it.
fn settle_branch(team: &TeamRepo, name: &str, base: Option<&str>) -> Result<BranchFate, TeamError> {
    let repo = team.repo();
    let Some(tip) = repo.branch_commit(name)? else { return Ok(BranchFate::Absent) };
    let tracked = team.graph()?.is_tracked(name);
    let merged = match base.map(|base| repo.branch_commit(base)).transpose()?.flatten() {
        Some(base_tip) => repo.is_ancestor(&tip, &base_tip)?,
        None => false,
    };
    match (tracked, merged) {
        (true, true) => {
            team.spice().branch_delete(repo.root(), &[name.to_owned()])?;
            Ok(BranchFate::Deleted)
        }
        (true, false) => {
            team.spice().branch_untrack(repo.root(), name)?;
            Ok(BranchFate::Kept)
        }
        (false, _) => Ok(BranchFate::Untracked),
    }
}
