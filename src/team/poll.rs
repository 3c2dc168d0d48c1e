//! `wt poll <name>`: waits for the next thing a worker must act on after its change request is
//! open, and returns once with it as one [`Report`]: `base_updated`, `merged`, `closed`,
//! `review_comments`, `ci_passed` or `ci_failure` (`events.rs` decides), or [`Outcome::TimedOut`].
//!
//! - The branch's base, state and review threads come from git-spice (`log short -a -S -c`),
//!   read live each round; comment bodies and CI checks from the forge (`crate::forge`), when
//!   there is one wt can read. Without one (or without CI), the poll says so once and watches
//!   the rest.
//! - While it runs it holds a flock on `<common>/spectacular/team/polls/<branch>.lock`, which the
//!   TeammateIdle gate looks at ([`is_active`]). A worker's poll runs inside `wt sandbox`, which
//!   cannot create that file: `wt create` makes it ([`prepare_lock`]) and the poll locks it
//!   through a read-only descriptor.
//! - It changes nothing: no fetch, no write but its lock.
//! - A poll names a team worktree, a run's worktree, or a branch of a run git-spice tracks.

mod events;

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde::Serialize;

pub use events::{Event, Snapshot};

use super::{Graph, TeamError, TeamRepo, name, view};
use crate::error_kind::ErrorKind;
use crate::forge::{self, Check, Comment, Forge, ForgeError};
use crate::spice::ChangeStatus;
use crate::store::{FileLock, LockError, StateLayout};

pub struct PollRequest {
    pub name: String,
    /// How long to wait for an event before giving up.
    pub timeout: Duration,
    /// How long to wait between two looks.
    pub interval: Duration,
}

/// What a poll is watching.
#[derive(Debug, Clone, Serialize)]
pub struct Watched {
    /// The name asked for.
    pub name: String,
    pub branch: String,
    /// `shamhub` or `github` (with its repository), None without a forge wt can read.
    pub forge: Option<String>,
}

/// The change request an event is about.
#[derive(Debug, Clone, Serialize)]
pub struct ChangeRef {
    pub number: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

/// The one event a poll returns with, and what came with it.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    #[serde(flatten)]
    pub event: Event,
    pub name: String,
    pub branch: String,
    pub change: Option<ChangeRef>,
    /// What to do about the event.
    pub next: String,
    /// Other events seen in the same look, less pressing (a later poll starts after them).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also: Vec<Event>,
}

pub enum Outcome {
    Event(Box<Report>),
    TimedOut { watched: Watched, last: Box<Snapshot> },
}

/// What a poll has to say while it waits (the CLI shows it on stderr).
pub enum Progress<'a> {
    /// The poll started, with the state it compares against.
    Watching { watched: &'a Watched, snapshot: &'a Snapshot },
    /// Said once: no forge wt can read comments and checks from.
    NoForge { remote: Option<String> },
    /// Said once: the change request has no CI checks to read (no CI, or none yet).
    NoChecks { number: u64 },
    /// One more look, nothing new.
    Looked { elapsed: Duration, snapshot: &'a Snapshot },
    /// A look that could not read everything; the poll goes on.
    Trouble(String),
}

#[derive(Debug, thiserror::Error)]
pub enum PollError {
    #[error(transparent)]
    Team(#[from] TeamError),
    #[error(transparent)]
    Forge(#[from] ForgeError),
    #[error("`wt poll` is already watching {branch} (process {holder})")]
    Busy { branch: String, holder: String },
    #[error("{} does not exist, and a poll inside `wt sandbox` cannot make it", path.display())]
    NoLockFile { name: String, path: PathBuf },
}

impl PollError {
    pub fn explain(&self) -> (ErrorKind, Option<String>) {
        let wt = crate::process::own_name();
        match self {
            PollError::Team(err) => err.explain(),
            PollError::Forge(err) => err.explain(),
            PollError::Busy { .. } => (
                ErrorKind::Busy,
                Some("wait for that poll's event (one poll per branch is enough), or stop it first".into()),
            ),
            PollError::NoLockFile { name, .. } => (
                ErrorKind::Environment,
                Some(format!(
                    "run `{wt} poll {name}` once outside the sandbox (it makes the file), or `{wt} create {name} \
                     --base <its base>` again"
                )),
            ),
        }
    }
}

/// Whether a `wt poll` of `branch` runs now.
pub fn is_active(layout: &StateLayout, branch: &str) -> bool {
    FileLock::is_held(&layout.team_poll_lock(branch))
}

/// Makes the poll lock file of `branch`, so that a poll inside `wt sandbox` can lock it.
pub fn prepare_lock(layout: &StateLayout, branch: &str) -> Result<(), TeamError> {
    let path = layout.team_poll_lock(branch);
    let io = || TeamError::io(format!("creating {}", path.display()));
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io())?;
    }
    std::fs::OpenOptions::new().create(true).append(true).open(&path).map(drop).map_err(io())
}

