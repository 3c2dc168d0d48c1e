//! Why a run could not start or go on, and — in one exhaustive match — what kind of failure each
//! reason is and the next thing to try. A new variant does not compile until it is classified.

use std::path::PathBuf;

use crate::agent::ResolveError;
pub use crate::error_kind::ErrorKind;
use crate::git::GitError;
use crate::plan::PlanError;
use crate::spice::SpiceError;
use crate::store::{LockError, ManifestError};

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Spice(#[from] SpiceError),
    #[error(transparent)]
    Manifest(#[from] ManifestError),
    #[error("run {run_id} is active (process {holder})")]
    RunLocked { run_id: String, holder: String },
    #[error(transparent)]
    Lock(LockError),
    #[error("the main checkout at {root} is on a detached HEAD, so there is no branch to stack on")]
    NoBaseBranch { root: PathBuf },
    #[error("base branch `{base}` does not exist in {root}")]
    MissingBase { base: String, root: PathBuf },
    #[error("{path} exists but is not a git worktree of this repository")]
    NotAWorktree { path: PathBuf },
    #[error("the plan of run {run_id} changed since it started ({plan}): {}", changes.join("; "))]
    PlanChanged { run_id: String, plan: PathBuf, changes: Vec<String> },
    #[error("branch {branch} already exists and was not created by run {run_id}")]
    BranchTaken { branch: String, run_id: String },
    #[error("{path} is on branch {branch}, which is not one of this run's branches")]
    WrongBranch { path: PathBuf, branch: String, expected: Option<String> },
    #[error("{path} has changes the run cannot explain: {}", files.join(", "))]
    DirtyWorktree { path: PathBuf, files: Vec<String> },
    #[error("{}", describe_dirty(dirty))]
    DirtyWorktrees { dirty: Vec<(PathBuf, Vec<String>)> },
    #[error("these branches are not merged into {base}: {}", branches.join(", "))]
    UnmergedBranches { base: String, branches: Vec<String> },
    #[error("no run {run_id} in {root}")]
    NoSuchRun { run_id: String, root: PathBuf },
    #[error("run {run_id} is not done, so its stack is not complete")]
    NotDone { run_id: String },
    #[error("the remote is not a forge git-spice can open change requests on: {detail}")]
    UnsupportedRemote { detail: String },
    #[error("git-spice is not logged in to the forge: {detail}")]
    NotLoggedIn { detail: String },
    #[error(transparent)]
    Agent(#[from] ResolveError),
    #[error("linearizing phase {phase}: moving {branch} onto {onto} failed: {detail}")]
    Linearize { phase: usize, branch: String, onto: String, detail: String },
    #[error("the stack is not linear after phase {phase}: {detail}")]
    NotLinear { phase: usize, detail: String },
    #[error("[sandbox] network = \"deny\" would cut the agent off from its model's API")]
    AgentNeedsNetwork,
    #[error("the run's agents cannot be contained: {detail}")]
    NoSandbox { detail: String, fix: String },
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
    #[error(transparent)]
    Seed(#[from] super::seed::SeedError),
}

impl EngineError {
    /// The kind of this error and the next thing to try, decided together.
    pub fn explain(&self) -> (ErrorKind, Option<String>) {
        use ErrorKind::*;
        match self {
            EngineError::Plan(err) => (BadInput, Some(err.fix.clone())),
            EngineError::Git(err) => err.explain(),
            EngineError::Seed(super::seed::SeedError::NotInside { .. }) => {
                (BadInput, Some("name paths relative to the main checkout's root in [worktree] copy".into()))
            }
            EngineError::Seed(super::seed::SeedError::NotIgnored { path }) => (
                BadInput,
                Some(format!(
                    "copy only what git ignores (build and dependency folders); a tracked path comes with the \
                     checkout. `git check-ignore -v {path}` shows whether a rule covers it"
                )),
            ),
            EngineError::Seed(super::seed::SeedError::Git(err)) => err.explain(),
            EngineError::Seed(super::seed::SeedError::Io { .. }) => (Internal, None),
            EngineError::Spice(err) => err.explain(),
            EngineError::Manifest(_) | EngineError::Lock(_) | EngineError::Io { .. } => (Internal, None),
            EngineError::NotLinear { .. } => (Internal, None),
            EngineError::RunLocked { run_id, holder } => (
                Busy,
                Some(format!("wait for process {holder} to finish (`wt status {run_id}` shows the run), then try again")),
            ),
            EngineError::NoBaseBranch { .. } => (
                Environment,
                Some("check a branch out in the main checkout, set base = \"<branch>\" under [run], or pass --base".into()),
            ),
            EngineError::MissingBase { .. } => (
                Environment,
                Some("create the branch, or name an existing one with base = \"…\" under [run] or --base".into()),
            ),
            EngineError::NotAWorktree { path } => {
                (Environment, Some(format!("move {} out of the way (it is not wt's), then run again", path.display())))
            }
            EngineError::PlanChanged { run_id, .. } => (
                BadInput,
                Some(format!(
                    "resume with the changed plan: add --force-plan (unchanged verified tasks are kept); \
                     or start a separate run with another --run-id; or remove this one with `wt cleanup {run_id}`"
                )),
            ),
            EngineError::BranchTaken { .. } => {
                (Environment, Some("rename or delete that branch, or run the plan under another --run-id".into()))
            }
            EngineError::WrongBranch { path, expected, .. } => (
                Environment,
                Some(match expected {
                    Some(expected) => {
                        format!("check the run's branch out again: git -C {} checkout {expected}", path.display())
                    }
                    None => format!("detach it again: git -C {} checkout --detach", path.display()),
                }),
            ),
            EngineError::DirtyWorktree { path, .. } => (
                Environment,
                Some(format!(
                    "commit them on their branch or stash them (git -C {} stash --include-untracked), then run again",
                    path.display()
                )),
            ),
            EngineError::DirtyWorktrees { .. } => (
                Refused,
                Some("commit or save those files first, or pass --force to remove them with the worktree".into()),
            ),
            EngineError::UnmergedBranches { .. } => (
                Refused,
                Some("keep the branches (leave out --delete-branches), or pass --force to delete them anyway".into()),
            ),
            EngineError::NoSuchRun { .. } => (BadInput, Some("`wt status` lists the runs of this repository".into())),
            EngineError::NotDone { run_id } => (Environment, Some(format!("finish it first: `wt resume {run_id}`"))),
            EngineError::UnsupportedRemote { .. } => (
                Environment,
                Some(
                    "to only push the branches, pass --no-publish; or set `git config spice.forge.kind <forge>` for \
                     a forge behind an alias"
                        .into(),
                ),
            ),
            EngineError::NotLoggedIn { .. } => {
                (Environment, Some("log in once with `git-spice auth login`, then submit again".into()))
            }
            EngineError::Agent(ResolveError::Plan(err)) => (BadInput, Some(err.fix.clone())),
            EngineError::Agent(ResolveError::ClaudeUnavailable) => (
                Environment,
                Some(
                    "install Claude Code (npm install -g @anthropic-ai/claude-code), or give each task a `run` \
                     command (kind = \"script\"), or pass --agent-command '<cmd>'"
                        .into(),
                ),
            ),
            EngineError::AgentNeedsNetwork => (
                BadInput,
                Some(
                    "keep network = \"deny\" for script and command agents and for /spectacular:execute (whose \
                     workers' commands run in the sandbox, not the session); for wt run with Claude Code remove it"
                        .into(),
                ),
            ),
            EngineError::NoSandbox { fix, .. } => (
                Environment,
                Some(format!(
                    "{fix}; or, to run contained by the guard's policy only, set `[sandbox] required = false` in \
                     .spectacular/guard.toml"
                )),
            ),
            EngineError::Linearize { branch, onto, .. } => (
                RunFailed,
                Some(format!(
                    "the tasks' branches are kept; resolve the overlap between them by hand (in the run's main \
                     worktree: `gs upstack onto {onto} --branch {branch}`, fix the conflict, `git add` it, \
                     `gs rebase continue`), then run the plan again"
                )),
            ),
        }
    }
}

impl From<LockError> for EngineError {
    fn from(err: LockError) -> Self {
        EngineError::Lock(err)
    }
}

fn describe_dirty(dirty: &[(PathBuf, Vec<String>)]) -> String {
    let parts: Vec<String> = dirty
        .iter()
        .map(|(path, files)| format!("{} has uncommitted files: {}", path.display(), files.join(", ")))
        .collect();
    parts.join("; ")
}
