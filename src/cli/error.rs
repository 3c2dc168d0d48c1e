//! The CLI's one error type: an exit code, a message and hints. Every library error reaches it
//! through its module's `explain` (kind and hint together); [`exit_code`] is the one map from
//! kinds to the documented exit codes.

use std::fmt;

use crate::engine::EngineError;
use crate::error_kind::ErrorKind;
use crate::git::GitError;
use crate::plan::PlanError;
use crate::plugin::StepError;
use crate::store::ManifestError;
use crate::team::TeamError;
use crate::team::poll::PollError;
use crate::ui::timeline::TimelineError;

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
    /// `wt poll` waited its `--timeout` and nothing happened; poll again to keep watching.
    pub const POLL_TIMEOUT: u8 = 7;
}

pub fn exit_code(kind: ErrorKind) -> u8 {
    match kind {
        ErrorKind::RunFailed => exit::RUN_FAILED,
        ErrorKind::BadInput => exit::BAD_INPUT,
        ErrorKind::Environment => exit::ENVIRONMENT,
        ErrorKind::Busy => exit::BUSY,
        ErrorKind::Internal => exit::INTERNAL,
        ErrorKind::Refused => exit::REFUSED,
    }
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

    fn explained(message: String, (kind, hint): (ErrorKind, Option<String>)) -> Self {
        CliError { code: exit_code(kind), message, hints: hint.into_iter().collect() }
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

impl From<EngineError> for CliError {
    fn from(err: EngineError) -> Self {
        CliError::explained(err.to_string(), err.explain())
    }
}

impl From<StepError> for CliError {
    fn from(err: StepError) -> Self {
        CliError::explained(err.to_string(), err.explain())
    }
}

impl From<TeamError> for CliError {
    fn from(err: TeamError) -> Self {
        CliError::explained(err.to_string(), err.explain())
    }
}

impl From<PollError> for CliError {
    fn from(err: PollError) -> Self {
        CliError::explained(err.to_string(), err.explain())
    }
}

impl From<TimelineError> for CliError {
    fn from(err: TimelineError) -> Self {
        CliError::explained(err.to_string(), err.explain())
    }
}

impl From<PlanError> for CliError {
    fn from(err: PlanError) -> Self {
        EngineError::from(err).into()
    }
}

impl From<GitError> for CliError {
    fn from(err: GitError) -> Self {
        EngineError::from(err).into()
    }
}

impl From<ManifestError> for CliError {
    fn from(err: ManifestError) -> Self {
        EngineError::from(err).into()
    }
}
