//! The pool of recycled worktrees, one per repository, shared by all its runs. A run's worktree
//! that is done with (a parallel task's once its branch is stacked, a run's main one at `wt
//! cleanup`) is not deleted but made fit (`clean.rs`) and parked in `.worktrees/.pool/<slot>`;
//! the next worktree a run needs is taken from there — moved to its name and checked out at its
//! commit, which writes only the files that differ, keeping ignored build output such as `target/`
//! — instead of being made with `git worktree add`, which writes every file.
//!
//! Invariants:
//! - Every change to the pool happens under the repo lock, and the record
//!   (`store::PoolRecord`) says what is under way before anything moves: an entry not `parked` when
//!   the lock is taken was left by a process that died mid-move, and `recover` (which every
//!   operation runs first) removes that worktree wherever the move left it. A pooled worktree is
//!   therefore never handed to two tasks, and a kill at any instant leaves nothing half reused.
//! - A worktree that cannot be made fit is removed instead; so is one more than the cap.
//! - Nothing here fails a run for the pool's sake: a worktree that cannot be taken is removed and
//!   a fresh one made. Only removing a worktree or writing the record can fail.

mod clean;
mod view;

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::EngineError;
use super::journal::{Journal, Step};
use crate::git::{self, Repo, WORKTREES_DIR};
use crate::plan::WorktreeConfig;
use crate::store::{PoolRecord, PoolRecordError, PoolState, PooledWorktree, StateLayout};
pub use clean::remove_tree;
pub use view::{PoolView, view};

/// The folder of `.worktrees/` that holds the parked worktrees.
pub const POOL_DIR: &str = ".pool";

/// Under `.worktrees`: pooled worktrees wt could not remove (a file made immutable, say), set
/// aside so that the pool's recovery, which every run does first, does not fail on them again.
pub const SET_ASIDE_DIR: &str = ".unremovable";

/// The lock reason of a parked worktree (`git worktree lock`).
const PARKED_REASON: &str = "spectacular pool: a recycled worktree waiting for its next task";

/// Whether a run recycles its worktrees, how many may wait, and which ignored paths they keep.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PoolPolicy {
    pub recycle: bool,
    pub cap: usize,
    pub keep: Vec<String>,
}

impl PoolPolicy {
    /// `config` (the project's worktree.toml with the plan's `[worktree]`) for a run of
    /// `max_parallel` agents: the cap defaults to that, one worktree per agent.
    pub fn new(config: &WorktreeConfig, max_parallel: usize) -> PoolPolicy {
        PoolPolicy {
            recycle: config.recycles(),
            cap: config.pool_size.unwrap_or(max_parallel),
            keep: config.kept(),
        }
    }
}

/// `.worktrees/.pool` of the repository.
pub fn pool_dir(repo: &Repo) -> PathBuf {
    repo.root().join(WORKTREES_DIR).join(POOL_DIR)
}

/// What the caller of `Pool::retire` knows of the worktree's uncommitted files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Uncommitted {
    /// It has just seen there are none.
    NoneSeen,
    /// It looked without the repo lock (`wt cleanup`): there may be some by now, and they must
    /// stay — such a worktree is neither parked nor removed (git refuses, and says so).
    Keep,
    /// There may be some; they may go with the worktree (`wt cleanup --force`), which is then
    /// removed, never parked.
    Discard,
}

/// What became of a worktree that was done with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Retired {
    Parked { slot: PathBuf },
    Removed { reason: String },
}

/// One line of a run's `events.jsonl` for each worktree moved in or out of the pool (or removed
/// instead), so a person, or a test, can follow which worktree went where.
#[derive(Serialize)]
struct PoolEvent<'a> {
    event: &'static str,
    action: &'static str,
    target: &'a str,
    worktree: &'a Path,
    #[serde(skip_serializing_if = "Option::is_none")]
    slot: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    admin: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    reason: Option<&'a str>,
}

/// The pool as one run (or `wt cleanup` of one) uses it. Every method expects the caller to hold
/// the repo lock.
pub struct Pool<'a> {
    pub repo: &'a Repo,
    pub layout: &'a StateLayout,
    pub journal: &'a Journal,
    pub policy: &'a PoolPolicy,
}

