//! `wt diff <name> [--stat]`: what a wt worktree's branch changes, from its merge base with its
//! base (git-spice's) to its tip — the commits a review of it would show, not its uncommitted
//! files.

use super::{TeamError, TeamRepo, view};

/// The diff (or with `stat` its summary) of the branch of the wt worktree `name` against its base.
pub fn diff(team: &TeamRepo, name: &str, stat: bool) -> Result<String, TeamError> {
    let graph = team.graph()?;
    let entry = view::find(team, &graph, name)?;
    let no_base = || TeamError::NoBase {
        name: name.to_owned(),
        path: entry.worktree.clone().unwrap_or_else(|| team.worktree_path(name)),
    };
    let (Some(branch), Some(base)) = (&entry.branch, &entry.base) else { return Err(no_base()) };
    let repo = team.repo();
    let (Some(tip), Some(base_tip)) = (repo.branch_commit(branch)?, repo.branch_commit(base)?) else {
        return Err(no_base());
    };
    let from = repo.merge_base(&base_tip, &tip)?.ok_or_else(no_base)?;
    Ok(crate::git::diff(repo.root(), &from, &tip, stat)?)
}
