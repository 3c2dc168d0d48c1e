//! A worker's hook call, routed to its worktree by its `agent_type`: a worker slot
//! (`spectacular:wt-worker-<k>`) through the slot's lease and the run's manifest (the task's
//! worktree, branch, rules and folders); a team worktree's agent (`wt-<name>`, also the name a
//! lead gives its teammate) to `.worktrees/<name>` on branch `<name>`, with `wt sandbox`'s default
//! folders and no lease.

use std::path::{Path, PathBuf};

use super::leases;
use super::workers::parse_worker_type;
use crate::git::Repo;
use crate::guard::{Target, TaskFolders};
use crate::store::{Containment, StateLayout};
use crate::team;

/// A worker's task, as its slot's lease says.
pub struct Assignment {
    pub target: Target,
    /// The run's rules (the project's guard.toml with the plan's `[guard]`), when written.
    pub rules: Option<PathBuf>,
    /// The task's temporary folder and object folder in the run's state; None: `wt sandbox`'s
    /// defaults for the worktree (a team worktree's).
    pub folders: Option<TaskFolders>,
    /// Whether the kernel contains the run's commands.
    pub kernel: bool,
    /// The team worktree's name, for a team agent (whose own wt commands run unwrapped).
    pub team: Option<String>,
}

/// The task of the worker `agent_type`, from the lease of its slot in `common` (the
/// repository's git directory, when the call's folder is in one). `Ok(None)`: not one of the
/// plugin's workers. `Err`: a worker with no task here, which must not run unguarded.
pub fn assignment(agent_type: &str, common: Option<&Path>, cwd: &Path) -> Result<Option<Assignment>, String> {
    if let Some(name) = team::name::from_agent_type(agent_type)
        && parse_worker_type(agent_type).is_none()
    {
        return team_worktree(agent_type, name, cwd).map(Some);
    }
    let Some(slot) = parse_worker_type(agent_type) else { return Ok(None) };
    let common = common.ok_or_else(|| {
        format!("{agent_type} is a wt worker, but {} is not inside a repository with wt runs", cwd.display())
    })?;
    let layout = StateLayout::new(common);
    let holder = leases::holder(&layout, slot).ok_or_else(|| {
        format!(
            "{agent_type} holds no task of a wt run in this repository; dispatch wt workers only as \
             `wt step <plan|runId> --json` lists them"
        )
    })?;
    let run_id = &holder.lease.run_id;
    let rules = Some(layout.guard_rules(run_id)).filter(|path| path.exists());
    Ok(Some(Assignment {
        folders: Some(TaskFolders {
            tmp: layout.task_tmp(run_id, holder.task.id),
            objects: layout.task_objects(run_id, holder.task.id),
        }),
        kernel: holder.containment != Some(Containment::PolicyOnly),
        target: Target { root: holder.task.worktree, branch: Some(holder.task.branch) },
        rules,
        team: None,
    }))
}

/// Where the worker's sandboxed commands put their git objects (a running one holds a lock
/// there): its task's object folder, else `wt sandbox`'s default for the worktree.
pub fn objects_of(assignment: &Assignment) -> Option<PathBuf> {
    match &assignment.folders {
        Some(folders) => Some(folders.objects.clone()),
        None => crate::sandbox::TaskWorktree::open(&assignment.target.root).ok().map(|w| w.default_objects()),
    }
}

/// The team worktree of the agent `wt-<name>`: `.worktrees/<name>` of the repository holding
/// `cwd`, which must be a worktree with branch `<name>` checked out. Its Bash calls always run in
/// `wt sandbox` (a team has no policy-only mode). `Err`: no such worktree, so the agent, which is
/// wt's by its name, is blocked rather than left unguarded.
fn team_worktree(agent_type: &str, name: &str, cwd: &Path) -> Result<Assignment, String> {
    let repo = Repo::discover(&discovery_start(cwd)).map_err(|_| {
        format!(
            "{agent_type} is the agent of a wt team worktree, but {} is not inside a git repository",
            cwd.display()
        )
    })?;
    let root = repo.root().join(crate::git::WORKTREES_DIR).join(name);
    // A rebase of its own branch that stopped on a conflict detaches HEAD; the agent resolves it.
    let branch =
        crate::git::current_branch(&root).ok().flatten().or_else(|| crate::git::rebasing_branch(&root));
    if branch.as_deref() != Some(name) {
        return Err(format!(
            "{agent_type} is the agent of the wt team worktree {name}, but {} is not a worktree on branch {name}; \
             make it with `wt create {name} --base <branch>` (`wt list` shows the worktrees)",
            root.display()
        ));
    }
    Ok(Assignment {
        target: Target { root, branch: Some(name.to_owned()) },
        rules: None,
        folders: None,
        kernel: true,
        team: Some(name.to_owned()),
    })
}

/// Where to look for the repository from: `cwd`, or, when it lies in `<checkout>/.worktrees/…`
/// of a main checkout, that checkout. A worktree's `.git` file is its agent's to write: found
/// through it, the repository would be whichever the agent pointed it at — one it made, whose
/// config names the programs git runs.
fn discovery_start(cwd: &Path) -> PathBuf {
    let mut prefix = PathBuf::new();
    for component in cwd.components() {
        if component.as_os_str() == crate::git::WORKTREES_DIR && prefix.join(".git").is_dir() {
            return prefix;
        }
        prefix.push(component);
    }
    cwd.to_owned()
}

/// The team name of `target` when it is a team worktree: `.worktrees/<name>` of its repository,
/// on branch `<name>` (what a generated agent's own hook passes as `--root` and `--branch`).
pub fn team_of(target: &Target) -> Option<String> {
    let name = target.branch.as_deref().filter(|name| team::name::is_team_name(name))?;
    let repo = Repo::discover(&target.root).ok()?;
    let expected = repo.root().join(crate::git::WORKTREES_DIR).join(name);
    let same = |a: &Path, b: &Path| {
        std::fs::canonicalize(a).ok().zip(std::fs::canonicalize(b).ok()).is_some_and(|(a, b)| a == b)
    };
    same(&expected, &target.root).then(|| name.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_repository_is_looked_for_from_the_checkout_holding_its_worktrees() {
        let temp = tempfile::tempdir().unwrap();
        let checkout = temp.path().join("repo");
        let inside = checkout.join(".worktrees/api/.fake/.worktrees/api/src");
        std::fs::create_dir_all(&inside).unwrap();
        std::fs::create_dir_all(checkout.join(".git")).unwrap();
        // Not through the worktree's own `.git`, which its agent may point anywhere.
        assert_eq!(discovery_start(&inside), checkout);
        assert_eq!(discovery_start(&checkout.join("src")), checkout.join("src"));
        let elsewhere = temp.path().join("other/.worktrees/x");
        assert_eq!(discovery_start(&elsewhere), elsewhere, "no checkout holds it");
    }
}