impl Pool<'_> {
    /// Makes `to` a worktree detached at `commitish` out of a parked one, locked with `reason`;
    /// false when the pool has none to give (then the caller makes a fresh one).
    pub fn take(&self, to: &Path, commitish: &str, target: &str, reason: &str) -> Result<bool, EngineError> {
        if !self.policy.recycle {
            return Ok(false);
        }
        let Some(mut record) = self.record()? else { return Ok(false) };
        let dir = pool_dir(self.repo);
        // The most recently parked one: its files are the likeliest to be in the page cache.
        while let Some(index) = record.worktrees.iter().rposition(|entry| entry.state == PoolState::Parked) {
            let entry = record.worktrees[index].clone();
            let slot = dir.join(&entry.slot);
            let taken = self.journal.step(Step::PoolTake, target, || {
                record.worktrees[index].state = PoolState::Taking { to: to.to_owned() };
                self.save(&record)?;
                let taken = self.move_out(&entry, &slot, to, commitish, target, reason);
                if taken.is_err() {
                    remove_pooled(self.repo, self.layout, &entry, &[&slot, to])?;
                }
                record.worktrees.remove(index);
                self.save(&record)?;
                Ok(taken)
            })?;
            match taken {
                Ok(()) => {
                    self.note("took", target, to, Some(&entry), None);
                    return Ok(true);
                }
                Err(clean::Unfit(why)) => self.note("removed", target, &slot, Some(&entry), Some(&why)),
            }
        }
        Ok(false)
    }

    fn move_out(
        &self,
        entry: &PooledWorktree,
        slot: &Path,
        to: &Path,
        commitish: &str,
        target: &str,
        reason: &str,
    ) -> Result<(), clean::Unfit> {
        let admin = self.admin(&entry.admin);
        if !links_to(slot, &admin) {
            return Err(clean::Unfit(format!(
                "{} is not the worktree the pool parked there",
                slot.display()
            )));
        }
        clean::check_parked(slot, &admin)?;
        git::move_worktree(self.repo.root(), slot, to)?;
        self.journal.crash_point(Step::PoolTakeMoved, target, false);
        git::set_lock_reason(&admin, reason)?;
        git::checkout_detached(to, commitish)?;
        clean::check_untracked(to, commitish)?;
        clean::save_trusted_index(self.layout, &admin)?;
        Ok(())
    }

    /// `worktree` is done with: parks it when the policy recycles and it can be made fit, else
    /// removes it. `uncommitted` says what the caller knows of its uncommitted files.
    pub fn retire(
        &self,
        worktree: &Path,
        target: &str,
        uncommitted: Uncommitted,
    ) -> Result<Retired, EngineError> {
        let (mut record, admin) = match self.parking(worktree, uncommitted)? {
            Ok(place) => place,
            Err(reason) => {
                remove_run_worktree(self.repo, self.layout, worktree, uncommitted == Uncommitted::Discard)?;
                self.note("removed", target, worktree, None, Some(&reason));
                return Ok(Retired::Removed { reason });
            }
        };
        let dir = pool_dir(self.repo);
        let entry = PooledWorktree {
            slot: record.free_slot(&dir),
            admin: clean::admin_name(&admin),
            origin: worktree.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default(),
            at: crate::store::now(),
            state: PoolState::Parking { from: worktree.to_owned() },
        };
        let slot = dir.join(&entry.slot);
        let parked = self.journal.step(Step::PoolPark, target, || {
            record.worktrees.push(entry.clone());
            self.save(&record)?;
            let parked = self.move_in(worktree, &admin, &slot, target);
            match parked {
                Ok(()) => {
                    if let Some(last) = record.worktrees.last_mut() {
                        last.state = PoolState::Parked;
                    }
                }
                Err(_) => {
                    remove_pooled(self.repo, self.layout, &entry, &[worktree, &slot])?;
                    record.worktrees.pop();
                }
            }
            self.save(&record)?;
            Ok(parked)
        })?;
        match parked {
            Ok(()) => {
                self.note("parked", target, worktree, Some(&entry), None);
                Ok(Retired::Parked { slot })
            }
            Err(clean::Unfit(reason)) => {
                self.note("removed", target, worktree, Some(&entry), Some(&reason));
                Ok(Retired::Removed { reason })
            }
        }
    }

    /// The record and the worktree's admin folder when `worktree` may be parked; else why not.
    fn parking(
        &self,
        worktree: &Path,
        uncommitted: Uncommitted,
    ) -> Result<Result<(PoolRecord, PathBuf), String>, EngineError> {
        if !self.policy.recycle {
            return Ok(Err("recycling is off".into()));
        }
        if git::open_worktree(worktree).is_err() {
            return Ok(Err("git cannot open it".into()));
        }
        // Cleaning discards uncommitted changes: only the caller's word or a look of our own lets
        // a worktree in (a look costs a walk of its files, which the caller usually just made).
        if uncommitted != Uncommitted::NoneSeen && !git::status_paths(worktree)?.is_empty() {
            return Ok(Err("it has uncommitted files".into()));
        }
        let Some(admin) = git::worktree_admin_dir(worktree) else {
            return Ok(Err("it is not a linked worktree".into()));
        };
        let Some(record) = self.record()? else {
            return Ok(Err("the pool's record is not one this wt can use".into()));
        };
        if record.parked().count() >= self.policy.cap {
            return Ok(Err(format!("the pool is full ({} worktrees)", self.policy.cap)));
        }
        Ok(Ok((record, admin)))
    }

    fn move_in(&self, worktree: &Path, admin: &Path, slot: &Path, target: &str) -> Result<(), clean::Unfit> {
        clean::make_fit(self.layout, worktree, admin, &self.policy.keep)?;
        clean::save_trusted_index(self.layout, admin)?;
        std::fs::create_dir_all(slot.parent().unwrap_or(slot))?;
        git::move_worktree(self.repo.root(), worktree, slot)?;
        self.journal.crash_point(Step::PoolParkMoved, target, false);
        git::set_lock_reason(admin, PARKED_REASON)?;
        Ok(())
    }

    /// The record after finishing what a killed process left; None when it is of a format this
    /// wt does not know (the pool is then left alone).
    fn record(&self) -> Result<Option<PoolRecord>, EngineError> {
        recover(self.repo, self.layout)?;
        Ok(PoolRecord::load(&self.layout.pool_record()).ok())
    }

    fn save(&self, record: &PoolRecord) -> Result<(), EngineError> {
        record.save(&self.layout.pool_record()).map_err(record_error)
    }

    fn admin(&self, name: &str) -> PathBuf {
        self.repo.common_dir().join("worktrees").join(name)
    }

    fn note(
        &self,
        action: &'static str,
        target: &str,
        worktree: &Path,
        entry: Option<&PooledWorktree>,
        reason: Option<&str>,
    ) {
        // Advisory, like the journal it goes to: a full disk must not stop the run.
        let _ = self.journal.log().append(&PoolEvent {
            event: "pool",
            action,
            target,
            worktree,
            slot: entry.map(|e| e.slot.as_str()),
            admin: entry.map(|e| e.admin.as_str()),
            reason,
        });
    }
}

