//! After a parallel phase: release the task branches, stack them in plan order with
//! `git-spice upstack onto`, check the top out in the main worktree, remove the task worktrees.

use super::EngineError;
use super::event::Event;
use super::run::Run;
use super::stack::check_linear;
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
        // A branch checked out in another worktree cannot be rebased (and restacks skip it).
        for task in &phase.tasks {
            let worktree = ws.task_worktree(task.id);
            if worktree.exists() && git::current_branch(&worktree)?.is_some() {
                git::detach(&worktree)?;
            }
        }
        let mut below = phase_base;
        for branch in &branches {
            if below != phase_base {
                ws.spice.upstack_onto(&main, branch, below).map_err(|err| {
                    // Leave the main worktree as it was before the failed move; the branches
                    // themselves are untouched by an aborted rebase.
                    let _ = ws.spice.rebase_abort(&main);
                    EngineError::Linearize {
                        phase: phase.number,
                        branch: branch.clone(),
                        onto: below.to_owned(),
                        detail: err.to_string(),
                    }
                })?;
            }
            below = branch;
        }
        if git::current_branch(&main)?.as_deref() != Some(below) {
            git::switch(&main, below)?;
        }
    }
    let expected = std::iter::once(phase_base).chain(branches.iter().map(String::as_str));
    check_linear(&ws, phase.number, expected)?;
    remove_task_worktrees(run, phase)
}

/// Removes the phase's task worktrees; one with changes is kept, and the user is told.
fn remove_task_worktrees(run: &mut Run, phase: &Phase) -> Result<(), EngineError> {
    let ws = run.ws.clone();
    let _repo_lock = ws.repo_lock()?;
    for task in &phase.tasks {
        let worktree = ws.task_worktree(task.id);
        if !worktree.exists() {
            continue;
        }
        let changed = git::status_paths(&worktree)?;
        if changed.is_empty() {
            git::remove_worktree(ws.repo.root(), &worktree, false)?;
        } else {
            run.emit(Event::Notice {
                message: format!(
                    "kept {} because it has uncommitted files: {}",
                    worktree.display(),
                    changed.join(", ")
                ),
            });
        }
    }
    git::prune_worktrees(ws.repo.root())?;
    Ok(())
}
