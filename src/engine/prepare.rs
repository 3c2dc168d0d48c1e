//! Prepare a run. Everything that can refuse is checked before anything is written: the agent,
//! the repository, the base, git-spice, the worktree paths and the task branches. Then the run
//! lock, the ignore rules, git-spice's repository record and the main worktree; on a resume, the
//! manifest is reconciled with what git says (see `reconcile`).

use std::path::Path;

use super::base::{ensure_spice_knows, new_run_base};
use super::event::Event;
use super::journal::{Journal, Step};
use super::pool::PoolPolicy;
use super::reconcile::{check_main_worktree, reconcile};
use super::records::{new_manifest, rebuild_for_plan};
use super::run::{Run, lock_run};
use super::seed::SeedPolicy;
use super::workspace::Workspace;
use super::worktrees::{check_worktree_paths, ensure_worktree, make_worktree};
use super::{Agents, EngineError, EventSink, RunRequest};
use crate::agent;
use crate::git::{self, Repo};
use crate::guard::GuardConfig;
use crate::plan::{self, Plan, WorktreeConfig};
use crate::sandbox;
use crate::spice::Spice;
use crate::store::{Containment, EventLog, FileLock, RunManifest, RunState, StateLayout, write_atomic};

/// Default number of parallel agents when neither the plan nor the CLI says.
pub const DEFAULT_MAX_PARALLEL: usize = 4;

pub fn prepare<'s>(request: RunRequest, sink: &'s dyn EventSink) -> Result<Run<'s>, EngineError> {
    let RunRequest { plan, cwd, overrides, base, force_plan, agents } = request;
    let repo = Repo::discover(&cwd)?;
    let layout = StateLayout::new(repo.common_dir());
    let run_id = plan.run_id.clone();
    let manifest_path = layout.manifest(&run_id);
    let existing = load_existing(&manifest_path)?;
    let overrides = match &existing {
        Some(manifest) => overrides.or(&manifest.overrides),
        None => overrides,
    };
    let agent = match agents {
        Agents::Dispatched => None,
        Agents::Started => {
            Some(agent::resolve(&plan, overrides.agent_kind, overrides.agent_command.clone())?)
        }
    };
    let base = match &existing {
        Some(manifest) => manifest.base.clone(),
        None => new_run_base(&repo, &plan, base)?,
    };
    let rules = run_rules(&repo, &plan)?;
    let worktree_config = run_worktree_config(&repo, &plan)?;
    super::seed::check_copy(repo.root(), worktree_config.copy.as_deref().unwrap_or_default())?;
    let containment = containment(&rules, agent.as_ref())?;
    let spice = Spice::discover()?;
    // A resumed run may first have to mend what its killed predecessor left half written; the
    // lock is taken first so that predecessor is known to be gone.
    let early_lock = match &existing {
        Some(_) => Some(lock_run(&layout, &run_id)?),
        None => None,
    };
    let existing = if early_lock.is_some() { load_existing(&manifest_path)? } else { existing };
    if let Some(manifest) = &existing {
        {
            let _repo_lock = FileLock::acquire(&layout.repo_lock())?;
            git::remove_incomplete_worktree_records(repo.common_dir(), &format!("{run_id}-"))?;
        }
        check_main_worktree(manifest)?;
    }
    check_worktree_paths(&repo, &plan, &layout)?;
    check_foreign_branches(&repo, &plan, existing.as_ref())?;

    let run_lock = match early_lock {
        Some(lock) => lock,
        None => lock_run(&layout, &run_id)?,
    };
    // Another process may have finished a step between the read above and the lock.
    let existing = load_existing(&manifest_path)?;
    if let Some(manifest) = &existing
        && manifest.plan_digest != plan.digest
        && !force_plan
    {
        return Err(plan_changed(&layout, manifest, &plan));
    }
    let journal = Journal::new(EventLog::new(&layout.events(&run_id)));
    let wt_exe = std::env::current_exe().unwrap_or_else(|_| "wt".into());
    let timeout = overrides.timeout_secs.map(std::time::Duration::from_secs).or(plan.agent.timeout);
    let max_parallel = overrides.max_parallel.or(plan.agent.max_parallel).unwrap_or(DEFAULT_MAX_PARALLEL);
    let ws = Workspace {
        repo,
        spice,
        layout,
        run_id,
        feature: plan.feature.clone(),
        agent,
        journal,
        wt_exe,
        timeout,
        containment,
        pool: PoolPolicy::new(&worktree_config, max_parallel),
        seed: SeedPolicy::new(&worktree_config),
    };
    let resumed = existing.is_some();
    let mut manifest = match existing {
        Some(manifest) if manifest.plan_digest != plan.digest => rebuild_for_plan(&ws, manifest, &plan),
        Some(manifest) => manifest,
        None => new_manifest(&ws, &plan, &base)?,
    };
    manifest.pid = std::process::id();
    manifest.state = RunState::Running;
    manifest.overrides = overrides.clone();
    manifest.containment = Some(containment);
    save_plan_copy(&ws, &plan)?;
    write_guard_rules(&ws, &rules)?;
    let ensured = {
        let _repo_lock = ws.repo_lock()?;
        ws.journal.step(Step::Exclude, "info/exclude", || {
            Ok(git::ensure_excluded(ws.repo.common_dir(), git::WT_EXCLUDES)?)
        })?;
        ensure_spice_knows(&ws, &base, !resumed)?;
        if !ws.seed.sparse.is_empty() {
            git::enable_worktree_config(ws.repo.root())?;
        }
        ensure_worktree(&ws, &ws.main_worktree(), &base, "main", true)?
    };
    make_worktree(&ws, &ws.main_worktree(), &base, "main", ensured)?;
    let mut run = Run::new(ws, plan, manifest, max_parallel, resumed, sink, run_lock);
    run.save()?;
    run.ws.journal.crash_point(Step::Manifest, "saved", true);
    if !run.ws.seed.copy.is_empty() {
        let how = match super::seed::clones_files(run.ws.repo.root()) {
            true => "cloned copy-on-write",
            false => "copied: this file system cannot clone files, so each copy costs its full size",
        };
        let paths = run.ws.seed.copy.join(", ");
        run.emit(Event::Notice {
            message: format!("fresh worktrees get {paths} from the main checkout, {how}"),
        });
    }
    if resumed {
        reconcile(&mut run)?;
    }
    Ok(run)
}