/// Saves the index a fresh worktree was just made with as its trusted copy (see `clean.rs`).
/// Without one the worktree is removed rather than recycled later, so a failure here is no error.
pub fn trust_fresh(layout: &StateLayout, worktree: &Path) {
    if let Some(admin) = git::worktree_admin_dir(worktree) {
        let _ = clean::save_trusted_index(layout, &admin);
    }
}

/// Finishes what a process killed while moving a worktree in or out left: that worktree is removed
/// wherever the move left it, as is anything in `.worktrees/.pool` the record does not account for
/// and every record of a parked worktree that is gone. Under the repo lock. A record this wt cannot
/// read is started afresh (every folder of the pool is then unaccounted for); one of another format
/// is left alone.
pub fn recover(repo: &Repo, layout: &StateLayout) -> Result<(), EngineError> {
    let path = layout.pool_record();
    let dir = pool_dir(repo);
    if !path.exists() && !dir.exists() {
        return Ok(());
    }
    let mut record = match PoolRecord::load(&path) {
        Ok(record) => record,
        Err(PoolRecordError::OtherFormat { .. }) => return Ok(()),
        Err(_) => PoolRecord::default(),
    };
    let before = record.clone();
    let mut kept = Vec::new();
    for entry in std::mem::take(&mut record.worktrees) {
        let slot = dir.join(&entry.slot);
        let admin = repo.common_dir().join("worktrees").join(&entry.admin);
        match &entry.state {
            PoolState::Parked if links_to(&slot, &admin) => kept.push(entry),
            PoolState::Parked => remove_pooled(repo, layout, &entry, &[&slot])?,
            PoolState::Parking { from } => remove_pooled(repo, layout, &entry, &[&slot, from])?,
            PoolState::Taking { to } => remove_pooled(repo, layout, &entry, &[&slot, to])?,
        }
    }
    record.worktrees = kept;
    let accounted = |path: &Path| record.worktrees.iter().any(|entry| same(&dir.join(&entry.slot), path));
    let mut strays: Vec<PathBuf> =
        std::fs::read_dir(&dir).into_iter().flatten().flatten().map(|e| e.path()).collect();
    strays.extend(
        registered(repo).into_iter().map(|(folder, _)| folder).filter(|folder| in_pool(&dir, folder)),
    );
    for folder in strays.into_iter().filter(|folder| !accounted(folder)) {
        remove_stray(repo, layout, &folder)?;
    }
    if record != before {
        record.save(&path).map_err(record_error)?;
    }
    forget_stale_indexes(repo, layout);
    Ok(())
}

