//! Where a task works: its branch readied in the run's main worktree (sequential) or in a
//! worktree of its own (parallel), and whether it has left work there.

use std::path::Path;

use super::EngineError;
use super::journal::Step;
use super::workspace::Workspace;
use super::worktrees::{ensure_worktree, make_worktree};
use crate::git;
use crate::plan::Task;

/// Readies a sequential task in the run's main worktree: its branch on `below`. The caller has
/// claimed the task (recorded its base commit); `fresh` is that commit when no agent has run
/// for the task yet.
pub fn place_in_main(
    ws: &Workspace,
    task: &Task,
    below: &str,
    fresh: Option<&str>,
) -> Result<(), EngineError> {
    let worktree = ws.main_worktree();
    let _repo_lock = ws.repo_lock()?;
    let target = task.id.to_string();
    ws.journal.step(Step::BranchCreate, &target, || place_task_branch(ws, &worktree, task, below, fresh))
}

/// Readies a parallel task in its own worktree: the worktree detached at `phase_base` (made,
/// kept, taken from the pool or repaired), and its branch. The caller has claimed the task;
/// `fresh` is its base commit when no agent has run for it yet. A new worktree's files are
/// written between two holds of the repo lock, so siblings' worktrees are written at once.
pub fn place_in_own_worktree(
    ws: &Workspace,
    task: &Task,
    phase_base: &str,
    fresh: Option<&str>,
) -> Result<(), EngineError> {
    let worktree = ws.task_worktree(task.id);
    let target = task.id.to_string();
    let ensured = {
        let _repo_lock = ws.repo_lock()?;
        ensure_worktree(ws, &worktree, phase_base, &target, fresh.is_none())?
    };
    make_worktree(ws, &worktree, phase_base, &target, ensured)?;
    let _repo_lock = ws.repo_lock()?;
    ws.journal.step(Step::BranchCreate, &target, || place_task_branch(ws, &worktree, task, phase_base, fresh))
}

/// Creates the task's branch on `below` with git-spice in `worktree` (which it checks out), or
/// checks out the branch an earlier attempt of this run created. For a task no agent has run for
/// yet, a branch that exists must still be at its base commit `fresh`: anything else was put
/// there by someone else (a sibling task, say), and the task would start on their work. The
/// caller holds the repo lock.
fn place_task_branch(
    ws: &Workspace,
    worktree: &Path,
    task: &Task,
    below: &str,
    fresh: Option<&str>,
) -> Result<(), EngineError> {
    let Some(at) = ws.repo.branch_commit(&task.branch)? else {
        return Ok(ws.spice.branch_create(worktree, &task.branch, below)?);
    };
    if fresh.is_some_and(|base| base != at) {
        return Err(EngineError::BranchTaken { branch: task.branch.clone(), run_id: ws.run_id.clone() });
    }
    if git::current_branch(worktree)?.as_deref() != Some(task.branch.as_str()) {
        git::switch(worktree, &task.branch)?;
    }
    Ok(())
}

/// Whether the task's worktree holds any work since `base_commit`: a commit or a changed file.
pub fn has_work(ws: &Workspace, worktree: &Path, base_commit: &str) -> Result<bool, EngineError> {
    if !git::status_paths(worktree)?.is_empty() {
        return Ok(true);
    }
    let head = git::head_commit(worktree)?;
    Ok(ws.repo.count_commits(base_commit, &head)? > 0)
}
