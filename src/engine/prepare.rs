//! Prepare a run: repository, base, git-spice, run lock, ignore rules, main worktree, manifest.

use std::path::Path;

use super::run::Run;
use super::workspace::{WORKTREES_DIR, Workspace, main_worktree_path};
use super::{EngineError, EventSink, RunRequest};
use crate::agent::Agent;
use crate::git::{self, Repo};
use crate::plan::{AgentKind, Located, Plan, check_agent_kind, missing_command};
use crate::spice::Spice;
use crate::store::{
    FileLock, LockError, PhaseRecord, PhaseState, RunManifest, RunState, StateLayout, TaskRecord, TaskState,
};

/// Patterns that keep run artifacts out of the user's `git status`.
pub const EXCLUDES: &[&str] = &["/.worktrees/", "/.claude/agents/wt-*.md"];

/// Default number of parallel agents when neither the plan nor the CLI says.
const DEFAULT_MAX_PARALLEL: usize = 4;

pub fn prepare<'s>(request: RunRequest, sink: &'s dyn EventSink) -> Result<(Run<'s>, bool), EngineError> {
    let RunRequest { plan, cwd, agent_kind, agent_command, max_parallel, base } = request;
    let agent = resolve_agent(&plan, agent_kind, agent_command)?;
    let repo = Repo::discover(&cwd)?;
    let base = resolve_base(&repo, &plan, base)?;
    let spice = Spice::discover()?;
    let layout = StateLayout::new(repo.common_dir());
    let run_id = plan.run_id.clone();
    let run_lock = FileLock::try_acquire(&layout.run_lock(&run_id)).map_err(|err| match err {
        LockError::Held { holder, .. } => EngineError::RunLocked { run_id: run_id.clone(), holder },
        other => other.into(),
    })?;
    let manifest_path = layout.manifest(&run_id);
    let existing = if manifest_path.exists() { Some(RunManifest::load(&manifest_path)?) } else { None };
    if let Some(existing) = &existing
        && existing.plan_digest != plan.digest
    {
        return Err(EngineError::PlanChanged {
            run_id,
            old: existing.plan_path.clone(),
            new: plan.source.clone(),
        });
    }
    let ws = Workspace { repo, spice, layout, run_id, feature: plan.feature.clone(), agent };
    {
        let _repo_lock = ws.repo_lock()?;
        git::ensure_excluded(ws.repo.common_dir(), EXCLUDES)?;
        if !ws.repo.reference_exists("refs/spice/data")? {
            ws.spice.repo_init(ws.repo.root(), &base)?;
        }
        ensure_main_worktree(&ws, &base)?;
    }
    let resumed = existing.is_some();
    let mut manifest = match existing {
        Some(manifest) => manifest,
        None => new_manifest(&ws, &plan, &base)?,
    };
    manifest.pid = std::process::id();
    manifest.state = RunState::Running;
    let max_parallel = max_parallel.or(plan.agent.max_parallel).unwrap_or(DEFAULT_MAX_PARALLEL);
    let mut run = Run::new(ws, plan, manifest, max_parallel, sink, run_lock);
    run.save()?;
    Ok((run, resumed))
}

fn resolve_agent(
    plan: &Plan,
    cli_kind: Option<AgentKind>,
    cli_command: Option<String>,
) -> Result<Agent, EngineError> {
    let kind = match (cli_kind, &plan.agent.kind, &cli_command) {
        (Some(kind), _, _) => kind,
        (None, Some(kind), _) => kind.value,
        (None, None, Some(_)) => AgentKind::Command,
        (None, None, None) if plan.tasks().all(|task| task.run.is_some()) => AgentKind::Script,
        (None, None, None) => AgentKind::Claude,
    };
    let location = plan.agent.kind.as_ref().map(|k| k.location.clone());
    let location = location.unwrap_or_else(|| plan.phases[0].location.clone());
    match kind {
        AgentKind::Script => {
            check_agent_kind(plan, &Located { value: kind, location })?;
            Ok(Agent::Script)
        }
        AgentKind::Command => match (cli_command, &plan.agent.command) {
            (Some(shell), _) => Ok(Agent::Shell(shell)),
            (None, Some(argv)) => Ok(Agent::Argv(argv.clone())),
            (None, None) => Err(missing_command(location).into()),
        },
        AgentKind::Claude => Err(EngineError::ClaudeUnavailable),
    }
}

/// `--base`, else the plan's base, else the branch checked out in the main checkout.
fn resolve_base(repo: &Repo, plan: &Plan, cli_base: Option<String>) -> Result<String, EngineError> {
    let (base, location) = match (cli_base, &plan.base) {
        (Some(base), _) => (base, None),
        (None, Some(base)) => (base.value.clone(), Some(base.location.clone())),
        (None, None) => match repo.main_branch()? {
            Some(branch) => (branch, None),
            None => return Err(EngineError::NoBaseBranch { root: repo.root().to_owned() }),
        },
    };
    if repo.branch_exists(&base)? {
        return Ok(base);
    }
    Err(match location {
        Some(location) => crate::plan::PlanError::at(
            location,
            format!("base branch `{base}` does not exist in {}", repo.root().display()),
            "name an existing branch, or create it first",
        )
        .into(),
        None => EngineError::MissingBase { base, root: repo.root().to_owned() },
    })
}

fn ensure_main_worktree(ws: &Workspace, base: &str) -> Result<(), EngineError> {
    let path = ws.main_worktree();
    if path.exists() {
        return check_registered(&ws.repo, &path);
    }
    std::fs::create_dir_all(ws.repo.root().join(WORKTREES_DIR))
        .map_err(|source| EngineError::Io { context: "creating .worktrees".into(), source })?;
    git::add_detached(ws.repo.root(), &path, base, &ws.lock_reason())?;
    Ok(())
}

pub fn check_registered(repo: &Repo, path: &Path) -> Result<(), EngineError> {
    let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let registered = git::list_worktrees(repo.root())?
        .iter()
        .any(|entry| std::fs::canonicalize(&entry.path).unwrap_or_else(|_| entry.path.clone()) == canonical);
    if registered { Ok(()) } else { Err(EngineError::NotAWorktree { path: path.to_owned() }) }
}

fn new_manifest(ws: &Workspace, plan: &Plan, base: &str) -> Result<RunManifest, EngineError> {
    let base_commit = ws.repo.branch_commit(base)?.unwrap_or_default();
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
                    number: task.id.to_string(),
                    name: task.name.clone(),
                    branch: task.branch.clone(),
                    worktree: match phase.strategy {
                        crate::plan::Strategy::Sequential => ws.main_worktree(),
                        crate::plan::Strategy::Parallel => ws.task_worktree(task.id),
                    },
                    state: TaskState::Pending,
                    base_commit: None,
                    pid: None,
                    error: None,
                    log: ws.layout.task_log(&ws.run_id, task.id),
                })
                .collect(),
        })
        .collect();
    Ok(RunManifest {
        format: crate::store::MANIFEST_FORMAT,
        run_id: ws.run_id.clone(),
        plan_path: plan.source.clone(),
        plan_digest: plan.digest.clone(),
        feature: plan.feature.clone(),
        base: base.to_owned(),
        base_commit,
        repo_root: ws.repo.root().to_owned(),
        main_worktree: main_worktree_path(&ws.repo, &ws.run_id),
        state: RunState::Running,
        pid: std::process::id(),
        started_at: now,
        updated_at: now,
        phases,
    })
}
