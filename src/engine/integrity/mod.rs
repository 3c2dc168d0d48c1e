//! The check after every task: what the kernel sandbox cannot express, compared with a snapshot
//! taken before the task and put back where the agent changed it. Landlock must let a task write
//! `refs/heads`, `logs/refs/heads` and its worktree's git folder (a commit writes them), and it
//! does not cover `chmod`; so after the agent and after `verify`:
//!
//! - the writable git folders hold nothing but plain files and folders: a symlink, fifo or socket
//!   there would lead wt's own git (which runs outside the sandbox) elsewhere (`files`);
//! - the task's worktree is still linked to the repository (its `.git` file, its admin folder's
//!   `gitdir`, `commondir`, no `config.worktree`) and on the task's branch, and holds no nested
//!   repository, whose configured programs git would run outside the sandbox (`files`);
//! - every other ref is where it was, unless someone else moved it while the task ran: a change
//!   another worktree's HEAD log records (yours, a sibling task's, another run's — logs the task
//!   cannot write), refs others maintain (`refs/spice/`, `refs/remotes/`), other runs' branches
//!   (their engines move them in worktrees they then remove). The task's reflog lines on a ref it
//!   moved, and lock files it left on refs, go too (`refs`);
//! - the repository's `config` and `hooks/` keep their content and modes (`files`; a command's
//!   check, which spans others' work, compares only the modes);
//! - when no kernel sandbox contains the run, also the main checkout's HEAD and index (reported,
//!   never put back: they may be yours).
//!
//! A part that cannot be checked fails the task with the reason; the other parts still run.

mod files;
mod refs;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::EngineError;
use crate::git::{self, Repo};
use crate::store::StateLayout;
use files::FileState;

/// The state a task must leave as it found it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    common: PathBuf,
    /// The worktree's admin folder, `<common>/worktrees/<id>`.
    admin: Option<PathBuf>,
    links: BTreeMap<PathBuf, Option<FileState>>,
    shared: BTreeMap<PathBuf, FileState>,
    refs: refs::RefsSnapshot,
    /// The main checkout's HEAD and what its index records, when no kernel sandbox protects them.
    main: Option<(Option<String>, String)>,
    /// Only the modes of the repository's config and hooks are compared: a command's check (`wt
    /// sandbox --check`) spans others' legitimate changes to their content (a sibling's `wt pr`
    /// records its branch's remote in the config), and the kernel keeps the command from writing
    /// them, but not from a `chmod`.
    #[serde(default)]
    without_shared: bool,
}

/// What a task may change besides its own branch: the refs others move meanwhile.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Allowed {
    /// `refs/heads/<branch>` of the task itself: anything goes.
    pub own: String,
    /// Prefixes of other runs' branches (`refs/heads/<runId>-`): their engines stack and delete
    /// them, and remove the worktrees whose HEAD logs would explain the moves.
    pub other_runs: Vec<String>,
}

impl Allowed {
    /// What a task of run `run_id` on `branch` may leave changed.
    pub fn for_task(layout: &StateLayout, run_id: &str, branch: &str) -> Allowed {
        let runs = std::fs::read_dir(layout.runs_dir()).into_iter().flatten().flatten();
        let other_runs = runs
            .map(|entry| entry.file_name().to_string_lossy().into_owned())
            .filter(|id| id != run_id && crate::plan::run_id::is_valid(id))
            .map(|id| format!("refs/heads/{id}-"))
            .collect();
        Allowed { own: format!("refs/heads/{branch}"), other_runs }
    }
}

/// A task under watch: the snapshot from before it and what it may change.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Watch {
    pub snapshot: Snapshot,
    pub allowed: Allowed,
}

impl Watch {
    /// Why the task fails after putting back what it changed, or None when it changed nothing it
    /// may not.
    pub fn verdict(&self, repo: &Repo, worktree: &Path, branch: &str) -> Result<Option<String>, EngineError> {
        let changes = check(repo, &self.snapshot, worktree, branch, &self.allowed);
        Ok((!changes.is_empty()).then(|| {
            format!(
                "the task changed what it may not (or a task running beside it did: the check cannot tell \
                 which), and wt put it back where it could: {}. Work only in {} on {branch}; wt does \
                 everything else",
                changes.join("; "),
                worktree.display()
            )
        }))
    }
}

