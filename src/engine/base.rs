//! The branch a run stacks on: `--base`, the plan's base, spectacular's `<runId>-main`, or the
//! branch checked out in the main checkout — and git-spice made to track it.

use super::EngineError;
use super::journal::Step;
use super::workspace::Workspace;
use super::workspace::main_worktree_path;
use crate::git::{self, Repo};
use crate::plan::{Plan, PlanError};

/// The base of a new run: spectacular's layout when `/spectacular:spec` made it (and no base is
/// given), else [`resolve_base`].
pub fn new_run_base(repo: &Repo, plan: &Plan, cli_base: Option<String>) -> Result<String, EngineError> {
    match spectacular_main_branch(repo, &plan.run_id, &cli_base, plan)? {
        Some(branch) => Ok(branch),
        None => resolve_base(repo, plan, cli_base),
    }
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
        Some(location) => PlanError::at(
            location,
            format!("base branch `{base}` does not exist in {}", repo.root().display()),
            "name an existing branch, or create it first",
        )
        .into(),
        None => EngineError::MissingBase { base, root: repo.root().to_owned() },
    })
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

/// Makes git-spice know the repository with `base` as a stack root. Stacking on a branch
/// git-spice does not track fails, so a base other than the trunk is tracked on the trunk first.
/// Only a new run asks git-spice (a run with a manifest did this already). The caller holds the
/// repo lock.
pub fn ensure_spice_knows(ws: &Workspace, base: &str, new_run: bool) -> Result<(), EngineError> {
    if !ws.repo.reference_exists("refs/spice/data")? {
        return ws.journal.step(Step::SpiceInit, base, || Ok(ws.spice.repo_init(ws.repo.root(), base)?));
    }
    if !new_run {
        return Ok(());
    }
    let tracked = ws.spice.log_all(ws.repo.root())?;
    if tracked.iter().any(|branch| branch.name == base) {
        return Ok(());
    }
    let Some(trunk) = tracked.iter().find(|branch| branch.down.is_none()) else { return Ok(()) };
    let trunk = trunk.name.clone();
    ws.journal.step(Step::TrackBase, base, || Ok(ws.spice.branch_track(ws.repo.root(), base, &trunk)?))
}
