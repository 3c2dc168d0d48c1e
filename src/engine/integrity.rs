//! The check after every task: what the kernel sandbox cannot express, compared with a snapshot
//! taken before the task and put back where the agent changed it. Landlock must let a task write
//! `refs/heads` (a commit updates its branch there) and its worktree's git folder, and it does
//! not cover `chmod`; so after the agent and after `verify`:
//!
//! - the task's worktree must still be linked to the repository (its `.git` file, the `gitdir`
//!   and `commondir` of its admin folder) and on the task's branch;
//! - every other ref must be where it was — except refs that others move on their own while a
//!   task runs: the branches of the task's siblings in its phase and of other runs (their
//!   engines stack them), `refs/spice/` (git-spice's state) and `refs/remotes/` (fetches), and a
//!   branch whose move the main checkout's HEAD log explains (you working in your checkout);
//! - the repository's `config` and `hooks/` must have their content and modes;
//! - when no kernel sandbox contains the run, also the main checkout's HEAD and index (these are
//!   reported, never put back: they may be yours).
//!
//! A branch that appeared during the task is deleted unless its name is a run's or your checkout's
//! HEAD log explains it.

use std::collections::{BTreeMap, BTreeSet};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::EngineError;
use crate::git::{self, Repo};
use crate::store::StateLayout;

/// The state a task must leave as it found it.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Snapshot {
    common: PathBuf,
    refs: BTreeMap<String, String>,
    /// Entries in the main checkout's HEAD log when the snapshot was taken.
    head_log: usize,
    links: BTreeMap<PathBuf, Option<FileState>>,
    shared: BTreeMap<PathBuf, FileState>,
    /// The main checkout's HEAD and what its index records, when no kernel sandbox protects them.
    main: Option<(Option<String>, String)>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct FileState {
    digest: String,
    mode: u32,
    /// The bytes, to put them back (small files only: config and hooks).
    content: Option<Vec<u8>>,
}

/// What a task may change besides its own branch: the refs others move meanwhile.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Allowed {
    /// Full ref names (`refs/heads/<branch>`) of the task and its siblings in the phase.
    pub refs: BTreeSet<String>,
    /// Prefixes of other runs' refs (`refs/heads/<runId>-`) and of refs others maintain.
    pub prefixes: Vec<String>,
}

impl Allowed {
    fn covers(&self, name: &str) -> bool {
        self.refs.contains(name) || self.prefixes.iter().any(|prefix| name.starts_with(prefix))
    }
}

/// Refs git-spice and fetches move on their own.
const MAINTAINED_PREFIXES: [&str; 2] = ["refs/spice/", "refs/remotes/"];

impl Allowed {
    /// What a task of run `run_id` may leave changed: the branches of its phase (its own and its
    /// siblings'), every other run's branches, and the refs others maintain.
    pub fn for_phase<'a>(
        layout: &StateLayout,
        run_id: &str,
        phase_branches: impl IntoIterator<Item = &'a str>,
    ) -> Allowed {
        let refs = phase_branches.into_iter().map(|branch| format!("refs/heads/{branch}")).collect();
        let mut prefixes: Vec<String> = MAINTAINED_PREFIXES.iter().map(|p| p.to_string()).collect();
        let runs = std::fs::read_dir(layout.runs_dir()).into_iter().flatten().flatten();
        for entry in runs {
            let id = entry.file_name().to_string_lossy().into_owned();
            if id != run_id && crate::plan::run_id::is_valid(&id) {
                prefixes.push(format!("refs/heads/{id}-"));
            }
        }
        Allowed { refs, prefixes }
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
        let changes = check(repo, &self.snapshot, worktree, branch, &self.allowed)?;
        Ok((!changes.is_empty()).then(|| {
            format!(
                "the task changed what it may not, and wt put it back where it could: {}. Work only in {} on \
                 {branch}; wt does everything else",
                changes.join("; "),
                worktree.display()
            )
        }))
    }
}

pub fn take(repo: &Repo, worktree: &Path, kernel_contained: bool) -> Result<Snapshot, EngineError> {
    let common = repo.common_dir();
    let links =
        link_files(worktree).into_iter().map(|path| (path.clone(), file_state(&path, true))).collect();
    let mut shared = BTreeMap::new();
    for path in shared_files(common) {
        if let Some(state) = file_state(&path, true) {
            shared.insert(path, state);
        }
    }
    let main = match kernel_contained {
        true => None,
        false => Some((read_text(&common.join("HEAD")), repo.index_digest()?)),
    };
    let (refs, head_log) = (repo.refs()?, repo.head_log_since(0)?.0);
    Ok(Snapshot { common: common.to_owned(), refs, head_log, links, shared, main })
}

/// Compares the repository with `snapshot`, puts back what the task changed, and says what that
/// was (empty: nothing). `branch` is the task's own branch, which must be checked out in
/// `worktree`.
fn check(
    repo: &Repo,
    snapshot: &Snapshot,
    worktree: &Path,
    branch: &str,
    allowed: &Allowed,
) -> Result<Vec<String>, EngineError> {
    let mut changes = Vec::new();
    check_links(snapshot, worktree, branch, &mut changes)?;
    check_refs(repo, snapshot, allowed, &mut changes)?;
    check_shared(snapshot, &mut changes)?;
    if let Some((head, index)) = &snapshot.main {
        if read_text(&repo.common_dir().join("HEAD")) != *head {
            changes.push("the main checkout's HEAD changed (not put back: it may have been you)".into());
        }
        if repo.index_digest()? != *index {
            changes.push("the main checkout's index changed (not put back: it may have been you)".into());
        }
    }
    Ok(changes)
}

