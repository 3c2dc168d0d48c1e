//! Where a task works: its branch readied in the run's main worktree (sequential) or in a
//! worktree of its own (parallel), and whether it has left work there.

use std::path::Path;

use super::EngineError;
use super::journal::Step;
use super::workspace::Workspace;
use super::worktrees::ensure_worktree;
use crate::git;
use crate::plan::Task;

/// Readies a sequential task in the run's main worktree: its branch on `below`. The caller has
/// claimed the task (recorded its base commit).
pub fn place_in_main(ws: &Workspace, task: &Task, below: &str) -> Result<(), EngineError> {
    let worktree = ws.main_worktree();
    let _repo_lock = ws.repo_lock()?;
    let target = task.id.to_string();
    ws.journal.step(Step::BranchCreate, &target, || place_task_branch(ws, &worktree, task, below))
}

/// Readies a parallel task in its own worktree: the worktree detached at `phase_base` (made,
/// kept or repaired), and its branch. The caller has claimed the task.
pub fn place_in_own_worktree(
    ws: &Workspace,
    task: &Task,
    phase_base: &str,
    may_hold_work: bool,
) -> Result<(), EngineError> {
    let worktree = ws.task_worktree(task.id);
    let target = task.id.to_string();
    let _repo_lock = ws.repo_lock()?;
    ensure_worktree(ws, &worktree, phase_base, &target, may_hold_work)?;
    ws.journal.step(Step::BranchCreate, &target, || place_task_branch(ws, &worktree, task, phase_base))
}

/// Creates the task's branch on `below` with git-spice in `worktree` (which it checks out), or
/// checks out the branch an earlier attempt of this run created. The caller holds the repo lock.
fn place_task_branch(ws: &Workspace, worktree: &Path, task: &Task, below: &str) -> Result<(), EngineError> {
    if !ws.repo.branch_exists(&task.branch)? {
        ws.spice.branch_create(worktree, &task.branch, below)?;
    } else if git::current_branch(worktree)?.as_deref() != Some(task.branch.as_str()) {
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
