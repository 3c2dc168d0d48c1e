//! Resuming: reconcile the manifest with git, trusting git where they disagree, and say what was
//! found. Refuses, with the fix, where going on could lose or mix up work.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::EngineError;
use super::event::Event;
use super::journal::{Journal, Step};
use super::run::Run;
use super::task::{TaskOutcome, recorded_watch, take_back};
use crate::git;
use crate::plan::{Strategy, TaskId};
use crate::store::{PhaseState, RunManifest, TaskState};

pub fn reconcile(run: &mut Run) -> Result<(), EngineError> {
    wait_for_orphan_agents(run);
    clear_stale_locks(run)?;
    check_interrupted_tasks(run)?;
    forget_vanished_branches(run)?;
    abort_interrupted_rebase(run)?;
    track_untracked_branches(run)?;
    for phase in &run.manifest.phases {
        if phase.state == PhaseState::Linearizing {
            run.emit(notice(format!(
                "phase {} was interrupted while stacking; stacking resumes",
                phase.number
            )));
        }
        for task in phase.tasks.iter().filter(|t| t.state == TaskState::Running) {
            run.emit(notice(format!(
                "task {} ({}) was interrupted; it runs again on {}",
                task.id, task.name, task.branch
            )));
        }
    }
    Ok(())
}

/// A task whose wt was killed ran without the check that follows it. Check it now against the
/// snapshot written before it started; if it changed what it may not, that is put back and the
/// attempt recorded as failed (the task then runs again, checked as always). A task with no
/// snapshot was stopped before its agent started.
fn check_interrupted_tasks(run: &mut Run) -> Result<(), EngineError> {
    let interrupted: Vec<(TaskId, PathBuf)> = run
        .manifest
        .phases
        .iter()
        .flat_map(|p| &p.tasks)
        .filter(|t| t.state == TaskState::Running)
        .map(|t| (t.id, t.worktree.clone()))
        .collect();
    for (id, worktree) in interrupted {
        let (Some(task), Ok(watch)) = (run.plan.task(id).cloned(), recorded_watch(&run.ws, id)) else {
            continue;
        };
        if let Some(failure) = take_back(&run.ws, &task, &worktree, &watch)? {
            run.record_outcome(
                &task,
                TaskOutcome::Failed(format!("in the attempt wt was killed during: {failure}")),
            )?;
        }
    }
    Ok(())
}

fn notice(message: String) -> Event {
    Event::Notice { message }
}