fn load_existing(path: &Path) -> Result<Option<RunManifest>, EngineError> {
    if path.exists() { Ok(Some(RunManifest::load(path)?)) } else { Ok(None) }
}

/// A task branch that exists although this run never claimed it belongs to someone else.
fn check_foreign_branches(
    repo: &Repo,
    plan: &Plan,
    existing: Option<&RunManifest>,
) -> Result<(), EngineError> {
    for task in plan.tasks() {
        let claimed = existing
            .and_then(|m| m.task(task.id))
            .is_some_and(|record| record.branch == task.branch && record.base_commit.is_some());
        if !claimed && repo.branch_exists(&task.branch)? {
            return Err(EngineError::BranchTaken {
                branch: task.branch.clone(),
                run_id: plan.run_id.clone(),
            });
        }
    }
    Ok(())
}

fn plan_changed(layout: &StateLayout, manifest: &RunManifest, plan: &Plan) -> EngineError {
    let copy = layout.plan_copy(&manifest.run_id, &plan.source);
    let changes = match plan::load(&copy, Some(&manifest.run_id)) {
        Ok(old) => plan::describe_changes(&old, plan),
        Err(_) => vec!["the plan file's content differs from the one the run started with".into()],
    };
    EngineError::PlanChanged { run_id: manifest.run_id.clone(), plan: plan.source.clone(), changes }
}

fn save_plan_copy(ws: &Workspace, plan: &Plan) -> Result<(), EngineError> {
    let bytes = std::fs::read(&plan.source).map_err(|source| EngineError::Io {
        context: format!("reading {}", plan.source.display()),
        source,
    })?;
    let copy = ws.layout.plan_copy(&ws.run_id, &plan.source);
    write_atomic(&copy, &bytes)
        .map_err(|source| EngineError::Io { context: format!("writing {}", copy.display()), source })
}

/// The run's guard rules: the project's `.spectacular/guard.toml` with the plan's `[guard]`.
fn run_rules(repo: &Repo, plan: &Plan) -> Result<GuardConfig, EngineError> {
    let project = repo.root().join(".spectacular").join("guard.toml");
    let config = GuardConfig::load_toml(&project)
        .map_err(|err| plan::PlanError::placed(err, "fix the rule in .spectacular/guard.toml"))?;
    Ok(config.unwrap_or_default().merge(plan.guard.clone()))
}

/// How the run's worktrees are made and recycled: the project's `.spectacular/worktree.toml`
/// (beside guard.toml) with the plan's `[worktree]`.
fn run_worktree_config(repo: &Repo, plan: &Plan) -> Result<WorktreeConfig, EngineError> {
    let project = WorktreeConfig::project_path(repo.root());
    let config = WorktreeConfig::load_toml(&project)?;
    Ok(config.unwrap_or_default().merge(plan.worktree.clone()))
}

/// The kernel sandbox when this machine has one; policy only when it has none and the rules
/// allow that; else the run is refused before anything is written.
fn containment(rules: &GuardConfig, agent: Option<&agent::Agent>) -> Result<Containment, EngineError> {
    let support = sandbox::probe();
    if rules.sandbox.denies_network() && agent.is_some_and(|agent| agent.needs_network()) {
        return Err(EngineError::AgentNeedsNetwork);
    }
    match (support.abi(), rules.sandbox.is_required()) {
        (Some(_), _) => Ok(Containment::Kernel),
        (None, false) => Ok(Containment::PolicyOnly),
        (None, true) => Err(EngineError::NoSandbox {
            detail: support.to_string(),
            fix: support.fix().unwrap_or_default().to_owned(),
        }),
    }
}

fn write_guard_rules(ws: &Workspace, config: &GuardConfig) -> Result<(), EngineError> {
    let path = ws.layout.guard_rules(&ws.run_id);
    let io = |source| EngineError::Io { context: format!("writing {}", path.display()), source };
    let text = toml::to_string(config).map_err(|err| io(std::io::Error::other(err)))?;
    write_atomic(&path, text.as_bytes()).map_err(io)
}
