use std::path::PathBuf;

use crate::git::GitError;
use crate::plan::PlanError;
use crate::spice::SpiceError;
use crate::store::{LockError, ManifestError};

/// Why a run could not start or go on. Each variant's `hint` is the next command to try.
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
    #[error("run {run_id} is already running (process {holder})")]
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
    #[error("run {run_id} is active (process {holder})")]
    RunActive { run_id: String, holder: String },
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
    #[error("the agent is Claude Code, but `claude` is not on PATH")]
    ClaudeUnavailable,
    #[error("linearizing phase {phase}: moving {branch} onto {onto} failed: {detail}")]
    Linearize { phase: usize, branch: String, onto: String, detail: String },
    #[error("the stack is not linear after phase {phase}: {detail}")]
    NotLinear { phase: usize, detail: String },
    #[error("all {slots} wt worker slots are out to other tasks ({})", holders.join(", "))]
    NoWorkerSlot { run_id: String, slots: usize, holders: Vec<String> },
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
}

impl EngineError {
    pub fn hint(&self) -> Option<String> {
        Some(match self {
            EngineError::Plan(err) => err.fix.clone(),
            EngineError::RunLocked { .. } => "wait for it to finish, or watch it with `wt status`".into(),
            EngineError::NoBaseBranch { .. } => {
                "check a branch out in the main checkout, set base = \"<branch>\" under [run], or pass --base".into()
            }
            EngineError::MissingBase { .. } => {
                "create the branch, or name an existing one with base = \"…\" under [run] or --base".into()
            }
            EngineError::NotAWorktree { path } => {
                format!("move {} out of the way (it is not wt's), then run again", path.display())
            }
            EngineError::PlanChanged { run_id, .. } => format!(
                "resume with the changed plan: add --force-plan (unchanged verified tasks are kept); \
                 or start a separate run with another --run-id; or remove this one with `wt cleanup {run_id}`"
            ),
            EngineError::BranchTaken { .. } => {
                "rename or delete that branch, or run the plan under another --run-id".into()
            }
            EngineError::WrongBranch { path, expected, .. } => match expected {
                Some(expected) => format!("check the run's branch out again: git -C {} checkout {expected}", path.display()),
                None => format!("detach it again: git -C {} checkout --detach", path.display()),
            },
            EngineError::DirtyWorktree { path, .. } => format!(
                "commit them on their branch or stash them (git -C {} stash --include-untracked), then run again",
                path.display()
            ),
            EngineError::RunActive { run_id, .. } => {
                format!("wait for it to end (`wt status {run_id}`), then clean it up")
            }
            EngineError::DirtyWorktrees { .. } => {
                "commit or save those files first, or pass --force to remove them with the worktree".into()
            }
            EngineError::UnmergedBranches { .. } => {
                "keep the branches (leave out --delete-branches), or pass --force to delete them anyway".into()
            }
            EngineError::NoSuchRun { .. } => "`wt status` lists the runs of this repository".into(),
            EngineError::NoWorkerSlot { run_id, .. } => format!(
                "run `wt step {run_id} --json` again when those subagents have returned; `wt status` shows the runs, \
                 `wt cleanup <runId>` frees an abandoned run's slots"
            ),
            EngineError::NotDone { run_id } => format!("finish it first: `wt resume {run_id}`"),
            EngineError::UnsupportedRemote { .. } => {
                "to only push the branches, pass --no-publish; or set `git config spice.forge.kind <forge>` for a \
                 forge behind an alias"
                    .into()
            }
            EngineError::NotLoggedIn { .. } => "log in once with `git-spice auth login`, then submit again".into(),
            EngineError::ClaudeUnavailable => "install Claude Code (npm install -g @anthropic-ai/claude-code), or give \
                 each task a `run` command (kind = \"script\"), or pass --agent-command '<cmd>'"
                .into(),
            EngineError::Linearize { .. } => {
                "the tasks' branches are kept; resolve the overlap between them by hand, then run the plan again"
                    .into()
            }
            EngineError::Spice(SpiceError::NotFound | SpiceError::NotGitSpice { .. } | SpiceError::TooOld { .. }) => {
                "scripts/demo and scripts/test install it into ~/.cache/spectacular-tools".into()
            }
            _ => return None,
        })
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
