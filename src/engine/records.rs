//! The manifest a run starts with: one record per phase and task of the plan, and — when the plan
//! changed under a run — the records of the tasks that stayed the same.

use super::EngineError;
use super::workspace::Workspace;
use crate::plan::{Plan, Strategy};
use crate::store::{
    MANIFEST_FORMAT, Overrides, PhaseRecord, PhaseState, RunManifest, RunState, TaskRecord, TaskState,
};

pub fn new_manifest(ws: &Workspace, plan: &Plan, base: &str) -> Result<RunManifest, EngineError> {
    let base_commit = ws.repo.branch_commit(base)?.unwrap_or_default();
    Ok(build_manifest(ws, plan, base, &base_commit))
}

/// Keeps the records of tasks that are still the same task (same number and branch); the rest
/// start over. A phase stays done only if none of its tasks changed.
pub fn rebuild_for_plan(ws: &Workspace, old: RunManifest, plan: &Plan) -> RunManifest {
    let mut fresh = build_manifest(ws, plan, &old.base, &old.base_commit);
    for phase in &mut fresh.phases {
        let old_phase = old.phases.get(phase.number - 1);
        let mut unchanged =
            old_phase.is_some_and(|p| p.tasks.len() == phase.tasks.len() && p.strategy == phase.strategy);
        for record in &mut phase.tasks {
            let previous = old_phase.and_then(|p| p.tasks.iter().find(|t| t.id == record.id));
            match previous {
                Some(previous) if previous.branch == record.branch => *record = previous.clone(),
                _ => unchanged = false,
            }
        }
        if unchanged && let Some(old_phase) = old_phase {
            phase.state = old_phase.state;
            phase.base_branch = old_phase.base_branch.clone();
        }
    }
    fresh.started_at = old.started_at;
    fresh
}

fn build_manifest(ws: &Workspace, plan: &Plan, base: &str, base_commit: &str) -> RunManifest {
    let now = crate::store::now();
    let phases = plan
        .phases
        .iter()
        .map(|phase| PhaseRecord {
            number: phase.number,
            name: phase.name.clone(),
            strategy: phase.strategy,
            state: PhaseState::Pending,
            base_branch: None,
            tasks: phase
                .tasks
                .iter()
                .map(|task| TaskRecord {
                    id: task.id,
                    name: task.name.clone(),
                    branch: task.branch.clone(),
                    worktree: match phase.strategy {
                        Strategy::Sequential => ws.main_worktree(),
                        Strategy::Parallel => ws.task_worktree(task.id),
                    },
                    state: TaskState::Pending,
                    base_commit: None,
                    pid: None,
                    agent_pid: None,
                    dispatches: 0,
                    slot: None,
                    error: None,
                    log: ws.layout.task_log(&ws.run_id, task.id),
                })
                .collect(),
        })
        .collect();
    RunManifest {
        format: MANIFEST_FORMAT,
        run_id: ws.run_id.clone(),
        plan_path: plan.source.clone(),
        plan_digest: plan.digest.clone(),
        feature: plan.feature.clone(),
        base: base.to_owned(),
        base_commit: base_commit.to_owned(),
        repo_root: ws.repo.root().to_owned(),
        main_worktree: ws.main_worktree(),
        state: RunState::Running,
        pid: std::process::id(),
        started_at: now,
        updated_at: now,
        overrides: Overrides::default(),
        containment: Some(ws.containment),
        phases,
    }
}
