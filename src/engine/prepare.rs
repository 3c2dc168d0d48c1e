//! Prepare a run. Everything that can refuse is checked before anything is written: the agent,
//! the repository, the base, git-spice, the worktree paths and the task branches. Then the run
//! lock, the ignore rules, git-spice's repository record and the main worktree; on a resume, the
//! manifest is reconciled with what git says (see `reconcile`).

use std::path::Path;

use super::journal::Journal;
use super::reconcile::reconcile;

use super::run::Run;
use super::workspace::{WORKTREES_DIR, Workspace, main_worktree_path, task_worktree_path};
use super::{EngineError, EventSink, RunRequest};
use crate::agent::Agent;
use crate::git::{self, Repo};
use crate::plan::{self, AgentKind, Located, Plan, Strategy, check_agent_kind, missing_command};
use crate::spice::Spice;
use crate::store::{
    EventLog, FileLock, LockError, MANIFEST_FORMAT, Overrides, PhaseRecord, PhaseState, RunManifest,
    RunState, StateLayout, TaskRecord, TaskState, write_atomic,
};

/// Patterns that keep run artifacts out of the user's `git status`.
pub const EXCLUDES: &[&str] = &["/.worktrees/"];

/// Default number of parallel agents when neither the plan nor the CLI says.
const DEFAULT_MAX_PARALLEL: usize = 4;

pub fn prepare<'s>(request: RunRequest, sink: &'s dyn EventSink) -> Result<(Run<'s>, bool), EngineError> {
    let RunRequest { plan, cwd, overrides, base, force_plan, external_agents } = request;
    let repo = Repo::discover(&cwd)?;
    let layout = StateLayout::new(repo.common_dir());
    let run_id = plan.run_id.clone();
    let manifest_path = layout.manifest(&run_id);
    let existing = load_existing(&manifest_path)?;
    let overrides = match &existing {
        Some(manifest) => overrides.or(&manifest.overrides),
        None => overrides,
    };
    let agent = match external_agents {
        true => Agent::External,
        false => resolve_agent(&plan, overrides.agent_kind, overrides.agent_command.clone())?,
    };
    let base = match &existing {
        Some(manifest) => manifest.base.clone(),
        None => match spectacular_main_branch(&repo, &run_id, &base, &plan)? {
            Some(branch) => branch,
            None => resolve_base(&repo, &plan, base)?,
        },
    };
    let spice = Spice::discover()?;
    // A resumed run may first have to mend what its killed predecessor left half written; the
    // lock is taken first so that predecessor is known to be gone.
    let early_lock = match &existing {
        Some(_) => Some(take_run_lock(&layout, &run_id)?),
        None => None,
    };
    let existing = if early_lock.is_some() { load_existing(&manifest_path)? } else { existing };
    if let Some(manifest) = &existing {
        {
            let _repo_lock = FileLock::acquire(&layout.repo_lock())?;
            git::remove_incomplete_worktree_records(repo.common_dir(), &format!("{run_id}-"))?;
        }
        super::reconcile::check_main_worktree(manifest)?;
    }
    check_worktree_paths(&repo, &plan, &layout)?;
    check_foreign_branches(&repo, &plan, existing.as_ref())?;

    let run_lock = match early_lock {
        Some(lock) => lock,
        None => take_run_lock(&layout, &run_id)?,
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
    save_plan_copy(&ws, &plan)?;
    write_guard_rules(&ws, &plan)?;
    {
        let _repo_lock = ws.repo_lock()?;
        ws.journal
            .step("exclude", "info/exclude", || Ok(git::ensure_excluded(ws.repo.common_dir(), EXCLUDES)?))?;
        if !ws.repo.reference_exists("refs/spice/data")? {
            ws.journal.step("spice-init", &base, || Ok(ws.spice.repo_init(ws.repo.root(), &base)?))?;
        } else if !resumed {
            // The manifest is first saved after this block, so a run that has one already made
            // sure git-spice tracks its base: no `git-spice log` on every resume or `wt step`.
            ensure_base_tracked(&ws, &base)?;
        }
        ensure_main_worktree(&ws, &base)?;
    }
    let max_parallel = overrides.max_parallel.or(plan.agent.max_parallel).unwrap_or(DEFAULT_MAX_PARALLEL);
    let mut run = Run::new(ws, plan, manifest, max_parallel, sink, run_lock);
    run.save()?;
    run.ws.journal.crash_point("manifest", "saved", true);
    if resumed {
        reconcile(&mut run)?;
    }
    Ok((run, resumed))
}

fn take_run_lock(layout: &StateLayout, run_id: &str) -> Result<FileLock, EngineError> {
    FileLock::try_acquire(&layout.run_lock(run_id)).map_err(|err| match err {
        LockError::Held { holder, .. } => EngineError::RunLocked { run_id: run_id.to_owned(), holder },
        other => other.into(),
    })
}

fn load_existing(path: &Path) -> Result<Option<RunManifest>, EngineError> {
    if path.exists() { Ok(Some(RunManifest::load(path)?)) } else { Ok(None) }
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
        // Claude Code is the default when it is installed; a script or command agent otherwise.
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
        AgentKind::Claude => match which::which("claude") {
            Ok(binary) => Ok(Agent::Claude(binary)),
            Err(_) => Err(EngineError::ClaudeUnavailable),
        },
    }
}