/// Watches `request.name` until something changes or the time is up.
pub fn poll(
    team: &TeamRepo,
    request: &PollRequest,
    progress: &mut dyn FnMut(Progress),
) -> Result<Outcome, PollError> {
    let started = Instant::now();
    let graph = team.graph()?;
    let branch = branch_of(team, &graph, &request.name)?;
    let _lock = hold(team.layout(), &request.name, &branch)?;
    let remote = crate::spice::state::upstream_remote(team.repo()).map_err(TeamError::from)?;
    let forge = match &remote {
        Some(remote) => forge::for_remote(team.repo(), remote)?,
        None => None,
    };
    let watched = Watched {
        name: request.name.clone(),
        branch: branch.clone(),
        forge: forge.as_ref().map(|forge| format!("{} {}", forge.kind(), forge.repository())),
    };
    let look = Look { team, forge: forge.as_deref(), name: &request.name, branch: &branch };
    // The first look must read everything: a forge that cannot be read is said now, not later.
    let baseline = look.first()?;
    progress(Progress::Watching { watched: &watched, snapshot: &baseline });
    if forge.is_none() {
        progress(Progress::NoForge { remote: remote.clone() });
    }
    let mut said_no_checks = false;
    let mut say_no_checks = |snapshot: &Snapshot, progress: &mut dyn FnMut(Progress)| {
        if let (Some(number), None, Some(_), false) =
            (snapshot.number, &snapshot.checks, &forge, said_no_checks)
        {
            said_no_checks = true;
            progress(Progress::NoChecks { number });
        }
    };
    say_no_checks(&baseline, progress);
    if let Some(report) = report(&request.name, &branch, &baseline, events::at_start(&baseline)) {
        return Ok(Outcome::Event(Box::new(report)));
    }
    let deadline = started + request.timeout;
    let mut last = baseline.clone();
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(Outcome::TimedOut { watched, last: Box::new(last) });
        }
        std::thread::sleep(request.interval.min(left));
        let now = match look.again(&baseline, &mut *progress) {
            Ok(now) => now,
            Err(gone @ PollError::Team(TeamError::NoBase { .. })) => return Err(gone),
            Err(err) => {
                progress(Progress::Trouble(err.to_string()));
                continue;
            }
        };
        say_no_checks(&now, progress);
        if let Some(report) = report(&request.name, &branch, &now, events::between(&baseline, &now)) {
            return Ok(Outcome::Event(Box::new(report)));
        }
        progress(Progress::Looked { elapsed: started.elapsed(), snapshot: &now });
        last = now;
    }
}

fn report(name: &str, branch: &str, now: &Snapshot, mut events: Vec<Event>) -> Option<Report> {
    if events.is_empty() {
        return None;
    }
    let event = events.remove(0);
    let change = now.number.map(|number| ChangeRef { number, url: now.url.clone() });
    let next = event.next_step(name);
    Some(Report { event, name: name.to_owned(), branch: branch.to_owned(), change, next, also: events })
}

/// The branch `name` stands for: a wt worktree's (a team's name, a run worktree's folder, or
/// the branch of one), or a run's branch git-spice tracks without a worktree.
fn branch_of(team: &TeamRepo, graph: &Graph, name: &str) -> Result<String, PollError> {
    let not_in_stack = |path: PathBuf| PollError::Team(TeamError::NoBase { name: name.to_owned(), path });
    match view::find(team, graph, name) {
        Ok(entry) => {
            let path = entry.worktree.clone().unwrap_or_else(|| team.repo().root().to_owned());
            match entry.branch {
                Some(branch) if graph.is_tracked(&branch) => Ok(branch),
                _ => Err(not_in_stack(path)),
            }
        }
        Err(_) if name::run_of(name).is_some() && graph.is_tracked(name) => Ok(name.to_owned()),
        Err(err) => Err(err.into()),
    }
}

