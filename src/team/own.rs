//! The branch `wt push`, `wt pr` and `wt rebase` act on: a team worktree's own — the worktree
//! `.worktrees/<name>` git records, with its branch `<name>` checked out there — and never the
//! trunk. Anything else (a run's worktree, a branch the agent switched to, the trunk) is refused
//! with what it is and what to use instead.

use std::path::PathBuf;

use super::review_error::ReviewError;
use super::{TeamError, TeamRepo, name};
use crate::git::{self, WORKTREES_DIR};

/// A team worktree with its own branch checked out.
#[derive(Debug, Clone)]
pub struct OwnBranch {
    pub name: String,
    pub worktree: PathBuf,
    /// Always `name`: a team worktree's branch is named after it.
    pub branch: String,
}

/// The team worktree `name`, checked: a team's name, registered with git at
/// `.worktrees/<name>`, on branch `<name>`, which is not the trunk.
pub fn resolve(team: &TeamRepo, name: &str) -> Result<OwnBranch, TeamError> {
    let wt = crate::process::own_name();
    if let Some(run_id) = name::run_of(name) {
        return Err(ReviewError::NotTeamWorktree {
            name: name.to_owned(),
            what: format!("run {run_id}'s"),
            fix: format!(
                "a run's stack goes up with `{wt} submit {run_id}`, and `{wt} sync {run_id}` moves it after merges"
            ),
        }
        .into());
    }
    name::check(name)?;
    let worktree = team.worktree_path(name);
    let Some(entry) = team.worktree_at(&worktree)? else {
        return Err(TeamError::NoSuchWorktree {
            name: name.to_owned(),
            root: team.repo().root().to_owned(),
            known: team_names(team)?,
        });
    };
    // Mid-rebase the worktree's HEAD is detached, and the branch is still its own.
    let branch = entry.branch.clone().or_else(|| git::rebasing_branch(&worktree));
    if branch.as_deref() != Some(name) {
        return Err(ReviewError::NotOwnBranch {
            name: name.to_owned(),
            path: worktree,
            branch: entry.branch,
        }
        .into());
    }
    if team.graph()?.trunk() == Some(name) {
        return Err(ReviewError::Trunk { name: name.to_owned() }.into());
    }
    // Its agent wrote there; what follows runs git there outside the sandbox.
    super::git_state::check(team.repo().common_dir(), &worktree, name)?;
    Ok(OwnBranch { name: name.to_owned(), worktree, branch: name.to_owned() })
}

/// The team worktrees there are, for a message.
fn team_names(team: &TeamRepo) -> Result<Vec<String>, TeamError> {
    let dir = team.repo().root().join(WORKTREES_DIR);
    let mut names: Vec<String> = git::list_worktrees(team.repo().root())?
        .into_iter()
        .filter(|entry| entry.path.parent().is_some_and(|parent| super::same_path(parent, &dir)))
        .filter_map(|entry| entry.path.file_name().map(|n| n.to_string_lossy().into_owned()))
        .filter(|folder| name::is_team_name(folder))
        .collect();
    names.sort();
    Ok(names)
}
