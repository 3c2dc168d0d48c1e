//! After a parallel phase: release the task branches by removing their worktrees, stack them in
//! plan order with `git-spice upstack onto`, and check the top out in the main worktree.
//! Removing a worktree never deletes its branch, and every task's work is committed by now.

use super::EngineError;
use super::event::Event;
use super::journal::Step;
use super::pool::Uncommitted;
use super::run::Run;
use super::stack::check_stack_through;
use crate::git;
use crate::plan::Phase;
use crate::store::PhaseState;

pub fn linearize_phase(run: &mut Run, phase: &Phase, phase_base: &str) -> Result<(), EngineError> {
    if let Some(record) = run.manifest.phase_mut(phase.number) {
        record.state = PhaseState::Linearizing;
    }
    run.save()?;
    let branches: Vec<String> = phase.tasks.iter().map(|task| task.branch.clone()).collect();
    run.emit(Event::PhaseLinearizing { phase: phase.number, branches: branches.clone() });
    let ws = run.ws.clone();
    let main = ws.main_worktree();
    {
        let _repo_lock = ws.repo_lock()?;
        release_branches(run, phase)?;
        let mut below = phase_base;
        for branch in &branches {
            if below != phase_base {
                ws.journal.step(Step::UpstackOnto, branch, || {
                    ws.spice.upstack_onto(&main, branch, below).map_err(|err| {
                        // Leave the main worktree as it was before the failed move; an aborted
                        // rebase leaves the branch where it was.
                        let _ = ws.spice.rebase_abort(&main);
                        EngineError::Linearize {
                            phase: phase.number,
                            branch: branch.clone(),
                            onto: below.to_owned(),
                            detail: err.to_string(),
                        }
                    })
                })?;
            }
            below = branch;
        }
        if git::current_branch(&main)?.as_deref() != Some(below) {
            ws.journal.step(Step::CheckoutTop, below, || Ok(git::switch(&main, below)?))?;
        }
    }
    check_stack_through(run, phase.number)
}

/// A branch checked out in another worktree cannot be rebased (and restacks skip it silently),
/// so each task worktree goes (parked in the pool of recycled worktrees, or removed); one with
/// uncommitted files is kept, detached, and the user told.
/// The caller holds the repo lock.
fn release_branches(run: &Run, phase: &Phase) -> Result<(), EngineError> {
    let ws = &run.ws;
    for task in &phase.tasks {
        let worktree = ws.task_worktree(task.id);
        if !worktree.exists() {
            continue;
        }
        let changed = git::status_paths(&worktree)?;
        if changed.is_empty() {
            let target = task.id.to_string();
            ws.journal.step(Step::Release, &target, || {
                ws.pool().retire(&worktree, &target, Uncommitted::NoneSeen)
            })?;
            continue;
        }
        if git::current_branch(&worktree)?.is_some() {
            git::detach(&worktree)?;
        }
        run.emit(Event::Notice {
            message: format!(
                "kept {} because it has uncommitted files: {}",
                worktree.display(),
                changed.join(", ")
            ),
        });
    }
    Ok(())
}