/// `wt cleanup --pool`: removes every parked worktree (after finishing what a killed move left).
pub fn empty(repo: &Repo, layout: &StateLayout) -> Result<Vec<PathBuf>, EngineError> {
    recover(repo, layout)?;
    let path = layout.pool_record();
    let mut record = match PoolRecord::load(&path) {
        Ok(record) => record,
        Err(err @ PoolRecordError::OtherFormat { .. }) => return Err(record_error(err)),
        Err(_) => PoolRecord::default(),
    };
    let dir = pool_dir(repo);
    let mut removed = Vec::new();
    while let Some(entry) = record.worktrees.pop() {
        let slot = dir.join(&entry.slot);
        remove_pooled(repo, layout, &entry, &[&slot])?;
        record.save(&path).map_err(record_error)?;
        removed.push(slot);
    }
    let _ = std::fs::remove_dir(&dir);
    removed.reverse();
    Ok(removed)
}

/// Removes a run's worktree for good (the pool does not take it): through git when git records
/// it (forced when `discard`), and its folder if git leaves one.
pub fn remove_run_worktree(
    repo: &Repo,
    layout: &StateLayout,
    worktree: &Path,
    discard: bool,
) -> Result<(), EngineError> {
    let admin = git::worktree_admin_dir(worktree);
    if repo.worktree_paths()?.iter().any(|registered| same(registered, worktree)) {
        git::remove_worktree(repo.root(), worktree, discard)?;
    }
    remove_tree(worktree).map_err(|source| io(worktree, source))?;
    if let Some(admin) = admin {
        let _ = std::fs::remove_file(layout.trusted_index(&clean::admin_name(&admin)));
    }
    Ok(())
}

/// Removes a pooled (or half moved) worktree: every folder among `places` that is it (a slot is
/// wt's own place: whatever is there goes), then git's record of it (its admin folder: what `git
/// worktree prune` does for a worktree whose folder is gone, which it skips when locked) and its
/// trusted index. No work can be lost: only worktrees with nothing uncommitted enter the pool.
fn remove_pooled(
    repo: &Repo,
    layout: &StateLayout,
    entry: &PooledWorktree,
    places: &[&Path],
) -> Result<(), EngineError> {
    let admin = repo.common_dir().join("worktrees").join(&entry.admin);
    let slots = pool_dir(repo);
    let mut folders: Vec<PathBuf> = places.iter().map(|place| place.to_path_buf()).collect();
    folders.extend(recorded_folder(&admin));
    for folder in folders {
        if in_pool(&slots, &folder) || links_to(&folder, &admin) {
            remove_or_set_aside(repo, &folder)?;
        }
    }
    if admin.exists() {
        remove_tree(&admin).map_err(|source| io(&admin, source))?;
    }
    let _ = std::fs::remove_file(layout.trusted_index(&entry.admin));
    Ok(())
}

