//! The Claude Code plugin's side of wt, in one place: the worker slots the plugin ships
//! (`agents/wt-worker-<k>.md`) and their leases, `wt step` (the phase loop driven by an
//! orchestrating session's subagents: hand-out, checks, release), and one entry per hook event —
//! PreToolUse (a worker routed to its task's worktree and guarded; the orchestrator's own
//! `wt step` approved, and each worker call a sign of life on its lease), SubagentStart and
//! SubagentStop (a worker out and back), SessionStart, and the TeammateIdle / TaskCompleted gates.

mod gate;
mod leases;
mod orchestrator;
mod own_commands;
mod route;
mod session;
mod step;
mod subagents;
mod waiting;
mod workers;

use std::path::{Path, PathBuf};

pub use step::{StepOutcome, StepStatus, step};
pub use subagents::SubagentInput;
pub use waiting::Release;

use crate::engine::{EngineError, ErrorKind};
use crate::guard::{self, Containment, Decision, GuardConfig, HookInput};
use crate::store::{FileLock, StateLayout, commands_running};

#[derive(Debug, thiserror::Error)]
pub enum StepError {
    #[error(transparent)]
    Engine(#[from] EngineError),
    #[error("all {slots} wt worker slots are out to other tasks ({})", holders.join(", "))]
    NoWorkerSlot { run_id: String, slots: usize, holders: Vec<String> },
}

impl StepError {
    pub fn explain(&self) -> (ErrorKind, Option<String>) {
        match self {
            StepError::Engine(err) => err.explain(),
            StepError::NoWorkerSlot { run_id, .. } => (
                ErrorKind::Busy,
                Some(format!(
                    "run `{wt} step {run_id} --json` again when those subagents have returned; `{wt} status` shows \
                     the runs, `{wt} cleanup <runId>` frees an abandoned run's slots",
                    wt = crate::process::own_name()
                )),
            ),
        }
    }
}

/// PreToolUse for a call that names no worktree: a wt worker is guarded in its task's worktree
/// (with `rules`, else the run's rules, else the project's); with `approve_orchestrator`, the main
/// session's own plain `wt step` / `wt status` is approved; anything else gets no decision.
/// `Err`: the call must be blocked (a worker with no task).
pub fn pre_tool_use(
    input: &HookInput,
    rules: Option<&Path>,
    approve_orchestrator: bool,
) -> Result<Decision, String> {
    let cwd = input.cwd.as_deref().map(Path::new).unwrap_or(Path::new("/"));
    let common = guard::common_dir(cwd);
    let assignment = match &input.agent_type {
        Some(agent_type) => route::assignment(agent_type, common.as_deref(), cwd)?,
        None => None,
    };
    let Some(assignment) = assignment else {
        return Ok(if approve_orchestrator { orchestrator::approve(input) } else { Decision::None });
    };
    let running = route::objects_of(&assignment).is_some_and(|objects| commands_running(&objects));
    if let (Some(agent_type), Some(common)) = (&input.agent_type, &common) {
        subagents::seen(agent_type, common);
    }
    let rules: Option<PathBuf> = rules
        .map(Path::to_owned)
        .or(assignment.rules)
        .or_else(|| common.as_deref().and_then(guard::project_rules_path));
    let config = match &rules {
        Some(path) => GuardConfig::load_toml(path)?,
        None => None,
    };
    let configured = config.is_some();
    let config = config.unwrap_or_default();
    if let Some(name) = &assignment.team
        && let Some(allowed) = own_commands::approve(input, name, &assignment.target.root, running)
    {
        return Ok(allowed.and(guard::decide_own_command(input, &assignment.target, &config)));
    }
    // A worker's own process is the user's session: wt cannot sandbox it, so each Bash call it
    // makes runs inside `wt sandbox` instead (unless the run is contained by policy only).
    let containment = match assignment.kernel {
        true => Containment::SandboxWrap {
            exe: crate::process::own_exe()?,
            rules: rules.filter(|_| configured),
            commands_running: running,
            folders: assignment.folders,
        },
        false => Containment::HookOnly,
    };
    Ok(guard::decide(input, &assignment.target, &config, &containment))
}

/// A team worktree agent's own wt command on `target` (see `own_commands`), allowed to run
/// outside `wt sandbox` unless `config` refuses it; None for anything else, and for a target
/// that is no team worktree.
pub fn own_team_command(input: &HookInput, target: &guard::Target, config: &GuardConfig) -> Option<Decision> {
    let name = route::team_of(target)?;
    let objects =
        crate::sandbox::TaskWorktree::open(&target.root).ok().map(|worktree| worktree.default_objects());
    let running = objects.is_some_and(|objects| commands_running(&objects));
    let allowed = own_commands::approve(input, &name, &target.root, running)?;
    Some(allowed.and(guard::decide_own_command(input, target, config)))
}

/// SessionStart: the context the session starts with.
pub fn session_start(dir: &Path) -> String {
    session::context(dir)
}

/// SubagentStart: a wt worker's subagent is out on its slot's lease (other subagents: nothing).
pub fn subagent_start(input: &SubagentInput, dir: &Path) -> Result<(), String> {
    subagents::started(input, dir).map_err(|err| format!("wt could not record the worker's start: {err}"))
}

/// SubagentStop: a wt worker's subagent returned (other subagents: nothing).
pub fn subagent_stop(input: &SubagentInput, dir: &Path) -> Result<(), String> {
    subagents::returned(input, dir).map_err(|err| format!("wt could not record the worker's return: {err}"))
}

/// TeammateIdle and TaskCompleted: why the worker named in the hook input is not done yet
/// (`Ok(None)`: it may stop, or it is no wt worker). A teammate named `wt-<name>` is gated by
/// its team worktree, by the event the input names (`hook_event_name`).
pub fn completion_gate(input: &serde_json::Value, dir: &Path) -> Result<Option<String>, String> {
    if let Some(name) = gate::team_name(input) {
        let refusal = match input.get("hook_event_name").and_then(|event| event.as_str()) {
            Some("TeammateIdle") => gate::team_idle_refusal(dir, &name),
            Some("TaskCompleted") => gate::team_task_refusal(dir, &name, input),
            _ => Ok(None),
        };
        return refusal.map_err(|err| format!("wt could not check the team worktree {name}: {err}"));
    }
    let Some(name) = gate::worker_name(input) else { return Ok(None) };
    gate::refusal(dir, &name).map_err(|err| format!("wt could not check {name}: {err}"))
}

/// Drops every lease of `run_id` (when the run is cleaned up); returns the files removed.
pub fn release_run(layout: &StateLayout, run_id: &str) -> Result<Vec<PathBuf>, EngineError> {
    let _repo_lock = FileLock::acquire(&layout.repo_lock())?;
    leases::release_run(layout, run_id)
        .map_err(|source| EngineError::Io { context: "releasing the run's worker slots".into(), source })
}