/// Watches one command in `worktree` on `branch` that no engine checks afterwards (a team agent's,
/// through `wt sandbox --check`): the snapshot is taken under the repo lock, so no change of wt's
/// own is half made; the command may change its own branch, and other runs' as their engines do.
pub fn watch_command(repo: &Repo, worktree: &Path, branch: &str) -> Result<Watch, EngineError> {
    let layout = StateLayout::new(repo.common_dir());
    let _repo_lock = crate::store::FileLock::acquire(&layout.repo_lock())?;
    let snapshot = Snapshot { without_shared: true, ..take(repo, worktree, true)? };
    Ok(Watch { snapshot, allowed: Allowed::for_task(&layout, "", branch) })
}

impl Watch {
    /// [`Watch::verdict`] under the repo lock, as a command's check runs beside wt's own work.
    pub fn verdict_locked(
        &self,
        repo: &Repo,
        worktree: &Path,
        branch: &str,
    ) -> Result<Option<String>, EngineError> {
        let layout = StateLayout::new(repo.common_dir());
        let _repo_lock = crate::store::FileLock::acquire(&layout.repo_lock())?;
        self.verdict(repo, worktree, branch)
    }
}

pub fn take(repo: &Repo, worktree: &Path, kernel_contained: bool) -> Result<Snapshot, EngineError> {
    let common = repo.common_dir();
    let admin = git::worktree_admin_dir(worktree);
    let links = files::link_files(worktree, admin.as_deref())
        .into_iter()
        .map(|path| (path.clone(), FileState::read(&path, true)))
        .collect();
    let shared = files::shared_files(common)
        .into_iter()
        .filter_map(|path| Some((path.clone(), FileState::read(&path, true)?)))
        .collect();
    let main = match kernel_contained {
        true => None,
        false => Some((std::fs::read_to_string(common.join("HEAD")).ok(), repo.index_digest()?)),
    };
    let refs = refs::RefsSnapshot::take(repo, admin.as_deref())?;
    Ok(Snapshot { common: common.to_owned(), admin, links, shared, refs, main, without_shared: false })
}

/// Compares the repository with `snapshot`, puts back what the task changed, and says what that
/// was (empty: nothing). `branch` is the task's own branch, which must be checked out in
/// `worktree`.
fn check(repo: &Repo, snapshot: &Snapshot, worktree: &Path, branch: &str, allowed: &Allowed) -> Vec<String> {
    let mut changes = Vec::new();
    let mut part = |what: &str, result: Result<Vec<String>, EngineError>| match result {
        Ok(found) => changes.extend(found),
        Err(err) => changes.push(format!("left {what} so wt could not check it ({err})")),
    };
    let writable = writable_git_folders(snapshot);
    part("the git folders", files::remove_special_files(&writable));
    part("the worktree's link", files::check_links(snapshot, worktree, branch));
    part("the worktree", files::disable_nested_repositories(worktree));
    // The config before the refs, which wt reads with git (a config made unreadable would fail it).
    match snapshot.without_shared {
        false => part("the repository's config and hooks", files::check_shared(snapshot)),
        true => part("the modes of the repository's config and hooks", files::check_shared_modes(snapshot)),
    }
    part("the refs", refs::check(repo, &snapshot.refs, allowed, snapshot.admin.as_deref()));
    if let Some((head, index)) = &snapshot.main {
        if std::fs::read_to_string(repo.common_dir().join("HEAD")).ok() != *head {
            changes.push("the main checkout's HEAD changed (not put back: it may have been you)".into());
        }
        match repo.index_digest() {
            Ok(now) if now == *index => {}
            Ok(_) => {
                changes.push("the main checkout's index changed (not put back: it may have been you)".into())
            }
            Err(err) => changes.push(format!("left the main checkout's index unreadable ({err})")),
        }
    }
    changes
}

/// The git folders a task may write: its admin folder, the branches and their reflogs.
fn writable_git_folders(snapshot: &Snapshot) -> Vec<PathBuf> {
    let common = &snapshot.common;
    let mut folders: Vec<PathBuf> = snapshot.admin.iter().cloned().collect();
    folders.extend([common.join("refs/heads"), common.join("logs/refs/heads")]);
    folders
}

/// Names a ref's value briefly: an object's first 12 hex digits, or what a symbolic ref names.
fn short(value: Option<&String>) -> String {
    match value {
        None => "nothing".to_owned(),
        Some(value) if value.starts_with(git::SYMBOLIC) => value.clone(),
        Some(value) => value[..value.len().min(12)].to_owned(),
    }
}

/// Whether `name` is one of the refs others keep up to date on their own.
fn maintained(name: &str) -> bool {
    ["refs/spice/", "refs/remotes/"].iter().any(|prefix| name.starts_with(prefix))
}

/// The set of values some other worktree's HEAD log moved to since the snapshot.
type Explanations = BTreeSet<String>;