/// The files that tie the worktree to the repository.
fn link_files(worktree: &Path) -> Vec<PathBuf> {
    let mut files = vec![worktree.join(".git")];
    if let Some(admin) = git::worktree_admin_dir(worktree) {
        files.extend(["gitdir", "commondir"].map(|name| admin.join(name)));
    }
    files
}

fn check_links(
    snapshot: &Snapshot,
    worktree: &Path,
    branch: &str,
    changes: &mut Vec<String>,
) -> Result<(), EngineError> {
    for (path, before) in &snapshot.links {
        if put_back(path, before.as_ref())? {
            changes.push(format!("rewrote {} (put back)", path.display()));
        }
    }
    if git::current_branch(worktree)?.as_deref() != Some(branch) {
        git::point_head_at(worktree, branch)?;
        changes.push(format!(
            "switched {} away from its branch {branch} (HEAD put back; the files are as the agent left them)",
            worktree.display()
        ));
    }
    Ok(())
}

fn check_refs(
    repo: &Repo,
    snapshot: &Snapshot,
    allowed: &Allowed,
    changes: &mut Vec<String>,
) -> Result<(), EngineError> {
    let now = repo.refs()?;
    let (_, moves) = repo.head_log_since(snapshot.head_log)?;
    let explained = |before: Option<&String>, after: Option<&String>| match (before, after) {
        (Some(old), Some(new)) => moves.iter().any(|(o, n)| o == old && n == new),
        (None, Some(new)) => moves.iter().any(|(_, n)| n == new),
        _ => false,
    };
    let names: BTreeSet<&String> = snapshot.refs.keys().chain(now.keys()).collect();
    for name in names {
        let (before, after) = (snapshot.refs.get(name), now.get(name));
        if before == after || allowed.covers(name) || explained(before, after) {
            continue;
        }
        let short = |oid: Option<&String>| {
            oid.map_or("nothing".to_owned(), |oid| oid[..oid.len().min(12)].to_owned())
        };
        if before.is_none() && looks_like_a_runs_branch(name) {
            continue;
        }
        git::put_back_ref(repo.root(), name, before.map(String::as_str), after.map(String::as_str))?;
        changes.push(match (before, after) {
            (None, _) => format!("created {name} at {} (deleted)", short(after)),
            (_, None) => format!("deleted {name} (put back at {})", short(before)),
            _ => format!("moved {name} from {} to {} (put back)", short(before), short(after)),
        });
    }
    Ok(())
}

/// `refs/heads/<runId>-task-…` or `refs/heads/<runId>-main`: a run (maybe one that started and
/// ended while the task ran) made it.
fn looks_like_a_runs_branch(name: &str) -> bool {
    let Some(branch) = name.strip_prefix("refs/heads/") else { return false };
    let Some((id, rest)) = branch.split_once('-') else { return false };
    crate::plan::run_id::is_valid(id) && (rest == "main" || rest.starts_with("task-"))
}

fn shared_files(common: &Path) -> Vec<PathBuf> {
    let mut files = vec![common.join("config")];
    if let Ok(entries) = std::fs::read_dir(common.join("hooks")) {
        let mut hooks: Vec<PathBuf> =
            entries.flatten().map(|entry| entry.path()).filter(|path| path.is_file()).collect();
        hooks.sort();
        files.extend(hooks);
    }
    files
}

fn check_shared(snapshot: &Snapshot, changes: &mut Vec<String>) -> Result<(), EngineError> {
    for (path, before) in &snapshot.shared {
        if put_back(path, Some(before))? {
            changes.push(format!("changed {} (put back)", path.display()));
        }
    }
    for path in shared_files(&snapshot.common) {
        if !snapshot.shared.contains_key(&path) {
            remove_file(&path)?;
            changes.push(format!("added {} (removed)", path.display()));
        }
    }
    Ok(())
}

/// Puts the file at `path` back to `before` (None: it did not exist) when its content or mode
/// differs; returns whether it did.
fn put_back(path: &Path, before: Option<&FileState>) -> Result<bool, EngineError> {
    let now = file_state(path, false);
    let same = match (&now, before) {
        (Some(now), Some(before)) => now.digest == before.digest && now.mode == before.mode,
        (None, None) => true,
        _ => false,
    };
    if same {
        return Ok(false);
    }
    match before {
        Some(before) => {
            if let Some(content) = &before.content {
                std::fs::write(path, content).map_err(|source| io(path, source))?;
            }
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(before.mode))
                .map_err(|source| io(path, source))?;
        }
        None => remove_file(path)?,
    }
    Ok(true)
}

fn file_state(path: &Path, keep: bool) -> Option<FileState> {
    let bytes = std::fs::read(path).ok()?;
    let mode = std::fs::metadata(path).ok()?.permissions().mode();
    let digest = crate::digest::sha256_hex([bytes.as_slice()]);
    Some(FileState { digest, mode, content: keep.then_some(bytes) })
}

fn read_text(path: &Path) -> Option<String> {
    std::fs::read_to_string(path).ok()
}

fn remove_file(path: &Path) -> Result<(), EngineError> {
    match std::fs::remove_file(path) {
        Err(err) if err.kind() != std::io::ErrorKind::NotFound => Err(io(path, err)),
        _ => Ok(()),
    }
}

fn io(path: &Path, source: std::io::Error) -> EngineError {
    EngineError::Io { context: format!("putting back {}", path.display()), source }
}