/// Removes a folder of the pool the record does not account for, and git's record of the worktree
/// there, if git has one.
fn remove_stray(repo: &Repo, layout: &StateLayout, folder: &Path) -> Result<(), EngineError> {
    remove_or_set_aside(repo, folder)?;
    for (registered, admin) in registered(repo) {
        if same(&registered, folder) {
            remove_tree(&admin).map_err(|source| io(&admin, source))?;
            let _ = std::fs::remove_file(layout.trusted_index(&clean::admin_name(&admin)));
        }
    }
    Ok(())
}

/// Removes `folder`, or when something in it cannot be removed, moves it into
/// `.worktrees/.unremovable` (which `wt status --pool` and `wt doctor` point out): a worktree the
/// pool is done with must not stay where the next recovery finds it and fails again.
fn remove_or_set_aside(repo: &Repo, folder: &Path) -> Result<(), EngineError> {
    let Err(source) = remove_tree(folder) else { return Ok(()) };
    let aside = set_aside_dir(repo);
    let name = folder.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    let to = aside.join(format!("{name}-{}", crate::store::now()));
    match std::fs::create_dir_all(&aside).and_then(|()| std::fs::rename(folder, &to)) {
        Ok(()) => Ok(()),
        Err(_) => Err(io(folder, source)),
    }
}

/// `.worktrees/.unremovable`.
pub fn set_aside_dir(repo: &Repo) -> PathBuf {
    repo.root().join(WORKTREES_DIR).join(SET_ASIDE_DIR)
}

/// Every linked worktree git records: its folder and its admin folder.
fn registered(repo: &Repo) -> Vec<(PathBuf, PathBuf)> {
    let admins = std::fs::read_dir(repo.common_dir().join("worktrees")).into_iter().flatten().flatten();
    admins.filter_map(|entry| Some((recorded_folder(&entry.path())?, entry.path()))).collect()
}

/// The folder git records for the admin folder `admin` (its `gitdir` names the folder's `.git`).
fn recorded_folder(admin: &Path) -> Option<PathBuf> {
    let gitdir = std::fs::read_to_string(admin.join("gitdir")).ok()?;
    Path::new(gitdir.trim()).parent().map(Path::to_owned)
}

/// Drops the trusted indexes of worktrees that are gone (removed by other means than the pool's).
fn forget_stale_indexes(repo: &Repo, layout: &StateLayout) {
    let copies = std::fs::read_dir(layout.pool_dir().join("index")).into_iter().flatten().flatten();
    for copy in copies {
        if !repo.common_dir().join("worktrees").join(copy.file_name()).exists() {
            let _ = std::fs::remove_file(copy.path());
        }
    }
}

/// Whether `folder` is a slot of the pool `slots`: a folder named there, not a path that only
/// starts there (`.pool/../..`, which an admin folder's `gitdir` — a task's to write — may say).
fn in_pool(slots: &Path, folder: &Path) -> bool {
    let named = matches!(folder.components().next_back(), Some(std::path::Component::Normal(_)));
    let canonical = std::fs::canonicalize(slots).ok();
    named && folder.parent().is_some_and(|parent| parent == slots || Some(parent) == canonical.as_deref())
}

/// Whether `folder/.git` names the admin folder `admin`.
fn links_to(folder: &Path, admin: &Path) -> bool {
    git::worktree_admin_dir(folder).is_some_and(|found| same(&found, admin))
}

fn same(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    a == b || canonical(a) == canonical(b)
}

fn record_error(err: PoolRecordError) -> EngineError {
    EngineError::Io {
        context: "the worktree pool's record".into(),
        source: std::io::Error::other(err.to_string()),
    }
}

fn io(path: &Path, source: std::io::Error) -> EngineError {
    EngineError::Io { context: format!("removing {}", path.display()), source }
}
#[cfg(test)]
mod tests;