/// An agent of a killed wt may still be working in its worktree; running a second one there
/// would mix their changes. Wait until it ends (its pid is checked against its working folder,
/// so a recycled pid is not mistaken for it).
fn wait_for_orphan_agents(run: &mut Run) {
    let orphans: Vec<(crate::plan::TaskId, u32, std::path::PathBuf)> = run
        .manifest
        .phases
        .iter()
        .flat_map(|p| &p.tasks)
        .filter(|t| t.state == TaskState::Running)
        .filter_map(|t| Some((t.id, t.agent_pid?, t.worktree.clone())))
        .filter(|(_, pid, worktree)| agent_alive(*pid, worktree))
        .collect();
    for (task, pid, worktree) in orphans {
        run.emit(notice(format!(
            "the agent of task {task} (pid {pid}) from the interrupted run is still working in {}; \
             waiting for it to finish (or stop it with `kill {pid}`)",
            worktree.display()
        )));
        while agent_alive(pid, &worktree) {
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

fn agent_alive(pid: u32, worktree: &Path) -> bool {
    std::fs::read_link(format!("/proc/{pid}/cwd")).is_ok_and(|cwd| cwd.starts_with(worktree))
}

/// A git process killed with wt leaves its `*.lock` files, and every later git call on that
/// index or ref fails until they go. Only this run's worktrees and branches are cleared (nothing
/// else works on them, and its previous process and children are dead); git-spice's shared state
/// ref is cleared only if its lock outlives a grace period under our repo lock.
fn clear_stale_locks(run: &mut Run) -> Result<(), EngineError> {
    let _repo_lock = run.ws.repo_lock()?;
    let common = run.ws.repo.common_dir().to_owned();
    let mut stale = Vec::new();
    let mut worktrees: Vec<std::path::PathBuf> = vec![run.ws.main_worktree()];
    for task in run.manifest.phases.iter().flat_map(|p| &p.tasks) {
        if !worktrees.contains(&task.worktree) {
            worktrees.push(task.worktree.clone());
        }
        stale.push(common.join("refs/heads").join(format!("{}.lock", task.branch)));
    }
    for worktree in &worktrees {
        if let Some(admin) = git::worktree_admin_dir(worktree) {
            stale.extend(["index.lock", "HEAD.lock"].map(|name| admin.join(name)));
        }
    }
    let spice_lock = common.join("refs/spice/data.lock");
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while spice_lock.exists() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    stale.push(spice_lock);
    for lock in stale.into_iter().filter(|lock| lock.exists()) {
        std::fs::remove_file(&lock)
            .map_err(|source| EngineError::Io { context: format!("removing {}", lock.display()), source })?;
        run.emit(notice(format!("removed {}, left by a git process of the interrupted run", lock.display())));
    }
    Ok(())
}

/// A task whose branch is gone (deleted by hand) is not done, whatever the manifest says.
fn forget_vanished_branches(run: &mut Run) -> Result<(), EngineError> {
    let mut vanished = Vec::new();
    for (p, phase) in run.manifest.phases.iter().enumerate() {
        for (t, task) in phase.tasks.iter().enumerate() {
            if task.base_commit.is_some() && !run.ws.repo.branch_exists(&task.branch)? {
                vanished.push((p, t));
            }
        }
    }
    for (p, t) in vanished {
        let phase = &mut run.manifest.phases[p];
        phase.state = PhaseState::Pending;
        let task = &mut phase.tasks[t];
        let message = format!("branch {} of task {} is gone; the task runs again", task.branch, task.id);
        task.state = TaskState::Pending;
        task.base_commit = None;
        task.error = None;
        run.save()?;
        run.emit(notice(message));
    }
    Ok(())
}

/// A kill inside `git-spice upstack onto` can leave a rebase under way in the main worktree.
fn abort_interrupted_rebase(run: &mut Run) -> Result<(), EngineError> {
    let main = run.ws.main_worktree();
    if !git::rebase_in_progress(&main)? {
        return Ok(());
    }
    let _repo_lock = run.ws.repo_lock()?;
    run.ws.journal.step(Step::RebaseAbort, &main.to_string_lossy(), || Ok(git::abort_rebase(&main)?))?;
    run.emit(notice(format!(
        "aborted the interrupted rebase in {}; stacking starts that move again",
        main.display()
    )));
    Ok(())
}

/// Before a resume changes anything: the main worktree must be in a state the run explains — on
/// one of its branches or detached, with no changes but an unfinished task's on that task's
/// branch. A rebase under way (a kill during stacking) is the run's own and is undone later.
pub fn check_main_worktree(manifest: &RunManifest) -> Result<(), EngineError> {
    let main = &manifest.main_worktree;
    if git::open_worktree(main).is_err() || git::rebase_in_progress(main)? {
        return Ok(());
    }
    let branch = git::current_branch(main)?;
    let tasks = || manifest.phases.iter().flat_map(|p| &p.tasks);
    if let Some(branch) = &branch
        && !tasks().any(|t| &t.branch == branch)
        && *branch != manifest.base
    {
        return Err(EngineError::WrongBranch {
            path: main.clone(),
            branch: branch.clone(),
            expected: tasks().filter(|t| t.base_commit.is_some()).map(|t| t.branch.clone()).next_back(),
        });
    }
    let changed = git::status_paths(main)?;
    let unfinished = branch.as_ref().is_some_and(|b| {
        tasks().any(|t| &t.branch == b && t.state != TaskState::Verified && &t.worktree == main)
    });
    if !changed.is_empty() && !unfinished {
        return Err(EngineError::DirtyWorktree { path: main.clone(), files: changed });
    }
    Ok(())
}

/// A kill inside `git-spice branch create` can leave a branch git has and git-spice does not.
/// Only then (the journal shows a branch-create cut short) is git-spice asked.
fn track_untracked_branches(run: &mut Run) -> Result<(), EngineError> {
    let interrupted = Journal::unfinished(&run.ws.layout.events(&run.ws.run_id));
    if !interrupted.iter().any(|(step, _)| *step == Step::BranchCreate) {
        return Ok(());
    }
    let mut claimed = Vec::new();
    let mut below = run.manifest.base.clone();
    for phase in &run.manifest.phases {
        let phase_base = below.clone();
        for task in &phase.tasks {
            let task_below = match phase.strategy {
                Strategy::Sequential => below.clone(),
                Strategy::Parallel => phase_base.clone(),
            };
            if task.base_commit.is_some() && run.ws.repo.branch_exists(&task.branch)? {
                claimed.push((task.branch.clone(), task_below));
            }
            if phase.strategy == Strategy::Sequential {
                below = task.branch.clone();
            }
        }
        below = phase.tasks.last().map(|t| t.branch.clone()).unwrap_or(below);
    }
    if claimed.is_empty() {
        return Ok(());
    }
    let main = run.ws.main_worktree();
    let tracked = run.ws.spice.log_all(&main)?;
    for (branch, below) in claimed {
        if tracked.iter().any(|logged| logged.name == branch) {
            continue;
        }
        let _repo_lock = run.ws.repo_lock()?;
        run.ws
            .journal
            .step(Step::BranchTrack, &branch, || Ok(run.ws.spice.branch_track(&main, &branch, &below)?))?;
        run.emit(notice(format!("git-spice did not know {branch}; it now tracks it on {below}")));
    }
    Ok(())
}
