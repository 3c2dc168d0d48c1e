//! What kind of failure an error is, shared by every library module's `explain`; the CLI turns
//! each kind into one documented exit code (`cli::error::exit_code`).

/// What kind of failure an error is; the CLI turns each into one documented exit code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorKind {
    /// A task, its verify or the stacking failed; nothing was lost.
    RunFailed,
    /// The command line or the plan is wrong; nothing was changed.
    BadInput,
    /// Something the run needs is missing or in the way: a repository, a branch, a tool.
    Environment,
    /// Another process holds what was asked for.
    Busy,
    /// Refused to remove something that holds work.
    Refused,
    /// git, git-spice or the file system failed unexpectedly.
    Internal,
}
