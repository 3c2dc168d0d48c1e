//! A worker's hook call, routed to its task: the worker slot its `agent_type` names
//! (`spectacular:wt-worker-<k>`), the slot's lease, and the run's manifest give the worktree,
//! the branch and the run's rules.

use std::path::{Path, PathBuf};

use super::leases;
use super::workers::parse_worker_type;
use crate::guard::{Target, TaskFolders};
use crate::store::{Containment, StateLayout};

/// A worker's task, as its slot's lease says.
pub struct Assignment {
    pub target: Target,
    /// The run's rules (the project's guard.toml with the plan's `[guard]`), when written.
    pub rules: Option<PathBuf>,
    /// The task's temporary folder and object folder in the run's state.
    pub folders: TaskFolders,
    /// Whether the kernel contains the run's commands.
    pub kernel: bool,
}

/// The task of the worker `agent_type`, from the lease of its slot in `common` (the
/// repository's git directory, when the call's folder is in one). `Ok(None)`: not one of the
/// plugin's workers. `Err`: a worker with no task here, which must not run unguarded.
pub fn assignment(agent_type: &str, common: Option<&Path>, cwd: &Path) -> Result<Option<Assignment>, String> {
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
        folders: TaskFolders {
            tmp: layout.task_tmp(run_id, holder.task.id),
            objects: layout.task_objects(run_id, holder.task.id),
        },
        kernel: holder.containment != Some(Containment::PolicyOnly),
        target: Target { root: holder.task.worktree, branch: Some(holder.task.branch) },
        rules,
    }))
}
