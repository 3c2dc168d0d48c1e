//! Why a team command could not do what was asked, and — in one exhaustive match — what kind of
//! failure each reason is and the next thing to try.

use std::path::PathBuf;

use super::review_error::ReviewError;
use super::upstack::Blocker;
use crate::error_kind::ErrorKind;
use crate::git::GitError;
use crate::spice::SpiceError;
use crate::store::LockError;

#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error(transparent)]
    Spice(#[from] SpiceError),
    #[error(transparent)]
    Lock(#[from] LockError),
    #[error("{context}: {source}")]
    Io { context: String, source: std::io::Error },
    #[error("`{name}` cannot name a team worktree: {problem}")]
    BadName { name: String, problem: String, fix: String },
    #[error(
        "git-spice does not know this repository yet and the main checkout at {root} is on a detached HEAD, so there is no trunk to give it"
    )]
    NoTrunk { root: PathBuf },
    #[error("base `{base}` {}", if *exists { format!("is neither the trunk ({trunk}) nor a branch git-spice tracks") } else { "does not exist".to_owned() })]
    UnknownBase { base: String, trunk: String, exists: bool },
    #[error("`{name}` cannot be its own base")]
    OwnBase { name: String },
    #[error("team worktree {name} already exists on base {}", existing.as_deref().unwrap_or("(none: git-spice does not track it)"))]
    OtherBase { name: String, base: String, existing: Option<String> },
    #[error("branch {name} already exists ({}) and has no team worktree at {}", describe_base(existing), path.display())]
    BranchWithoutWorktree { name: String, base: String, existing: Option<String>, path: PathBuf },
    #[error("{} is in the way: {detail}", path.display())]
    PathInTheWay { path: PathBuf, detail: String },
    #[error("{} is not wt's: {detail}", path.display())]
    AgentFileInTheWay { path: PathBuf, detail: String },
    #[error("no wt worktree named {name} in {root}{}", list_known(known))]
    NoSuchWorktree { name: String, root: PathBuf, known: Vec<String> },
    #[error("{} is on a detached HEAD or no branch git-spice tracks, so it has no base", path.display())]
    NoBase { name: String, path: PathBuf },
    #[error("{} has uncommitted files: {}", path.display(), files.join(", "))]
    Dirty { path: PathBuf, files: Vec<String> },
    #[error("{doing} cannot start: {}", blockers.iter().map(|b| format!("{}: {}", b.branch, b.reason)).collect::<Vec<_>>().join("; "))]
    Blocked { doing: String, blockers: Vec<Blocker> },
    #[error("moving {branch} onto {onto} stopped on a conflict, and was put back as it was: {detail}")]
    Conflict { branch: String, onto: String, worktree: Option<PathBuf>, detail: String },
    #[error("wt runs no git in {}, whose git files are not as git leaves them: {found}", worktree.display())]
    Tampered { worktree: PathBuf, found: String },
    /// `wt push`, `pr`, `rebase` and `sync` (`review_error.rs`).
    #[error(transparent)]
    Review(#[from] ReviewError),
}

fn describe_base(existing: &Option<String>) -> String {
    match existing {
        Some(base) => format!("git-spice tracks it on {base}"),
        None => "git-spice does not track it".to_owned(),
    }
}

fn list_known(known: &[String]) -> String {
    if known.is_empty() { String::new() } else { format!(" (there are: {})", known.join(", ")) }
}

impl TeamError {
    pub(super) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> TeamError {
        let context = context.into();
        move |source| TeamError::Io { context, source }
    }

    /// The kind of this error and the next thing to try, decided together.
    pub fn explain(&self) -> (ErrorKind, Option<String>) {
        use ErrorKind::*;
        let wt = crate::process::own_name();
        match self {
            TeamError::Review(err) => err.explain(),
            TeamError::Git(err) => err.explain(),
            TeamError::Spice(err) => err.explain(),
            TeamError::Lock(_) | TeamError::Io { .. } => (Internal, None),
            TeamError::BadName { fix, .. } => (BadInput, Some(fix.clone())),
            TeamError::NoTrunk { root } => (
                Environment,
                Some(format!(
                    "check the trunk out in the main checkout (git -C {} switch main), or tell git-spice once: \
                     `git-spice repo init --trunk <branch>`",
                    root.display()
                )),
            ),
            TeamError::UnknownBase { trunk, exists: true, .. } => (
                Environment,
                Some(format!(
                    "stack on the trunk (--base {trunk}) or on a team worktree's branch (`{wt} list` shows them), \
                     or track the branch first: `git-spice branch track <base> --base {trunk}`"
                )),
            ),
            TeamError::UnknownBase { trunk, exists: false, .. } => (
                Environment,
                Some(format!(
                    "name an existing branch: the trunk ({trunk}) or a team worktree's (`{wt} list`)"
                )),
            ),
            TeamError::OwnBase { .. } => (BadInput, Some("name the branch it stacks on with --base".into())),
            TeamError::OtherBase { name, existing, .. } => (
                Environment,
                Some(match existing {
                    Some(existing) => format!(
                        "use it as it is (`{wt} create {name} --base {existing}` reports it), pick another name, or \
                         remove it first with `{wt} cleanup {name}`"
                    ),
                    None => format!("pick another name, or remove it first with `{wt} cleanup {name}`"),
                }),
            ),
            TeamError::BranchWithoutWorktree { name, base, path, .. } => (
                Environment,
                Some(format!(
                    "pick another name; or work on that branch in the team worktree: `git worktree add {} {name}`, \
                     then `{wt} create {name} --base {base}` again",
                    path.display()
                )),
            ),
            TeamError::PathInTheWay { .. } => {
                (Environment, Some("move it out of the way (it is not wt's), or pick another name".into()))
            }
            TeamError::AgentFileInTheWay { .. } => (
                Environment,
                Some("pick another name, or move that agent file away (wt never writes yours)".into()),
            ),
            TeamError::NoSuchWorktree { .. } => {
                (BadInput, Some(format!("`{wt} list` shows the wt worktrees")))
            }
            TeamError::NoBase { path, .. } => (
                Environment,
                Some(format!(
                    "check its branch out again in {}, and track it if git-spice does not: \
                     `git-spice branch track --base <base>`",
                    path.display()
                )),
            ),
            TeamError::Dirty { .. } => (
                Refused,
                Some(
                    "commit or save those files first, or pass --force to remove them with the worktree"
                        .into(),
                ),
            ),
            TeamError::Blocked { blockers, .. } => {
                let mut fixes: Vec<&str> = blockers.iter().map(|b| b.fix.as_str()).collect();
                fixes.dedup();
                (Refused, Some(fixes.join("; ")))
            }
            TeamError::Tampered { worktree, .. } => (
                Refused,
                Some(format!(
                    "git and git-spice run outside the sandbox there, so whatever led them elsewhere must go first: \
                     look at what is in that worktree's git files (`git worktree repair {}` links a moved worktree \
                     again; a symlink, fifo or foreign rebase left there is removed by hand, or the worktree with \
                     `{wt} cleanup <name> --force`), then run the command again",
                    worktree.display()
                )),
            ),
            TeamError::Conflict { branch, onto, worktree, .. } => {
                let place = match worktree {
                    Some(path) => format!("cd {} && ", path.display()),
                    None => format!("in a worktree of {branch} (`git worktree add <folder> {branch}`): "),
                };
                (
                    Refused,
                    Some(format!(
                        "move it yourself and resolve the conflict: {place}`git-spice upstack onto {onto} --branch \
                         {branch}`, then `git-spice rebase continue`; then run the command again"
                    )),
                )
            }
        }
    }
}
