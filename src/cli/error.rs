//! The CLI's one error type: a kind (which decides the exit code), a message and hints.

use std::fmt;

use crate::engine::EngineError;
use crate::git::GitError;
use crate::plan::PlanError;
use crate::spice::SpiceError;
use crate::store::ManifestError;

/// Exit codes, documented in the README.
pub mod exit {
    /// Everything asked for was done.
    pub const OK: u8 = 0;
    /// The run stopped because a task, its verify or linearization failed; nothing was lost.
    pub const RUN_FAILED: u8 = 1;
    /// Bad command line or bad plan; nothing was changed.
    pub const BAD_INPUT: u8 = 2;
    /// Something the run needs is missing: a repository, a branch, git-spice.
    pub const ENVIRONMENT: u8 = 3;
    /// Another process holds this run.
    pub const BUSY: u8 = 4;
    /// git, git-spice or the file system failed unexpectedly.
    pub const INTERNAL: u8 = 5;
    /// Refused to remove something that holds work (`--force` overrides); nothing was removed.
    pub const REFUSED: u8 = 6;
}

#[derive(Debug)]
pub struct CliError {
    pub code: u8,
    pub message: String,
    pub hints: Vec<String>,
}

impl CliError {
    pub fn new(code: u8, message: impl Into<String>) -> Self {
        CliError { code, message: message.into(), hints: Vec::new() }
    }

    pub fn hint(mut self, hint: impl Into<String>) -> Self {
        self.hints.push(hint.into());
        self
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error: {}", self.message)?;
        for hint in &self.hints {
            write!(f, "\n  hint: {hint}")?;
        }
        Ok(())
    }
}

impl From<PlanError> for CliError {
    fn from(err: PlanError) -> Self {
        let fix = err.fix.clone();
        CliError::new(exit::BAD_INPUT, err.to_string()).hint(fix)
    }
}

impl From<GitError> for CliError {
    fn from(err: GitError) -> Self {
        let code = match err {
            GitError::NotARepository { .. } | GitError::Bare { .. } => exit::ENVIRONMENT,
            _ => exit::INTERNAL,
        };
        let cli = CliError::new(code, err.to_string());
        match err {
            GitError::NotARepository { .. } => cli.hint("run wt inside a git repository, or pass -C <repo>"),
            GitError::Bare { .. } => cli.hint("clone it with a working tree, then run wt there"),
            _ => cli,
        }
    }
}

impl From<ManifestError> for CliError {
    fn from(err: ManifestError) -> Self {
        CliError::new(exit::INTERNAL, err.to_string())
    }
}

impl From<EngineError> for CliError {
    fn from(err: EngineError) -> Self {
        let hint = err.hint();
        let cli = match err {
            EngineError::Plan(err) => return err.into(),
            EngineError::Git(err) => return err.into(),
            EngineError::RunLocked { .. }
            | EngineError::RunActive { .. }
            | EngineError::NoWorkerSlot { .. } => CliError::new(exit::BUSY, err.to_string()),
            EngineError::DirtyWorktrees { .. } | EngineError::UnmergedBranches { .. } => {
                CliError::new(exit::REFUSED, err.to_string())
            }
            EngineError::Spice(
                SpiceError::NotFound | SpiceError::NotGitSpice { .. } | SpiceError::TooOld { .. },
            )
            | EngineError::NoBaseBranch { .. }
            | EngineError::MissingBase { .. }
            | EngineError::NotAWorktree { .. }
            | EngineError::BranchTaken { .. }
            | EngineError::WrongBranch { .. }
            | EngineError::DirtyWorktree { .. }
            | EngineError::ClaudeUnavailable => CliError::new(exit::ENVIRONMENT, err.to_string()),
            EngineError::PlanChanged { .. } | EngineError::NoSuchRun { .. } => {
                CliError::new(exit::BAD_INPUT, err.to_string())
            }
            EngineError::NotDone { .. }
            | EngineError::UnsupportedRemote { .. }
            | EngineError::NotLoggedIn { .. } => CliError::new(exit::ENVIRONMENT, err.to_string()),
            EngineError::Linearize { .. } => CliError::new(exit::RUN_FAILED, err.to_string()),
            _ => CliError::new(exit::INTERNAL, err.to_string()),
        };
        match hint {
            Some(hint) => cli.hint(hint),
            None => cli,
        }
    }
}
