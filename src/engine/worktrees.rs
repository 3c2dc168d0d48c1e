//! A run's worktrees: where they are (`.worktrees/<runId>-main`, `.worktrees/<runId>-task-P-T`),
//! how one is made or repaired, and how a run's are found by name. Every function that changes a
//! worktree expects the caller to hold the repo lock.

use std::path::{Path, PathBuf};

use super::EngineError;
use super::journal::{Journal, Step};
use super::pool;
use super::seed;
use super::workspace::{WORKTREES_DIR, Workspace, main_worktree_path, task_worktree_path};
use crate::git::{self, Repo};
use crate::plan::Plan;
use crate::store::StateLayout;

pub fn same_path(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    a == b || canonical(a) == canonical(b)
}

/// Every run worktree path that exists must be a worktree git knows; anything else there is not
/// ours to touch.
pub fn check_worktree_paths(repo: &Repo, plan: &Plan, layout: &StateLayout) -> Result<(), EngineError> {
    let registered = git::list_worktrees(repo.root())?;
    let interrupted = Journal::unfinished(&layout.events(&plan.run_id));
    let main = (main_worktree_path(repo, &plan.run_id), "main".to_owned());
    let tasks =
        plan.tasks().map(|task| (task_worktree_path(repo, &plan.run_id, task.id), task.id.to_string()));
    for (path, target) in std::iter::once(main).chain(tasks) {
        let ours = registered.iter().any(|entry| same_path(&entry.path, &path))
            || interrupted.contains(&(Step::WorktreeAdd, target));
        if path.exists() && !ours {
            return Err(EngineError::NotAWorktree { path });
        }
    }
    Ok(())
}

/// What `ensure_worktree` leaves to do once the repo lock is let go.
#[must_use]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ensured {
    /// The worktree is there with its files (kept, or taken from the pool).
    Ready,
    /// There is none: `make_worktree` makes it.
    Missing,
}

/// Keeps the run worktree at `path`, or takes one from the repository's pool of recycled
/// worktrees detached at `commitish` (when the run recycles and the pool has one); one git still
/// records but whose folder is gone or half made is removed first (its branch, where the work is,
/// stays). `Ensured::Missing`: `make_worktree` is to make it. The caller holds the repo lock.
pub fn ensure_worktree(
    ws: &Workspace,
    path: &Path,
    commitish: &str,
    target: &str,
    may_hold_work: bool,
) -> Result<Ensured, EngineError> {
    // A move in or out of the pool that a killed process left is finished first: it may have left
    // a worktree at `path` that is not at its commit yet.
    pool::recover(&ws.repo, &ws.layout)?;
    // A worktree whose making was cut short is there, git opens it, and part of its files are
    // missing: a task working there would commit their deletion.
    let cut_short = || {
        Journal::unfinished(&ws.layout.events(&ws.run_id)).contains(&(Step::WorktreeAdd, target.to_owned()))
    };
    if path.exists() && git::open_worktree(path).is_ok() && !cut_short() {
        return Ok(Ensured::Ready);
    }
    // Registered, or left half made by a `git worktree add` this run's journal shows was cut
    // short (check_worktree_paths refused any other folder in a run's place).
    if path.exists() || ws.repo.worktree_paths()?.iter().any(|registered| same_path(registered, path)) {
        ws.journal.step(Step::WorktreeRepair, target, || repair_worktree(ws, path, may_hold_work))?;
    }
    std::fs::create_dir_all(ws.repo.root().join(WORKTREES_DIR))
        .map_err(|source| EngineError::Io { context: "creating .worktrees".into(), source })?;
    // The pool's worktrees check everything out: a run that wants sparse ones makes them.
    if ws.seed.sparse.is_empty() && ws.pool().take(path, commitish, target, &ws.lock_reason())? {
        return Ok(Ensured::Ready);
    }
    Ok(Ensured::Missing)
}

/// Makes the worktree `ensure_worktree` found missing (`make_fresh`), as one journal step:
/// a kill anywhere in it leaves a worktree the next `ensure_worktree` makes again. The caller
/// does not hold the repo lock, so that several new worktrees are written at once.
pub fn make_worktree(
    ws: &Workspace,
    path: &Path,
    commitish: &str,
    target: &str,
    ensured: Ensured,
) -> Result<(), EngineError> {
    if ensured == Ensured::Ready {
        return Ok(());
    }
    ws.journal.step(Step::WorktreeAdd, target, || make_fresh(ws, path, commitish, target))?;
    if ws.pool.recycle {
        pool::trust_fresh(&ws.layout, path);
    }
    Ok(())
}

