//! Moving branches of a stack when a branch below them changes or goes: each branch is rebased
//! by git-spice in the worktree that has it checked out — git-spice skips a branch checked out
//! in another worktree (and still exits 0), and refuses to check out one that is — or, for a
//! branch checked out nowhere, in a temporary worktree (`.worktrees/.wt-move-…`) made for the
//! move. The main checkout is never used: a branch checked out there blocks the move (see
//! [`blockers`]). A conflict is aborted, leaving the branch as it was, unless the caller asks for
//! it to be left in the branch's own worktree ([`OnConflict::Leave`]; `wt rebase`), where the
//! user or the agent resolves it. Callers hold the repo lock.

use std::path::{Path, PathBuf};

use super::review_error::ReviewError;
use super::{Graph, TeamError, TeamRepo};
use crate::git::{self, WORKTREES_DIR};
use crate::spice::SpiceError;
use crate::store::{LiveState, RunManifest};

/// Why a branch cannot be moved now, and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Blocker {
    pub branch: String,
    pub reason: String,
    pub fix: String,
}

/// What a rebase that stops on a conflict leaves behind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnConflict {
    /// Abort it: the branch is as it was, and [`TeamError::Conflict`] says how to do it by hand.
    Abort,
    /// Leave it under way in the branch's worktree ([`ReviewError::ConflictLeft`]); a branch
    /// checked out nowhere is rebased in a temporary worktree, where it is aborted all the same.
    Leave,
}

/// Where a branch is checked out.
enum Place {
    Worktree(PathBuf),
    MainCheckout,
    Nowhere,
}

fn place(team: &TeamRepo, branch: &str) -> Result<Place, TeamError> {
    let root = team.repo().root();
    // A worktree rebasing the branch has a detached HEAD, and still holds the branch.
    let entry = git::list_worktrees(root)?.into_iter().find(|w| match &w.branch {
        Some(checked_out) => checked_out == branch,
        None => git::rebasing_branch(&w.path).as_deref() == Some(branch),
    });
    Ok(match entry {
        Some(entry) if super::same_path(&entry.path, root) => Place::MainCheckout,
        Some(entry) => Place::Worktree(entry.path),
        None => Place::Nowhere,
    })
}

/// What stops `branches` from being rebased: one of a run that is at work (its engine or its
/// orchestrator's workers would find it moved under them), one checked out in the main checkout
/// (wt never changes it), or a worktree with uncommitted files (a rebase would refuse half way).
/// Check before the first move, so that a refusal changes nothing.
pub fn blockers(team: &TeamRepo, branches: &[String]) -> Result<Vec<Blocker>, TeamError> {
    let mut found = Vec::new();
    for branch in branches {
        if let Some(blocker) = run_at_work(team, branch) {
            found.push(blocker);
            continue;
        }
        match place(team, branch)? {
            Place::MainCheckout => found.push(Blocker {
                branch: branch.clone(),
                reason: "it is checked out in your checkout, which wt never changes".into(),
                fix: format!(
                    "switch your checkout to another branch, then run the command again ({branch} moves too)"
                ),
            }),
            Place::Worktree(path) if git::rebase_in_progress(&path)? => found.push(Blocker {
                branch: branch.clone(),
                reason: format!("a rebase of it is under way in {}", path.display()),
                fix: format!(
                    "finish it first (resolve and stage the files, then `{wt} rebase {branch}`), or undo it with \
                     `{wt} rebase {branch} --abort`",
                    wt = crate::process::own_name()
                ),
            }),
            Place::Worktree(path) => {
                let files = git::status_paths(&path)?;
                if !files.is_empty() {
                    found.push(Blocker {
                        branch: branch.clone(),
                        reason: format!("{} has uncommitted files: {}", path.display(), files.join(", ")),
                        fix: format!(
                            "commit them on {branch} (or stash them) first, then run the command again"
                        ),
                    });
                }
            }
            Place::Nowhere => {}
        }
    }
    Ok(found)
}

/// A blocker for `branch` when it is a run's and that run is running or waiting for its workers.
fn run_at_work(team: &TeamRepo, branch: &str) -> Option<Blocker> {
    let run_id = super::name::run_of(branch)?;
    let manifest = RunManifest::load(&team.layout().manifest(run_id)).ok()?;
    let state = LiveState::of(team.layout(), &manifest);
    matches!(state, LiveState::Running | LiveState::Dispatched).then(|| Blocker {
        branch: branch.to_owned(),
        reason: format!("it is run {run_id}'s, which is {} now", state.as_str()),
        fix: format!(
            "wait for the run to end (`{wt} status {run_id}`), then run the command again",
            wt = crate::process::own_name()
        ),
    })
}

/// Moves `branch` onto `onto` with its own commits only (`git-spice upstack onto <onto> --branch
/// <branch>`, which also restacks what sits on it where it can). On a conflict the rebase is
/// aborted, so the branch is as it was, and [`TeamError::Conflict`] says where to do it by hand.
pub fn move_onto(team: &TeamRepo, branch: &str, onto: &str) -> Result<(), TeamError> {
    move_onto_with(team, branch, onto, OnConflict::Abort)
}

