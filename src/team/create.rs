//! `wt create <name> --base <branch>`: the team worktree `.worktrees/<name>` on a new branch
//! `<name>` made at `<base>` and tracked by git-spice on it, its generated agent and its record.
//! Everything that can refuse is checked before anything is written; the same name and base
//! again reports what is there (and finishes a create that was cut short); a name taken in any
//! other way is refused with what holds it.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::graph::Graph;
use super::{TeamError, TeamRecord, TeamRepo, agent_file, name};
use crate::git::{self, WORKTREES_DIR};

pub struct CreateRequest {
    pub name: String,
    pub base: String,
    /// The command that must pass before the worktree's agent may call a task done; None keeps
    /// what an earlier create gave.
    pub verify: Option<String>,
}

/// What `wt create` made or found.
#[derive(Debug, Clone, Serialize)]
pub struct Created {
    pub name: String,
    pub branch: String,
    pub base: String,
    pub worktree: PathBuf,
    pub agent_file: PathBuf,
    /// The agent's name, for `subagent_type` and a teammate's name.
    pub agent: String,
    /// false: the worktree was there already, on this base.
    pub created: bool,
    pub verify: Option<String>,
}

/// What is at the name's place now.
enum Existing {
    Nothing,
    /// The worktree on its branch, which git-spice does not track (a create cut short).
    Untracked,
    /// The worktree on its branch, tracked on the asked base.
    Same,
}

pub fn create(team: &TeamRepo, request: &CreateRequest) -> Result<Created, TeamError> {
    let CreateRequest { name, base, .. } = request;
    name::check(name)?;
    if name == base {
        return Err(TeamError::OwnBase { name: name.clone() });
    }
    let _lock = team.lock()?;
    let graph = team.graph()?;
    let known = graph.trunk().is_some();
    let trunk = match graph.trunk() {
        Some(trunk) => trunk.to_owned(),
        None => new_trunk(team)?,
    };
    check_base(team, &graph, base, &trunk)?;
    let path = team.worktree_path(name);
    let existing = existing(team, &graph, name, base, &path)?;
    let agent_path = team.agent_path(name);
    check_agent_file(team, name, &agent_path)?;

    git::ensure_excluded(team.repo().common_dir(), git::WT_EXCLUDES)?;
    if !known {
        team.spice().repo_init(team.repo().root(), &trunk)?;
    }
    if let Existing::Nothing = existing {
        let dir = team.repo().root().join(WORKTREES_DIR);
        std::fs::create_dir_all(&dir).map_err(TeamError::io(format!("creating {}", dir.display())))?;
        git::add_on_new_branch(team.repo().root(), &path, name, base)?;
    }
    if !matches!(existing, Existing::Same) {
        team.spice().branch_track(&path, name, base)?;
    }
    let record = save_record(team, name, request.verify.clone())?;
    // A poll the guard wraps (written other than as the agent's own command) runs inside
    // `wt sandbox`, which may lock this file but not make it.
    super::poll::prepare_lock(team.layout(), name)?;
    let wt = crate::process::hook_exe()
        .map_err(|err| TeamError::io("finding the wt binary")(std::io::Error::other(err)))?;
    agent_file::write(&agent_path, &agent_file::team_agent(name, &path, &wt, record.verify.as_deref()))?;
    Ok(Created {
        name: name.clone(),
        branch: name.clone(),
        base: base.clone(),
        worktree: path,
        agent_file: agent_path,
        agent: name::agent_name(name),
        created: !matches!(existing, Existing::Same),
        verify: record.verify,
    })
}

/// The trunk to give git-spice when it does not know the repository yet: the main checkout's
/// branch, as a run does.
fn new_trunk(team: &TeamRepo) -> Result<String, TeamError> {
    let repo = team.repo();
    repo.main_branch()?.ok_or_else(|| TeamError::NoTrunk { root: repo.root().to_owned() })
}

/// A base is the trunk or a branch git-spice tracks: stacking on anything else would give
/// git-spice a base it cannot restack or submit against.
fn check_base(team: &TeamRepo, graph: &Graph, base: &str, trunk: &str) -> Result<(), TeamError> {
    let exists = team.repo().branch_exists(base)?;
    if exists && (base == trunk || graph.is_tracked(base)) {
        return Ok(());
    }
    Err(TeamError::UnknownBase { base: base.to_owned(), trunk: trunk.to_owned(), exists })
}

fn existing(
    team: &TeamRepo,
    graph: &Graph,
    name: &str,
    base: &str,
    path: &Path,
) -> Result<Existing, TeamError> {
    let registered = team.worktree_at(path)?;
    let Some(entry) = registered else {
        if path.symlink_metadata().is_ok() {
            let detail = "it is not a worktree of this repository".to_owned();
            return Err(TeamError::PathInTheWay { path: path.to_owned(), detail });
        }
        if team.repo().branch_exists(name)? {
            return Err(TeamError::BranchWithoutWorktree {
                name: name.to_owned(),
                base: base.to_owned(),
                existing: graph.base(name).map(str::to_owned),
                path: path.to_owned(),
            });
        }
        return Ok(Existing::Nothing);
    };
    if !path.exists() {
        let detail =
            "git records a worktree there whose folder is gone (`git worktree prune` forgets it)".into();
        return Err(TeamError::PathInTheWay { path: path.to_owned(), detail });
    }
    if entry.branch.as_deref() != Some(name) {
        let detail = match &entry.branch {
            Some(other) => format!("it is a worktree on branch {other}"),
            None => "it is a worktree on a detached HEAD".to_owned(),
        };
        return Err(TeamError::PathInTheWay { path: path.to_owned(), detail });
    }
    match graph.base(name) {
        None => Ok(Existing::Untracked),
        Some(existing) if existing == base => Ok(Existing::Same),
        Some(existing) => Err(TeamError::OtherBase {
            name: name.to_owned(),
            base: base.to_owned(),
            existing: Some(existing.to_owned()),
        }),
    }
}

/// The agent file's place must be free or hold wt's own file, and never a file the user tracks.
fn check_agent_file(team: &TeamRepo, name: &str, path: &Path) -> Result<(), TeamError> {
    let in_the_way =
        |detail: &str| Err(TeamError::AgentFileInTheWay { path: path.to_owned(), detail: detail.into() });
    if team.repo().is_tracked(&TeamRepo::agent_relative_path(name))? {
        return in_the_way("git tracks it");
    }
    match agent_file::is_generated(path)? {
        Some(false) => in_the_way("wt did not write it"),
        _ => Ok(()),
    }
}

fn save_record(team: &TeamRepo, name: &str, verify: Option<String>) -> Result<TeamRecord, TeamError> {
    let path = team.layout().team_record(name);
    let mut record = TeamRecord::load(&path)?.unwrap_or_default();
    if verify.is_some() || !path.exists() {
        record.verify = verify.or(record.verify);
        record.save(&path)?;
    }
    Ok(record)
}