/// spectacular's layout: `/spectacular:spec` made `.worktrees/<runId>-main` on branch
/// `<runId>-main`; the run reuses that worktree and stacks on that branch (unless a base is given).
fn spectacular_main_branch(
    repo: &Repo,
    run_id: &str,
    cli_base: &Option<String>,
    plan: &Plan,
) -> Result<Option<String>, EngineError> {
    if cli_base.is_some() || plan.base.is_some() {
        return Ok(None);
    }
    let path = main_worktree_path(repo, run_id);
    if !path.exists() || git::open_worktree(&path).is_err() {
        return Ok(None);
    }
    let expected = format!("{run_id}-main");
    Ok(git::current_branch(&path)?.filter(|branch| *branch == expected))
}

/// Stacking on a branch git-spice does not track fails, so a base other than the trunk is
/// tracked on the trunk first. The caller holds the repo lock.
fn ensure_base_tracked(ws: &Workspace, base: &str) -> Result<(), EngineError> {
    let tracked = ws.spice.log_all(ws.repo.root())?;
    if tracked.iter().any(|branch| branch.name == base) {
        return Ok(());
    }
    let Some(trunk) = tracked.iter().find(|branch| branch.down.is_none()) else { return Ok(()) };
    let trunk = trunk.name.clone();
    ws.journal.step("track-base", base, || Ok(ws.spice.branch_track(ws.repo.root(), base, &trunk)?))
}

/// `--base`, else the plan's base, else the branch checked out in the main checkout.
pub fn resolve_base(repo: &Repo, plan: &Plan, cli_base: Option<String>) -> Result<String, EngineError> {
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
        Some(location) => plan::PlanError::at(
            location,
            format!("base branch `{base}` does not exist in {}", repo.root().display()),
            "name an existing branch, or create it first",
        )
        .into(),
        None => EngineError::MissingBase { base, root: repo.root().to_owned() },
    })
}