/// [`move_onto`], with a conflict handled as `on_conflict` says.
pub fn move_onto_with(
    team: &TeamRepo,
    branch: &str,
    onto: &str,
    on_conflict: OnConflict,
) -> Result<(), TeamError> {
    in_worktree_of(team, branch, |dir, leave| {
        let moved = team.spice().upstack_onto(dir, branch, onto);
        settle(team, dir, branch, onto, moved, on_conflict == OnConflict::Leave && leave)
    })
}

/// Rebases `branch` onto its base's tip (`git-spice branch restack`) in its worktree; a no-op
/// for a branch already there.
pub fn restack(team: &TeamRepo, branch: &str, on_conflict: OnConflict) -> Result<(), TeamError> {
    let Some(base) = team.graph()?.base(branch).map(str::to_owned) else { return Ok(()) };
    in_worktree_of(team, branch, |dir, leave| {
        let restacked = team.spice().branch_restack(dir, branch);
        settle(team, dir, branch, &base, restacked, on_conflict == OnConflict::Leave && leave)
    })
}

/// Restacks every branch above `branch`, bottom up, each in its own worktree
/// (`git-spice branch restack`; a no-op for one already on its base's tip). Returns those that
/// still need a restack afterwards (none unless git-spice skipped one).
pub fn restack_upstack(team: &TeamRepo, branch: &str) -> Result<Vec<String>, TeamError> {
    restack_upstack_with(team, branch, OnConflict::Abort)
}

/// [`restack_upstack`], with a conflict handled as `on_conflict` says.
pub fn restack_upstack_with(
    team: &TeamRepo,
    branch: &str,
    on_conflict: OnConflict,
) -> Result<Vec<String>, TeamError> {
    for above in team.graph()?.upstack(branch) {
        restack(team, &above, on_conflict)?;
    }
    let graph: Graph = team.graph()?;
    Ok(graph.upstack(branch).into_iter().filter(|b| graph.needs_restack(b)).collect())
}

/// Runs `work` in the worktree that has `branch` checked out (told it may leave a rebase there),
/// or in a temporary one when none has (told it may not); a branch checked out in the main
/// checkout is refused ([`blockers`] finds it first).
fn in_worktree_of(
    team: &TeamRepo,
    branch: &str,
    work: impl FnOnce(&Path, bool) -> Result<(), TeamError>,
) -> Result<(), TeamError> {
    match place(team, branch)? {
        Place::Worktree(dir) => {
            // An agent may have written its git files; git-spice runs there outside any sandbox.
            super::git_state::check(team.repo().common_dir(), &dir, branch)?;
            work(&dir, true)
        }
        Place::MainCheckout => Err(TeamError::Blocked {
            doing: format!("rebasing {branch}"),
            blockers: blockers(team, &[branch.to_owned()])?,
        }),
        Place::Nowhere => {
            let root = team.repo().root();
            let temp = root
                .join(WORKTREES_DIR)
                .join(format!(".wt-move-{}", &crate::digest::sha256_hex([branch.as_bytes()])[..12]));
            if temp.exists() || team.worktree_at(&temp)?.is_some() {
                // Left by a wt that was killed while it moved this branch; it holds no work.
                git::remove_worktree(root, &temp, true)?;
            }
            git::add_detached(root, &temp, branch, &format!("wt: moving {branch}"))?;
            let outcome = work(&temp, false);
            let removed = git::remove_worktree(root, &temp, true);
            outcome.and(removed.map_err(TeamError::from)).map_err(|err| match err {
                TeamError::Conflict { branch, onto, detail, .. } => {
                    TeamError::Conflict { branch, onto, worktree: None, detail }
                }
                other => other,
            })
        }
    }
}

/// A git-spice rebase's outcome: a conflict is left under way in `dir` when `leave`, else
/// aborted (git-spice's `rebase abort`, else git's), and reported; any other failure is passed on.
fn settle(
    team: &TeamRepo,
    dir: &Path,
    branch: &str,
    onto: &str,
    outcome: Result<(), SpiceError>,
    leave: bool,
) -> Result<(), TeamError> {
    let Err(err) = outcome else { return Ok(()) };
    if !git::rebase_in_progress(dir)? {
        return Err(err.into());
    }
    if leave {
        return Err(ReviewError::ConflictLeft {
            name: branch.to_owned(),
            branch: branch.to_owned(),
            onto: onto.to_owned(),
            worktree: dir.to_owned(),
            files: git::conflicted_paths(dir)?,
        }
        .into());
    }
    if team.spice().rebase_abort(dir).is_err() || git::rebase_in_progress(dir)? {
        git::abort_rebase(dir)?;
    }
    Err(TeamError::Conflict {
        branch: branch.to_owned(),
        onto: onto.to_owned(),
        worktree: Some(dir.to_owned()),
        detail: err.to_string(),
    })
}
