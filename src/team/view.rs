//! `wt list`, `wt stack`, `wt info`: every wt worktree — a team's (`.worktrees/<name>`) and a
//! run's (`.worktrees/<runId>-main`, `<runId>-task-P-T`) — with what git-spice says of its branch
//! (base, dependents, change request, restack) and what git says of the worktree (uncommitted
//! files, commits ahead of and behind its base). Read live each time; nothing is cached.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Serialize;

use super::graph::{ChangesRead, Graph};
use super::{TeamError, TeamRepo, name};
use crate::git::{self, WORKTREES_DIR, WorktreeEntry};
use crate::spice::{ChangeStatus, Push};

/// Who made a worktree, or a branch of the stack with no wt worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// `wt create`'s.
    Team,
    /// A run's main or task worktree.
    Run,
    /// A branch of the stack below a wt worktree, checked out in none (`wt stack` only).
    Branch,
}

/// One wt worktree (or, in a stack, a branch between them).
#[derive(Debug, Clone, Serialize)]
pub struct Entry {
    /// The team name, the run worktree's folder name, or the branch (kind `branch`).
    pub name: String,
    pub kind: Kind,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub run_id: Option<String>,
    pub worktree: Option<PathBuf>,
    /// The branch checked out there; None when detached.
    pub branch: Option<String>,
    /// The branch it is stacked on (git-spice); None when git-spice does not track it.
    pub base: Option<String>,
    /// Its base moved since it was stacked: `wt rebase` is due.
    pub needs_restack: bool,
    /// Uncommitted or untracked files in the worktree; None without a readable worktree.
    pub dirty: Option<bool>,
    /// Commits on the branch that its base lacks, and the reverse.
    pub ahead: Option<usize>,
    pub behind: Option<usize>,
    pub change: Option<ChangeView>,
    /// The branch against its pushed copy (git-spice; only once pushed).
    pub push: Option<Push>,
    /// Branches stacked directly on this one.
    pub dependents: Vec<String>,
    /// Its place in the stack: 1 on the trunk, 2 on a branch on the trunk, …
    pub depth: Option<usize>,
    /// A team worktree's `wt create --verify`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<String>,
}

/// A change request as git-spice knows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ChangeView {
    /// `#12` (GitHub, shamhub) or `!12` (GitLab).
    pub id: String,
    pub number: Option<u64>,
    pub url: Option<String>,
    pub state: ChangeState,
    /// Unresolved review threads; None when the forge was not asked or did not say.
    pub unresolved_comments: Option<u32>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangeState {
    Open,
    Closed,
    Merged,
    /// The forge was not asked or could not be reached.
    Unknown,
}

/// The answer of `wt list` and `wt stack`.
#[derive(Debug, Clone, Serialize)]
pub struct Listing {
    pub trunk: Option<String>,
    /// Whether change request states are live (`asked`) or unknown (`unavailable`).
    pub changes: ChangesRead,
    pub entries: Vec<Entry>,
}

/// Every wt worktree, by name.
pub fn list(team: &TeamRepo) -> Result<Listing, TeamError> {
    let graph = team.graph_with_changes()?;
    let entries = worktree_entries(team, &graph)?;
    Ok(Listing { trunk: graph.trunk().map(str::to_owned), changes: graph.changes_read(), entries })
}

/// The stack as a tree in topological order: each wt worktree's branch after its base, with the
/// branches below them that have no wt worktree; worktrees outside the stack (detached, not
/// tracked) last.
pub fn stack(team: &TeamRepo) -> Result<Listing, TeamError> {
    let graph = team.graph_with_changes()?;
    let worktrees = worktree_entries(team, &graph)?;
    let mut by_branch: BTreeMap<String, Entry> = BTreeMap::new();
    let mut outside = Vec::new();
    for entry in worktrees {
        match &entry.branch {
            Some(branch) if graph.is_tracked(branch) && !by_branch.contains_key(branch) => {
                by_branch.insert(branch.clone(), entry);
            }
            _ => outside.push(entry),
        }
    }
    let mut wanted: Vec<String> = by_branch.keys().cloned().collect();
    for branch in by_branch.keys() {
        wanted.extend(graph.downstack(branch));
    }
    let mut entries: Vec<Entry> = graph
        .topological(|branch| wanted.iter().any(|w| w == branch))
        .into_iter()
        .map(|branch| match by_branch.remove(&branch) {
            Some(entry) => entry,
            None => branch_entry(team, &graph, &branch, Kind::Branch, None, None),
        })
        .collect();
    entries.extend(by_branch.into_values());
    entries.extend(outside);
    Ok(Listing { trunk: graph.trunk().map(str::to_owned), changes: graph.changes_read(), entries })
}