/// Makes the fresh worktree `path` detached at `commitish`: sparse when the run asks, seeded with
/// the run's `copy`, and owed the run's `setup` (recorded first, so a kill after the add still
/// leaves it owed). It is registered under the repo lock (`git worktree add --no-checkout`, a
/// moment); its files are written and copied without it (the long part, which touches nothing but
/// this worktree), so several fresh worktrees are written at once. The caller does not hold the
/// repo lock, and journals this as one step for `target`.
fn make_fresh(ws: &Workspace, path: &Path, commitish: &str, target: &str) -> Result<(), EngineError> {
    let policy = &ws.seed;
    if policy.setup.is_some() {
        let owed = setup_owed(ws, path);
        if let Some(dir) = owed.parent() {
            std::fs::create_dir_all(dir).map_err(|source| EngineError::Io {
                context: format!("creating {}", dir.display()),
                source,
            })?;
        }
        std::fs::write(&owed, b"")
            .map_err(|source| EngineError::Io { context: format!("writing {}", owed.display()), source })?;
    }
    let root = ws.repo.root();
    {
        let _repo_lock = ws.repo_lock()?;
        git::add_detached_empty(root, path, commitish, &ws.lock_reason())?;
    }
    ws.journal.crash_point(Step::WorktreeFill, target, false);
    if !policy.sparse.is_empty() {
        git::sparse_checkout(path, &policy.sparse)?;
    }
    git::fill(path)?;
    if !policy.copy.is_empty() {
        seed::copy_ignored(root, path, &policy.copy)?;
    }
    Ok(())
}

/// The mark that the worktree at `path` still owes the run's setup.
pub fn setup_owed(ws: &Workspace, path: &Path) -> PathBuf {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    ws.layout.run_dir(&ws.run_id).join("setup-owed").join(name)
}

/// Drops git's record of a worktree that cannot be used. A folder git refuses to remove (a
/// `git worktree add` killed half way leaves one) is moved aside when an agent may have worked
/// in it, and deleted when it can only hold the checkout git was writing.
fn repair_worktree(ws: &Workspace, path: &Path, may_hold_work: bool) -> Result<(), EngineError> {
    let registered = is_registered(&ws.repo, path)?;
    if registered && git::remove_worktree(ws.repo.root(), path, true).is_ok() {
        return Ok(());
    }
    if path.exists() && !may_hold_work {
        std::fs::remove_dir_all(path)
            .map_err(|source| EngineError::Io { context: format!("removing {}", path.display()), source })?;
    } else if path.exists() {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let aside = path.with_file_name(format!("{name}.broken-{}", crate::store::now()));
        std::fs::rename(path, &aside).map_err(|source| EngineError::Io {
            context: format!("moving {} aside", path.display()),
            source,
        })?;
    }
    if registered {
        git::remove_worktree(ws.repo.root(), path, true)?;
    }
    Ok(())
}

fn is_registered(repo: &Repo, path: &Path) -> Result<bool, EngineError> {
    Ok(git::list_worktrees(repo.root())?.iter().any(|entry| same_path(&entry.path, path)))
}

/// The run's worktrees git records (`.worktrees/<runId>-main`, `-task-P-T`) and the folders a
/// repair moved aside (`.broken-*`), found by name so that lost state hides none of them.
pub fn run_worktrees(repo: &Repo, run_id: &str) -> Result<Vec<PathBuf>, EngineError> {
    let dir = repo.root().join(WORKTREES_DIR);
    let ours = |path: &Path| {
        path.parent().is_some_and(|parent| same_path(parent, &dir))
            && path.file_name().is_some_and(|name| is_run_name(&name.to_string_lossy(), run_id))
    };
    let mut found: Vec<PathBuf> = git::list_worktrees(repo.root())?
        .into_iter()
        .map(|entry| entry.path)
        .filter(|path| ours(path))
        .collect();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if ours(&path) && !found.iter().any(|known| same_path(known, &path)) {
                found.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

fn is_run_name(name: &str, run_id: &str) -> bool {
    let Some(rest) = name.strip_prefix(run_id).and_then(|rest| rest.strip_prefix('-')) else { return false };
    let rest = rest.split(".broken-").next().unwrap_or(rest);
    rest == "main"
        || rest.strip_prefix("task-").is_some_and(|n| n.split('-').all(|p| p.parse::<u32>().is_ok()))
}
