//! The refs of the check. A ref a task may not touch and that changed is put back, unless the
//! change is explained: some worktree other than the task's recorded it in its HEAD log (you
//! committing in your checkout, a sibling task committing in its worktree, another run stacking
//! its branches). The task cannot write those logs — the sandbox gives it its own admin folder
//! and `logs/refs/heads`, not `logs/HEAD` or another worktree's folder.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::{Allowed, Explanations, maintained, short};
use crate::engine::EngineError;
use crate::git::{self, Repo};

/// How old a lock file on a ref must be before the check takes it for one a task left (git holds
/// its ref locks for milliseconds).
const STALE_LOCK: Duration = Duration::from_secs(1);

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RefsSnapshot {
    refs: BTreeMap<String, String>,
    /// Sizes of the reflogs of `refs/heads/*`, by ref name.
    reflogs: BTreeMap<String, u64>,
    /// Sizes of the HEAD logs the task cannot write: the main checkout's and other worktrees'.
    head_logs: BTreeMap<PathBuf, u64>,
    /// Lock files under `refs/heads` when the snapshot was taken.
    locks: BTreeSet<PathBuf>,
}

impl RefsSnapshot {
    pub fn take(repo: &Repo, admin: Option<&Path>) -> Result<RefsSnapshot, EngineError> {
        let common = repo.common_dir();
        // The HEAD logs before the refs: a sibling committing meanwhile (outside the repo lock)
        // writes its HEAD log line before it moves its branch, so a move the refs below miss has
        // its line past these sizes, where the check looks for explanations — or, when git
        // stalled between the two writes for all of this, as the last line before them (see
        // `commits_in_flight`). Read the other way round, a commit landing between the two reads
        // left its branch's move unexplained, and put back (seen with 96 parallel tasks).
        let head_logs = other_head_logs(common, admin)
            .into_iter()
            .filter_map(|log| Some((log.clone(), size(&log)?)))
            .collect();
        let refs = repo.refs()?;
        let reflogs = refs
            .keys()
            .filter(|name| name.starts_with("refs/heads/"))
            .filter_map(|name| Some((name.clone(), size(&common.join("logs").join(name))?)))
            .collect();
        Ok(RefsSnapshot { refs, reflogs, head_logs, locks: ref_locks(common).into_iter().collect() })
    }
}

pub fn check(
    repo: &Repo,
    snapshot: &RefsSnapshot,
    allowed: &Allowed,
    admin: Option<&Path>,
) -> Result<Vec<String>, EngineError> {
    let common = repo.common_dir();
    let now = repo.refs()?;
    let explained = explanations(common, admin, &snapshot.head_logs);
    let in_flight = commits_in_flight(common, admin, &snapshot.head_logs);
    let mut changes = Vec::new();
    let names: BTreeSet<&String> = snapshot.refs.keys().chain(now.keys()).collect();
    for name in names {
        let (before, after) = (snapshot.refs.get(name), now.get(name));
        let others = name == &allowed.own
            || maintained(name)
            || allowed.other_runs.iter().any(|prefix| name.starts_with(prefix))
            || after.is_some_and(|value| explained.contains(value))
            || matches!((before, after), (Some(before), Some(after))
                if in_flight.contains(&(name.clone(), before.clone(), after.clone())));
        if before == after || others {
            continue;
        }
        trim_reflog(common, name, snapshot)?;
        git::put_back_ref(repo.root(), name, before.map(String::as_str), after.map(String::as_str))?;
        changes.push(match (before, after) {
            (None, _) => format!("created {name} at {} (deleted)", short(after)),
            (_, None) => format!("deleted {name} (put back at {})", short(before)),
            _ => format!("moved {name} from {} to {} (put back)", short(before), short(after)),
        });
    }
    for lock in ref_locks(common) {
        let own = lock == common.join(format!("{}.lock", allowed.own));
        if !own && !snapshot.locks.contains(&lock) && older_than(&lock, STALE_LOCK) {
            std::fs::remove_file(&lock).map_err(|source| io(&lock, source))?;
            changes.push(format!("left the lock {} (removed)", lock.display()));
        }
    }
    Ok(changes)
}

/// Cuts the reflog of `name` back to its size in the snapshot (the task's lines on a ref it moved;
/// a ref that has not moved is left alone — its reflog may be growing by a commit still under way,
/// whose ref git writes after its log).
fn trim_reflog(common: &Path, name: &str, snapshot: &RefsSnapshot) -> Result<bool, EngineError> {
    let Some(&before) = snapshot.reflogs.get(name) else { return Ok(false) };
    let log = common.join("logs").join(name);
    if size(&log).is_none_or(|now| now <= before) {
        return Ok(false);
    }
    let file = std::fs::OpenOptions::new().write(true).open(&log).map_err(|source| io(&log, source))?;
    file.set_len(before).map_err(|source| io(&log, source))?;
    Ok(true)
}

/// Every value a ref moved to in the HEAD logs the task cannot write, since the snapshot (from
/// the start for a worktree made meanwhile). Each line is `<old> <new> <who> <when>\t<what>`.
fn explanations(common: &Path, admin: Option<&Path>, before: &BTreeMap<PathBuf, u64>) -> Explanations {
    let mut values = Explanations::new();
    for log in other_head_logs(common, admin) {
        let Ok(text) = std::fs::read(&log) else { continue };
        let from = before.get(&log).copied().unwrap_or(0) as usize;
        let fresh = String::from_utf8_lossy(text.get(from..).unwrap_or_default()).into_owned();
        values.extend(fresh.lines().filter_map(|line| line.split(' ').nth(1)).map(str::to_owned));
    }
    values
}