/// One wt worktree, by its name (a team's name, a run worktree's folder) or its branch.
pub fn info(team: &TeamRepo, name: &str) -> Result<Entry, TeamError> {
    let graph = team.graph_with_changes()?;
    find(team, &graph, name)
}

/// The wt worktree `name` names (as [`info`]), read against `graph`.
pub fn find(team: &TeamRepo, graph: &Graph, name: &str) -> Result<Entry, TeamError> {
    let mut entries = worktree_entries(team, graph)?;
    let found = entries
        .iter()
        .position(|e| e.name == name)
        .or_else(|| entries.iter().position(|e| e.branch.as_deref() == Some(name)));
    if let Some(index) = found {
        return Ok(entries.swap_remove(index));
    }
    Err(TeamError::NoSuchWorktree {
        name: name.to_owned(),
        root: team.repo().root().to_owned(),
        known: entries.into_iter().map(|e| e.name).collect(),
    })
}

/// The worktrees under `.worktrees/` whose folder names a team or a run's worktree, by name.
fn worktree_entries(team: &TeamRepo, graph: &Graph) -> Result<Vec<Entry>, TeamError> {
    let dir = team.repo().root().join(WORKTREES_DIR);
    let mut entries = Vec::new();
    for worktree in git::list_worktrees(team.repo().root())? {
        let Some(folder) = wt_folder(&dir, &worktree.path) else { continue };
        let (kind, run_id) = match name::run_of(&folder) {
            Some(run_id) => (Kind::Run, Some(run_id.to_owned())),
            None if name::is_team_name(&folder) => (Kind::Team, None),
            None => continue,
        };
        let mut entry = match &worktree.branch {
            Some(branch) => branch_entry(team, graph, branch, kind, run_id, Some(&worktree)),
            None => detached_entry(kind, run_id, &worktree),
        };
        if kind == Kind::Team {
            entry.verify = team.record(&folder).ok().flatten().and_then(|record| record.verify);
        }
        entry.name = folder;
        entries.push(entry);
    }
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(entries)
}

/// The folder name of a worktree directly under `.worktrees/`.
fn wt_folder(dir: &Path, path: &Path) -> Option<String> {
    let parent = path.parent()?;
    super::same_path(parent, dir)
        .then(|| path.file_name().map(|n| n.to_string_lossy().into_owned()))
        .flatten()
}

fn branch_entry(
    team: &TeamRepo,
    graph: &Graph,
    branch: &str,
    kind: Kind,
    run_id: Option<String>,
    worktree: Option<&WorktreeEntry>,
) -> Entry {
    let base = graph.base(branch).map(str::to_owned);
    let (ahead, behind) = match &base {
        Some(base) => ahead_behind(team, branch, base),
        None => (None, None),
    };
    Entry {
        name: branch.to_owned(),
        kind,
        run_id,
        worktree: worktree.map(|w| w.path.clone()),
        branch: Some(branch.to_owned()),
        needs_restack: graph.needs_restack(branch),
        dirty: worktree.and_then(|w| dirty(&w.path)),
        ahead,
        behind,
        change: graph.change(branch).map(|change| ChangeView {
            id: change.id.clone(),
            number: change.number(),
            url: change.web_url().map(str::to_owned),
            state: match change.status {
                Some(ChangeStatus::Open) => ChangeState::Open,
                Some(ChangeStatus::Closed) => ChangeState::Closed,
                Some(ChangeStatus::Merged) => ChangeState::Merged,
                None => ChangeState::Unknown,
            },
            unresolved_comments: change.comments.map(|c| c.unresolved),
        }),
        push: graph.branch(branch).and_then(|b| b.push),
        dependents: graph.dependents(branch).to_vec(),
        depth: graph.depth(branch),
        base,
        verify: None,
    }
}

fn detached_entry(kind: Kind, run_id: Option<String>, worktree: &WorktreeEntry) -> Entry {
    Entry {
        name: String::new(),
        kind,
        run_id,
        worktree: Some(worktree.path.clone()),
        branch: None,
        base: None,
        needs_restack: false,
        dirty: dirty(&worktree.path),
        ahead: None,
        behind: None,
        change: None,
        push: None,
        dependents: Vec::new(),
        depth: None,
        verify: None,
    }
}

fn dirty(path: &Path) -> Option<bool> {
    git::status_paths(path).ok().map(|files| !files.is_empty())
}

fn ahead_behind(team: &TeamRepo, branch: &str, base: &str) -> (Option<usize>, Option<usize>) {
    let repo = team.repo();
    let (Ok(Some(tip)), Ok(Some(base_tip))) = (repo.branch_commit(branch), repo.branch_commit(base)) else {
        return (None, None);
    };
    (repo.count_commits(&base_tip, &tip).ok(), repo.count_commits(&tip, &base_tip).ok())
}