/// Every run worktree path that exists must be a worktree git knows; anything else there is not
/// ours to touch.
fn check_worktree_paths(repo: &Repo, plan: &Plan, layout: &StateLayout) -> Result<(), EngineError> {
    let registered = git::list_worktrees(repo.root())?;
    let interrupted = Journal::unfinished(&layout.events(&plan.run_id));
    let main = (main_worktree_path(repo, &plan.run_id), "main".to_owned());
    let tasks =
        plan.tasks().map(|task| (task_worktree_path(repo, &plan.run_id, task.id), task.id.to_string()));
    for (path, target) in std::iter::once(main).chain(tasks) {
        let ours = registered.iter().any(|entry| same_path(&entry.path, &path))
            || interrupted.contains(&("worktree-add".to_owned(), target));
        if path.exists() && !ours {
            return Err(EngineError::NotAWorktree { path });
        }
    }
    Ok(())
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

/// Keeps the records of tasks that are still the same task (same number and branch); the rest
/// start over. A phase stays done only if none of its tasks changed.
fn rebuild_for_plan(ws: &Workspace, old: RunManifest, plan: &Plan) -> RunManifest {
    let mut fresh = build_manifest(ws, plan, &old.base, &old.base_commit);
    for phase in &mut fresh.phases {
        let old_phase = old.phases.get(phase.number - 1);
        let mut unchanged =
            old_phase.is_some_and(|p| p.tasks.len() == phase.tasks.len() && p.strategy == phase.strategy);
        for record in &mut phase.tasks {
            let previous = old_phase.and_then(|p| p.tasks.iter().find(|t| t.number == record.number));
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
fn write_guard_rules(ws: &Workspace, plan: &Plan) -> Result<(), EngineError> {
    let project = ws.repo.root().join(".spectacular").join("guard.toml");
    let config = crate::guard::GuardConfig::load_toml(&project)
        .map_err(|err| {
            plan::PlanError::file(project.clone(), err, "fix the rule in .spectacular/guard.toml")
        })?
        .unwrap_or_default()
        .merge(plan.guard.clone());
    let path = ws.layout.guard_rules(&ws.run_id);
    let io = |source| EngineError::Io { context: format!("writing {}", path.display()), source };
    let text = toml::to_string(&config).map_err(|err| io(std::io::Error::other(err)))?;
    write_atomic(&path, text.as_bytes()).map_err(io)
}

fn ensure_main_worktree(ws: &Workspace, base: &str) -> Result<(), EngineError> {
    ensure_worktree(ws, &ws.main_worktree(), base, "main", true)
}

/// Creates a run worktree detached at `commitish`, locked, or keeps the one that is there; one
/// git still records but whose folder is gone or half created is removed and made again (its
/// branch, where the work is, stays). The caller holds the repo lock.
pub fn ensure_worktree(
    ws: &Workspace,
    path: &Path,
    commitish: &str,
    target: &str,
    may_hold_work: bool,
) -> Result<(), EngineError> {
    if path.exists() && git::open_worktree(path).is_ok() {
        return Ok(());
    }
    // Registered, or left half made by a `git worktree add` this run's journal shows was cut
    // short (check_worktree_paths refused any other folder in a run's place).
    if path.exists() || ws.repo.worktree_paths()?.iter().any(|registered| same_path(registered, path)) {
        ws.journal.step("worktree-repair", target, || repair_worktree(ws, path, may_hold_work))?;
    }
    std::fs::create_dir_all(ws.repo.root().join(WORKTREES_DIR))
        .map_err(|source| EngineError::Io { context: "creating .worktrees".into(), source })?;
    ws.journal.step("worktree-add", target, || {
        Ok(git::add_detached(ws.repo.root(), path, commitish, &ws.lock_reason())?)
    })
}

/// Drops git's record of a worktree that cannot be used. A folder git refuses to remove (a
/// `git worktree add` killed half way leaves one) is moved aside when an agent may have worked
/// in it, and deleted when it can only hold the checkout git was writing.
fn repair_worktree(ws: &Workspace, path: &Path, may_hold_work: bool) -> Result<(), EngineError> {
    let registered = git::list_worktrees(ws.repo.root())?.iter().any(|entry| same_path(&entry.path, path));
    if registered && git::remove_worktree(ws.repo.root(), path, true).is_ok() {
        return Ok(());
    }
    if path.exists() && !may_hold_work {
        std::fs::remove_dir_all(path)
            .map_err(|source| EngineError::Io { context: format!("removing {}", path.display()), source })?;
    } else if path.exists() {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let aside = path.with_file_name(format!("{name}.broken-{}", crate::store::now()));
        std::fs::rename(path, &aside).map_err(|source| EngineError::Io {
            context: format!("moving {} aside", path.display()),
            source,
        })?;
    }
    if registered {
        git::remove_worktree(ws.repo.root(), path, true)?;
    }
    Ok(())
}

pub fn same_path(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_owned());
    a == b || canonical(a) == canonical(b)
}

fn new_manifest(ws: &Workspace, plan: &Plan, base: &str) -> Result<RunManifest, EngineError> {
    let base_commit = ws.repo.branch_commit(base)?.unwrap_or_default();
    Ok(build_manifest(ws, plan, base, &base_commit))
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
                    number: task.id.to_string(),
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
        main_worktree: main_worktree_path(&ws.repo, &ws.run_id),
        state: RunState::Running,
        pid: std::process::id(),
        started_at: now,
        updated_at: now,
        overrides: Overrides::default(),
        phases,
    }
}
