//! What a change request's forge knows and git-spice does not hand wt: the comments' bodies and
//! the CI checks. git-spice gives the rest (each change request's number, URL, state and count of
//! unresolved review threads, `spice::Spice::log_all_with_changes`); this module only adds those
//! two reads, behind the [`Forge`] trait, for the forges wt can ask:
//!
//! - shamhub, git-spice's offline forge (tests): its REST API (`shamhub.rs`);
//! - GitHub, through the GitHub CLI `gh` (`github.rs`).
//!
//! The forge is chosen as git-spice chooses it (`remote.go`, `forge/registry.go`, v0.31.2): the
//! forge `spice.forge.kind` names, else the one whose web URL's host (and port, when it names
//! one) the remote's URL matches — shamhub's from `SHAMHUB_URL`, GitHub's from `GITHUB_URL` or
//! `https://github.com`. Any other remote has no forge here ([`for_remote`] answers None), and the
//! caller watches what git-spice gives.
//!
//! Reads only: nothing here changes a change request.

mod github;
mod remote;
mod shamhub;

use serde::Serialize;

pub use remote::RemoteUrl;

use crate::error_kind::ErrorKind;
use crate::git::{GitError, Repo};
use crate::process::ProcessError;

/// The marker of the navigation comment git-spice posts on each change request of a stack: not a
/// review, so never reported as one.
pub const NAVIGATION_MARKER: &str = "<!-- gs:navigation comment -->";

/// One comment on a change request (or a review's or review comment's body on GitHub).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Comment {
    /// Unique on its change request (GitHub's kinds of comments are told apart by a prefix).
    pub id: String,
    pub body: String,
}

impl Comment {
    pub fn is_navigation(&self) -> bool {
        self.body.contains(NAVIGATION_MARKER)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CheckState {
    Pending,
    Passed,
    Failed,
}

/// One CI check of a change request.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Check {
    pub name: String,
    pub state: CheckState,
    /// Where to read its result, when the forge gives one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<String>,
}

/// A forge's reads that git-spice does not offer.
pub trait Forge {
    /// `shamhub`, `github`.
    fn kind(&self) -> &'static str;

    /// `owner/name` of the repository change requests are opened on.
    fn repository(&self) -> String;

    /// Every comment on change request `change` but git-spice's navigation comments, oldest
    /// first.
    fn comments(&self, change: u64) -> Result<Vec<Comment>, ForgeError>;