/// The poll's lock; inside `wt sandbox` (which may not write there) through a read-only
/// descriptor of the file `wt create` made.
fn hold(layout: &StateLayout, name: &str, branch: &str) -> Result<FileLock, PollError> {
    let path = layout.team_poll_lock(branch);
    let busy = |holder: String| PollError::Busy { branch: branch.to_owned(), holder };
    let lock = match FileLock::try_acquire(&path) {
        Err(LockError::Io { source, .. }) if source.kind() == std::io::ErrorKind::PermissionDenied => {
            match FileLock::try_acquire_read_only(&path) {
                Err(LockError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                    return Err(PollError::NoLockFile { name: name.to_owned(), path });
                }
                other => other,
            }
        }
        other => other,
    };
    lock.map_err(|err| match err {
        LockError::Held { holder, .. } => busy(holder),
        other => PollError::Team(TeamError::Lock(other)),
    })
}

/// One look at the branch.
struct Look<'a> {
    team: &'a TeamRepo,
    forge: Option<&'a dyn Forge>,
    name: &'a str,
    branch: &'a str,
}

/// What the forge said in one look: the comments and the checks, each as it came.
type ForgeReads = (Result<Vec<Comment>, ForgeError>, Result<Option<Vec<Check>>, ForgeError>);

impl Look<'_> {
    /// The first look, which must read everything: a forge that cannot be read is said now.
    fn first(&self) -> Result<Snapshot, PollError> {
        let (mut snapshot, reads) = self.take()?;
        if let Some((comments, checks)) = reads {
            snapshot.comments = Some(comments?);
            snapshot.checks = checks?;
        }
        Ok(snapshot)
    }

    /// A later look: what the forge could not give is taken from `baseline` (so it counts as
    /// unchanged) and said through `progress`.
    fn again(&self, baseline: &Snapshot, progress: &mut dyn FnMut(Progress)) -> Result<Snapshot, PollError> {
        let (mut snapshot, reads) = self.take()?;
        let number = snapshot.number.unwrap_or_default();
        if let Some((comments, checks)) = reads {
            snapshot.comments = comments.map(Some).unwrap_or_else(|err| {
                progress(Progress::Trouble(format!("reading the comments of #{number}: {err}")));
                baseline.comments.clone()
            });
            snapshot.checks = checks.unwrap_or_else(|err| {
                progress(Progress::Trouble(format!("reading the checks of #{number}: {err}")));
                baseline.checks.clone()
            });
        }
        Ok(snapshot)
    }

    /// The branch now from git-spice and git; what the forge says comes apart (None: no forge
    /// to ask, no change request, or one that is merged and has nothing more to say).
    fn take(&self) -> Result<(Snapshot, Option<ForgeReads>), PollError> {
        let graph = self.team.graph_with_changes()?;
        let Some(logged) = graph.branch(self.branch) else { return Err(self.gone()) };
        let base = graph.base(self.branch).map(str::to_owned);
        let change = logged.change.clone();
        let status = |branch: &str| graph.change(branch).and_then(|change| change.status);
        let snapshot = Snapshot {
            base_tip: match &base {
                Some(base) => self.team.repo().branch_commit(base).map_err(TeamError::from)?,
                None => None,
            },
            base_status: base.as_deref().and_then(status),
            needs_restack: graph.needs_restack(self.branch),
            number: change.as_ref().and_then(|change| change.number()),
            url: change.as_ref().and_then(|change| change.web_url().map(str::to_owned)),
            status: change.as_ref().and_then(|change| change.status),
            unresolved: change.as_ref().and_then(|change| change.comments.map(|c| c.unresolved)),
            base,
            comments: None,
            checks: None,
        };
        let reads = match (self.forge, snapshot.number) {
            (Some(forge), Some(number)) if snapshot.status != Some(ChangeStatus::Merged) => {
                Some((forge.comments(number), forge.checks(number)))
            }
            _ => None,
        };
        Ok((snapshot, reads))
    }

    /// The branch left git-spice's stack while the poll watched it.
    fn gone(&self) -> PollError {
        let path = self.team.worktree_path(self.name);
        let path = if path.exists() { path } else { self.team.repo().root().to_owned() };
        PollError::Team(TeamError::NoBase { name: self.branch.to_owned(), path })
    }
}
