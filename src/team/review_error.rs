//! Why `wt push`, `wt pr`, `wt rebase` or `wt sync` refused or stopped, and — in one exhaustive
//! match — what kind of failure each is and the commands that come next. Reached through
//! [`TeamError::Review`](super::TeamError::Review).

use std::path::PathBuf;

use crate::error_kind::ErrorKind;

#[derive(Debug, thiserror::Error)]
pub enum ReviewError {
    #[error("`{name}` is {what}, not a team worktree")]
    NotTeamWorktree { name: String, what: String, fix: String },
    #[error("the team worktree {} has {}, not its own branch {name}", path.display(), describe_head(.branch))]
    NotOwnBranch { name: String, path: PathBuf, branch: Option<String> },
    #[error("{name} is the trunk; wt pushes, submits and rebases only a team worktree's own branch")]
    Trunk { name: String },
    #[error("there is no branch {branch}")]
    NoBranch { branch: String },
    #[error("this repository has no remote to push to (git-spice recorded none, and there is no `origin`)")]
    NoRemote,
    #[error(
        "someone else pushed {branch}: {remote} has it at {}, {}",
        short(theirs),
        match last_pushed { Some(sha) => format!("not at {} where wt last pushed it", short(sha)), None => "and wt never pushed it there".to_owned() }
    )]
    SomeoneElsePushed { branch: String, remote: String, theirs: String, last_pushed: Option<String> },
    #[error("{remote} refused the push of {branch}: {summary}")]
    PushRejected { branch: String, remote: String, summary: String },
    #[error("{branch}'s base {base} has no change request yet, so {branch}'s cannot be based on it")]
    BaseNotSubmitted { branch: String, base: String, fix: String },
    #[error("{branch}'s base {base} was merged ({change}); {branch} still sits on it")]
    BaseMerged { branch: String, base: String, change: String },
    #[error("{branch}'s change request {change} was merged already")]
    ChangeMerged { branch: String, change: String },
    #[error("{branch} needs a rebase: its base {base} moved since it was stacked")]
    NeedsRestack { branch: String, base: String },
    #[error("git-spice cannot open change requests on this remote: {detail}")]
    UnsupportedRemote { detail: String },
    #[error("git-spice is not logged in to the forge: {detail}")]
    NotLoggedIn { detail: String },
    #[error(
        "rebasing {branch} onto {onto} stopped on a conflict in {}: {}; the rebase is left there for you to finish",
        worktree.display(),
        files.join(", ")
    )]
    ConflictLeft { name: String, branch: String, onto: String, worktree: PathBuf, files: Vec<String> },
    #[error("the rebase in {} still has conflicts: {}", worktree.display(), files.join(", "))]
    ConflictsUnresolved { name: String, worktree: PathBuf, files: Vec<String> },
    #[error("no rebase is under way in {}, so there is nothing to abort", worktree.display())]
    NoRebaseToAbort { worktree: PathBuf },
    #[error("the forge did not say which change requests are merged ({detail})")]
    ForgeUnavailable { detail: String },
    #[error("nothing to sync for {target}: {detail}")]
    NothingToSync { target: String, detail: String },
}

fn describe_head(branch: &Option<String>) -> String {
    match branch {
        Some(branch) => format!("branch {branch} checked out"),
        None => "a detached HEAD".to_owned(),
    }
}

/// A commit as people read it.
pub fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

impl ReviewError {
    /// The kind of this error and the next thing to try, decided together.
    pub fn explain(&self) -> (ErrorKind, Option<String>) {
        use ErrorKind::*;
        let wt = crate::process::own_name();
        match self {
            ReviewError::NotTeamWorktree { fix, .. } => (BadInput, Some(fix.clone())),
            ReviewError::NotOwnBranch { name, path, .. } => (
                Environment,
                Some(format!(
                    "check {name} out there again (`git -C {} switch {name}`); wt acts only on a worktree's own branch",
                    path.display()
                )),
            ),
            ReviewError::Trunk { .. } => {
                (BadInput, Some(format!("name a team worktree (`{wt} list` shows them)")))
            }
            ReviewError::NoBranch { .. } => (Environment, Some(format!("`{wt} list` shows the worktrees and their branches"))),
            ReviewError::NoRemote => (
                Environment,
                Some("add the remote (`git remote add origin <url>`), then tell git-spice: `git-spice repo init`".into()),
            ),
            ReviewError::SomeoneElsePushed { branch, remote, .. } => (
                Refused,
                Some(format!(
                    "nothing was pushed; look at what they pushed: `git fetch {remote} {branch} && git log {branch}..{remote}/{branch}`, \
                     then build on it (rebase {branch} onto {remote}/{branch} in its worktree) and push again"
                )),
            ),
            ReviewError::PushRejected { .. } => {
                (Refused, Some("the remote's own rules refused it; nothing was pushed".into()))
            }
            ReviewError::BaseNotSubmitted { fix, .. } => (Refused, Some(fix.clone())),
            ReviewError::BaseMerged { branch, .. } => (
                Refused,
                Some(format!(
                    "move it onto the next base first: `{wt} rebase {branch}` (or `{wt} sync` for the whole stack), then \
                     `{wt} pr {branch}` again"
                )),
            ),
            ReviewError::ChangeMerged { .. } => (
                Refused,
                Some(format!("`{wt} sync` moves what sits on it and removes its worktree")),
            ),
            ReviewError::NeedsRestack { branch, .. } => {
                (Refused, Some(format!("`{wt} rebase {branch}` first, then `{wt} pr {branch}` again")))
            }
            ReviewError::UnsupportedRemote { .. } => (
                Environment,
                Some(format!(
                    "push the branch without a change request: `{wt} push <name>`; or set `git config spice.forge.kind \
                     <forge>` for a forge behind an alias"
                )),
            ),
            ReviewError::NotLoggedIn { .. } => {
                (Environment, Some("log in once with `git-spice auth login`, then run it again".into()))
            }
            ReviewError::ConflictLeft { name, worktree, .. } => (Refused, Some(continue_or_abort(name, worktree))),
            ReviewError::ConflictsUnresolved { name, worktree, .. } => {
                (Refused, Some(continue_or_abort(name, worktree)))
            }
            ReviewError::NoRebaseToAbort { .. } => (BadInput, None),
            ReviewError::ForgeUnavailable { .. } => (
                Environment,
                Some("check that git-spice can reach the forge (`git-spice auth status`), then run it again".into()),
            ),
            ReviewError::NothingToSync { .. } => (
                BadInput,
                Some(format!("`{wt} list` shows the worktrees, `{wt} status` the runs; `{wt} sync --all` syncs every stack")),
            ),
        }
    }
}

/// How to finish or undo a rebase left in `worktree`. git-spice's `rebase continue` (which
/// `wt rebase` runs) also records a move's new base; a bare `git rebase --continue` after a move
/// would leave git-spice believing the branch still sits on its old base.
fn continue_or_abort(name: &str, worktree: &std::path::Path) -> String {
    let wt = crate::process::own_name();
    let dir = worktree.display();
    format!(
        "resolve the conflicted files in {dir} and stage them (`git -C {dir} add <file>`), then `{wt} rebase {name}` \
         continues (it runs `git-spice rebase continue` there and restacks what sits on {name}; not `git rebase \
         --continue`, which leaves git-spice's record of a move behind); or give up with `{wt} rebase {name} --abort`"
    )
}