/// The moves git was making when the snapshot was taken: for each other worktree with a branch
/// checked out, `(that branch, old, new)` from the last line its HEAD log had then. git writes a
/// commit's HEAD log line before it moves the branch, so a commit caught between the two has its
/// line inside the snapshot and its branch still at `old`; the branch's move to `new` is that
/// commit's. Only the branch that worktree has checked out is explained so, and only that move.
fn commits_in_flight(
    common: &Path,
    admin: Option<&Path>,
    before: &BTreeMap<PathBuf, u64>,
) -> BTreeSet<(String, String, String)> {
    let mut moves = BTreeSet::new();
    for log in other_head_logs(common, admin) {
        let Some(&size) = before.get(&log) else { continue };
        let Some(head) = log.parent().and_then(Path::parent).map(|dir| dir.join("HEAD")) else { continue };
        let Some(branch) = std::fs::read_to_string(&head)
            .ok()
            .and_then(|text| text.trim().strip_prefix("ref: ").map(str::to_owned))
        else {
            continue;
        };
        let Ok(text) = std::fs::read(&log) else { continue };
        let Some(logged) = text.get(..size as usize) else { continue };
        let logged = String::from_utf8_lossy(logged);
        let Some(last) = logged.strip_suffix('\n').and_then(|lines| lines.lines().next_back()) else {
            continue;
        };
        let mut words = last.split(' ');
        if let (Some(old), Some(new)) = (words.next(), words.next()) {
            moves.insert((branch, old.to_owned(), new.to_owned()));
        }
    }
    moves
}

/// The main checkout's HEAD log and every linked worktree's but the task's own.
fn other_head_logs(common: &Path, admin: Option<&Path>) -> Vec<PathBuf> {
    let mut logs = vec![common.join("logs/HEAD")];
    let worktrees = std::fs::read_dir(common.join("worktrees")).into_iter().flatten().flatten();
    logs.extend(
        worktrees
            .map(|entry| entry.path())
            .filter(|path| Some(path.as_path()) != admin)
            .map(|path| path.join("logs/HEAD")),
    );
    logs
}

/// Lock files under `refs/heads`.
fn ref_locks(common: &Path) -> Vec<PathBuf> {
    let mut locks = Vec::new();
    let mut pending = vec![common.join("refs/heads")];
    while let Some(folder) = pending.pop() {
        for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(kind) if kind.is_dir() => pending.push(path),
                Ok(_) if path.extension().is_some_and(|ext| ext == "lock") => locks.push(path),
                _ => {}
            }
        }
    }
    locks
}

fn size(path: &Path) -> Option<u64> {
    std::fs::symlink_metadata(path).ok().filter(|meta| meta.is_file()).map(|meta| meta.len())
}

fn older_than(path: &Path, age: Duration) -> bool {
    let modified = std::fs::metadata(path).and_then(|meta| meta.modified());
    modified.is_ok_and(|time| time.elapsed().is_ok_and(|elapsed| elapsed >= age))
}

fn io(path: &Path, source: std::io::Error) -> EngineError {
    EngineError::Io { context: format!("putting back {}", path.display()), source }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_caught_between_its_log_line_and_its_branch_move_is_explained_for_that_branch_only() {
        let temp = tempfile::tempdir().unwrap();
        let common = temp.path();
        let worktree = |name: &str, head: &str, log: &str| {
            let dir = common.join("worktrees").join(name);
            std::fs::create_dir_all(dir.join("logs")).unwrap();
            std::fs::write(dir.join("HEAD"), head).unwrap();
            std::fs::write(dir.join("logs/HEAD"), log).unwrap();
            dir.join("logs/HEAD")
        };
        let line = |old: &str, new: &str| format!("{old} {new} T <t@example.com> 1 +0000\tcommit: x\n");
        let committing = worktree("a", "ref: refs/heads/a\n", &(line("p0", "p0") + &line("p0", "a1")));
        let detached = worktree("b", "p0\n", &line("p0", "b1"));
        let later = worktree("c", "ref: refs/heads/c\n", &(line("p0", "p0") + &line("p0", "c1")));
        let own = worktree("d", "ref: refs/heads/d\n", &line("p0", "d1"));
        let size = |log: &PathBuf| std::fs::metadata(log).unwrap().len();
        let before = BTreeMap::from([
            (committing.clone(), size(&committing)),
            (detached.clone(), size(&detached)),
            // c's commit line came after the snapshot: it is an ordinary explanation, not this.
            (later.clone(), size(&later) - line("p0", "c1").len() as u64),
            (own.clone(), size(&own)),
        ]);
        let moves = commits_in_flight(common, Some(&common.join("worktrees/d")), &before);
        let expected = ("refs/heads/a".to_owned(), "p0".to_owned(), "a1".to_owned());
        assert_eq!(moves, BTreeSet::from([expected, ("refs/heads/c".into(), "p0".into(), "p0".into())]));
    }
}
