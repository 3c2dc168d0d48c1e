//! After a parallel phase: release the task branches by removing their worktrees, stack them in
//! plan order with git-spice, and check the top out in the main worktree. Removing a worktree
//! never deletes its branch, and every task's work is committed by now.
//!
//! Stacking loads git-spice's branch graph once per phase, not once per branch: every git-spice
//! command that loads the graph reads the state of every tracked branch, so an `upstack onto`
//! per branch made a phase of N tasks cost O(N²). Instead:
//!
//! 1. Each branch must be recorded on the one before it. `wt run` creates the phase's branches
//!    that way (`parallel.rs`: `branch create --below`), so normally nothing is left to do here.
//!    Branches placed otherwise (`wt step` creates each on the phase base as it hands the task
//!    out; a resume after a kill inside a `branch create`) get `branch track <b_k> --base
//!    <b_k-1>`, top first: it records the base without a rebase or the graph (top first, so the
//!    base it checks for cycles still sits directly on the phase base), and git-spice keeps the
//!    commit the branch forked from as its base commit.
//! 2. One `upstack onto <b_1> --branch <b_2>`: moves b_2 onto b_1 and restacks its upstack —
//!    b_3 … b_N — bottom up, in this one process.
//!
//! What git-spice records at the end is what N-1 `upstack onto` calls recorded: each branch on
//! the one before it, with that branch's tip as its base commit. Both steps are journaled and
//! safe to repeat: a resume records only the bases git-spice does not have yet, and `upstack
//! onto` leaves branches already restacked as they are, so a phase killed half stacked is
//! finished by the next run.

use super::EngineError;
use super::event::Event;
use super::journal::Step;
use super::pool::Uncommitted;
use super::run::Run;
use super::stack::check_stack_through;
use super::workspace::Workspace;
use crate::git;
use crate::plan::Phase;
use crate::spice::state;
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
        stack_in_order(&ws, phase.number, &branches)?;
        let top = branches.last().map_or(phase_base, String::as_str);
        if git::current_branch(&main)?.as_deref() != Some(top) {
            ws.journal.step(Step::CheckoutTop, top, || Ok(git::switch(&main, top)?))?;
        }
    }
    check_stack_through(run, phase.number)
}

/// Stacks `branches` (each starting at the phase base, the first staying there) each on the one
/// before it: the bases git-spice does not have yet recorded top down, then one `upstack onto`
/// that rebases them bottom up. The caller holds the repo lock.
fn stack_in_order(ws: &Workspace, phase: usize, branches: &[String]) -> Result<(), EngineError> {
    let [first, second, above @ ..] = branches else { return Ok(()) };
    let main = ws.main_worktree();
    let names: Vec<&str> = above.iter().map(String::as_str).collect();
    // None (git-spice's state in a layout not known here): record every base again, which
    // git-spice takes as a no-op.
    let recorded = state::recorded_bases(&ws.repo, &names)?;
    for (i, branch) in above.iter().enumerate().rev() {
        let below = if i == 0 { second } else { &above[i - 1] };
        let known = recorded.as_ref().and_then(|bases| bases[i].as_ref());
        if known.is_some_and(|base| base.name == *below) {
            continue;
        }
        ws.journal.step(Step::Retarget, branch, || {
            ws.spice.branch_track(&main, branch, below).map_err(|err| EngineError::Linearize {
                phase,
                branch: branch.clone(),
                onto: below.clone(),
                detail: err.to_string(),
            })
        })?;
    }
    ws.journal.step(Step::UpstackOnto, second, || {
        ws.spice.upstack_onto(&main, second, first).map_err(|err| {
            // Leave the main worktree as it was before the failed move; an aborted rebase
            // leaves the branch it stopped on where it was. The branches below it are stacked;
            // it and those above stay recorded on the one below them, needing a restack.
            let _ = ws.spice.rebase_abort(&main);
            let (branch, onto) = first_unstacked(ws, branches).unwrap_or((second, first));
            EngineError::Linearize {
                phase,
                branch: branch.clone(),
                onto: onto.clone(),
                detail: err.to_string(),
            }
        })
    })
}

/// The first branch (with the one it should sit on) whose history does not hold the tip of the
/// branch below it: where a restack stopped.
fn first_unstacked<'a>(ws: &Workspace, branches: &'a [String]) -> Option<(&'a String, &'a String)> {
    branches.windows(2).find_map(|pair| {
        let (below, branch) = (&pair[0], &pair[1]);
        let below_tip = ws.repo.branch_commit(below).ok()??;
        let tip = ws.repo.branch_commit(branch).ok()??;
        match ws.repo.is_ancestor(&below_tip, &tip) {
            Ok(true) => None,
            _ => Some((branch, below)),
        }
    })
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