    /// The CI checks of change request `change`; None when there are none to read (no CI, or
    /// none reported yet for its latest commit).
    fn checks(&self, change: u64) -> Result<Option<Vec<Check>>, ForgeError>;
}

#[derive(Debug, thiserror::Error)]
pub enum ForgeError {
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("spice.forge.kind is `{kind}`, a forge wt cannot read comments or checks from")]
    UnknownKind { kind: String },
    #[error("the remote {url} names no repository (owner/name) on {forge}")]
    NoRepository { url: String, forge: &'static str },
    #[error("{variable} is not set, so wt cannot reach shamhub")]
    NotConfigured { variable: &'static str },
    #[error("asking shamhub ({url}): {detail}")]
    Http { url: String, detail: String },
    #[error("the GitHub CLI `gh` is not installed; wt reads comments and CI checks on GitHub with it")]
    GhMissing,
    #[error("gh is not logged in to {host}: {stderr}")]
    GhNotLoggedIn { host: String, stderr: String },
    #[error("{0}")]
    Command(#[from] ProcessError),
    #[error("unexpected output from `{command}`: {detail}")]
    Output { command: String, detail: String },
}

impl ForgeError {
    pub fn explain(&self) -> (ErrorKind, Option<String>) {
        match self {
            ForgeError::UnknownKind { .. } => (
                ErrorKind::Environment,
                Some("wt reads github and shamhub; unset it (`git config --unset spice.forge.kind`) or use one of those".into()),
            ),
            ForgeError::NoRepository { .. } => (
                ErrorKind::Environment,
                Some("point the remote git-spice uses at a repository URL (`git remote -v` shows it)".into()),
            ),
            ForgeError::NotConfigured { variable } => (
                ErrorKind::Environment,
                Some(format!("set {variable} as for git-spice (shamhub-serve --env-file writes them)")),
            ),
            ForgeError::GhMissing => (
                ErrorKind::Environment,
                Some("install the GitHub CLI (https://cli.github.com), then `gh auth login`".into()),
            ),
            ForgeError::GhNotLoggedIn { host, .. } => {
                (ErrorKind::Environment, Some(format!("log in once with `gh auth login --hostname {host}`")))
            }
            ForgeError::Git(_) | ForgeError::Http { .. } | ForgeError::Command(_) | ForgeError::Output { .. } => {
                (ErrorKind::Internal, None)
            }
        }
    }
}

/// How git-spice is told where the forges are: the variables it reads, read once.
#[derive(Debug, Clone, Default)]
pub struct ForgeEnv {
    pub shamhub_url: Option<String>,
    pub shamhub_api_url: Option<String>,
    pub shamhub_username: Option<String>,
    pub github_url: Option<String>,
}

impl ForgeEnv {
    pub fn from_process() -> ForgeEnv {
        let var = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        ForgeEnv {
            shamhub_url: var("SHAMHUB_URL"),
            shamhub_api_url: var("SHAMHUB_API_URL"),
            shamhub_username: var("SHAMHUB_USERNAME"),
            github_url: var("GITHUB_URL"),
        }
    }
}

const GITHUB_DEFAULT_URL: &str = "https://github.com";

/// The forge of `remote` (a remote of `repo`), chosen as git-spice chooses it; None when the
/// remote has no URL or no forge wt reads.
pub fn for_remote(repo: &Repo, remote: &str) -> Result<Option<Box<dyn Forge>>, ForgeError> {
    let Some(url) = repo.config_value(&format!("remote.{remote}.url"))? else { return Ok(None) };
    let kind = repo.config_value("spice.forge.kind")?;
    select(&url, kind.as_deref(), &ForgeEnv::from_process())
}

/// The forge for the remote URL `url`: the one `kind` names, else the first whose web URL it
/// matches.
pub fn select(url: &str, kind: Option<&str>, env: &ForgeEnv) -> Result<Option<Box<dyn Forge>>, ForgeError> {
    let Some(remote) = RemoteUrl::parse(url) else { return Ok(None) };
    let github_base = env.github_url.as_deref().unwrap_or(GITHUB_DEFAULT_URL);
    let kind = match kind.filter(|kind| !kind.is_empty()) {
        Some("shamhub") => "shamhub",
        Some("github") => "github",
        Some(other) => return Err(ForgeError::UnknownKind { kind: other.to_owned() }),
        None if env.shamhub_url.as_deref().is_some_and(|base| remote.matches(base)) => "shamhub",
        None if remote.matches(github_base) => "github",
        None => return Ok(None),
    };
    let (owner, name) = remote
        .owner_and_name()
        .ok_or_else(|| ForgeError::NoRepository { url: url.to_owned(), forge: kind })?;
    Ok(Some(match kind {
        "shamhub" => Box::new(shamhub::Shamhub::new(env, owner, name)?),
        _ => Box::new(github::GitHub::new(remote.host, owner, name)),
    }))
}

/// The state a set of checks adds up to: failed as soon as one failed, passed when all ended and
/// none failed, else pending; None for no checks.
pub fn overall(checks: &[Check]) -> Option<CheckState> {
    if checks.is_empty() {
        None
    } else if checks.iter().any(|check| check.state == CheckState::Failed) {
        Some(CheckState::Failed)
    } else if checks.iter().any(|check| check.state == CheckState::Pending) {
        Some(CheckState::Pending)
    } else {
        Some(CheckState::Passed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env() -> ForgeEnv {
        ForgeEnv {
            shamhub_url: Some("http://127.0.0.1:37015".into()),
            shamhub_api_url: Some("http://127.0.0.1:46109".into()),
            shamhub_username: Some("alice".into()),
            github_url: None,
        }
    }

    fn kind_of(url: &str, kind: Option<&str>, env: &ForgeEnv) -> Option<(&'static str, String)> {
        select(url, kind, env).unwrap().map(|forge| (forge.kind(), forge.repository()))
    }

    #[test]
    fn the_forge_is_picked_as_git_spice_picks_it() {
        let shamhub = Some(("shamhub", "alice/app".to_owned()));
        assert_eq!(kind_of("http://127.0.0.1:37015/alice/app.git", None, &env()), shamhub);
        let github = Some(("github", "octo/cat".to_owned()));
        assert_eq!(kind_of("git@github.com:octo/cat.git", None, &env()), github);
        assert_eq!(kind_of("https://gitlab.com/octo/cat.git", None, &env()), None, "no forge wt reads");
        assert_eq!(kind_of("/srv/cat.git", None, &env()), None);
        assert_eq!(kind_of("http://127.0.0.1:5000/alice/app.git", None, &env()), None, "another port");
        let enterprise = ForgeEnv { github_url: Some("https://git.corp.example".into()), ..env() };
        assert_eq!(kind_of("git@git.corp.example:octo/cat.git", None, &enterprise).unwrap().0, "github");
        assert_eq!(
            kind_of("git@github.com:octo/cat.git", None, &enterprise),
            None,
            "GITHUB_URL replaces github.com"
        );
        assert_eq!(
            kind_of("https://alias/octo/cat", Some("github"), &env()),
            github,
            "spice.forge.kind wins"
        );
        assert!(matches!(
            select("https://x/o/r", Some("gitlab"), &env()),
            Err(ForgeError::UnknownKind { .. })
        ));
        let no_api = ForgeEnv { shamhub_api_url: None, ..env() };
        assert!(matches!(
            select("http://127.0.0.1:37015/alice/app.git", None, &no_api),
            Err(ForgeError::NotConfigured { variable: "SHAMHUB_API_URL" })
        ));
    }

    #[test]
    fn checks_add_up_to_failed_as_soon_as_one_fails() {
        let check = |state| Check { name: "x".into(), state, link: None };
        use CheckState::*;
        assert_eq!(overall(&[]), None);
        assert_eq!(overall(&[check(Passed), check(Pending)]), Some(Pending));
        assert_eq!(overall(&[check(Pending), check(Failed)]), Some(Failed));
        assert_eq!(overall(&[check(Passed), check(Passed)]), Some(Passed));
    }
}
