//! GitHub, through the GitHub CLI (`gh`, found on PATH when asked, logged in by the user):
//! - comments: `gh api --paginate repos/{o}/{r}/issues/{n}/comments` (the conversation),
//!   `…/pulls/{n}/comments` (review comments on lines of code) and `…/pulls/{n}/reviews` (a
//!   review's own text, when it has one);
//! - checks: `gh pr checks <n> --json name,state,bucket,link,workflow`. gh (cli/cli v2.60) exits
//!   0 with `--json` even when checks failed or are pending, but 1 with "no checks reported"
//!   and nothing on stdout when there are none, 4 when not logged in and 8 for pending checks
//!   without `--json`; so stdout is parsed whenever it parses, whatever the exit (0, 1 or 8),
//!   and the state is decided by gh's `bucket` (research/teams/gh_pr_checks.md).

use serde::Deserialize;
use serde::de::DeserializeOwned;

use super::{Check, CheckState, Comment, Forge, ForgeError};
use crate::process::{Cmd, ExitDescription, Output};

/// gh's exit code when it is not logged in (internal/ghcmd/cmd.go `exitAuth`).
const EXIT_AUTH: i32 = 4;
/// gh's exit code for pending checks (`exitPending`), which an older gh may give with `--json`.
const EXIT_PENDING: i32 = 8;

pub struct GitHub {
    /// `github.com`, or a GitHub Enterprise host.
    host: String,
    owner: String,
    name: String,
}

#[derive(Deserialize)]
struct RawComment {
    id: u64,
    #[serde(default)]
    body: Option<String>,
    /// Review comments: the file and line they are on.
    #[serde(default)]
    path: Option<String>,
    #[serde(default)]
    line: Option<u64>,
    /// Reviews: APPROVED, CHANGES_REQUESTED, COMMENTED, …
    #[serde(default)]
    state: Option<String>,
}

#[derive(Deserialize)]
struct RawCheck {
    name: String,
    #[serde(default)]
    bucket: String,
    #[serde(default)]
    link: String,
    #[serde(default)]
    workflow: String,
}

impl GitHub {
    pub fn new(host: String, owner: String, name: String) -> GitHub {
        // `ssh.github.com` (ssh over 443) is github.com to gh.
        let host = if host == "github.com" || host.ends_with(".github.com") {
            "github.com".to_owned()
        } else {
            host
        };
        GitHub { host, owner, name }
    }

    fn gh(&self) -> Result<Cmd, ForgeError> {
        let bin = which::which("gh").map_err(|_| ForgeError::GhMissing)?;
        Ok(Cmd::new(bin).env("GH_PROMPT_DISABLED", "1").env("GH_NO_UPDATE_NOTIFIER", "1"))
    }

    /// `[HOST/]OWNER/REPO`, as `gh -R` takes it.
    fn repo_arg(&self) -> String {
        match self.host.as_str() {
            "github.com" => format!("{}/{}", self.owner, self.name),
            host => format!("{host}/{}/{}", self.owner, self.name),
        }
    }

    /// Every item of the list at `path` (`gh api --paginate` prints one JSON array per page).
    fn list<T: DeserializeOwned>(&self, path: &str) -> Result<Vec<T>, ForgeError> {
        let mut cmd = self.gh()?.args(["api", "--paginate"]);
        if self.host != "github.com" {
            cmd = cmd.args(["--hostname", &self.host]);
        }
        let cmd = cmd.arg(format!("repos/{}/{}/{path}", self.owner, self.name));
        let out = cmd.read_unchecked()?;
        self.check_auth(&out)?;
        if !out.success {
            return Err(failed(&cmd, out));
        }
        let mut items = Vec::new();
        for page in serde_json::Deserializer::from_str(&out.stdout).into_iter::<Vec<T>>() {
            let page =
                page.map_err(|err| ForgeError::Output { command: cmd.display(), detail: err.to_string() })?;
            items.extend(page);
        }
        Ok(items)
    }

    fn check_auth(&self, out: &Output) -> Result<(), ForgeError> {
        if out.status == ExitDescription::Code(EXIT_AUTH) {
            return Err(ForgeError::GhNotLoggedIn {
                host: self.host.clone(),
                stderr: out.stderr.trim().to_owned(),
            });
        }
        Ok(())
    }
}

fn failed(cmd: &Cmd, out: Output) -> ForgeError {
    ForgeError::Command(crate::process::ProcessError::Failed {
        command: cmd.display(),
        status: out.status,
        stderr: out.stderr,
    })
}

impl Forge for GitHub {
    fn kind(&self) -> &'static str {
        "github"
    }

    fn repository(&self) -> String {
        format!("{}/{}", self.owner, self.name)
    }

    fn comments(&self, change: u64) -> Result<Vec<Comment>, ForgeError> {
        let mut comments = Vec::new();
        for raw in self.list::<RawComment>(&format!("issues/{change}/comments"))? {
            comments.push(Comment {
                id: format!("issue-comment-{}", raw.id),
                body: raw.body.unwrap_or_default(),
            });
        }
        for raw in self.list::<RawComment>(&format!("pulls/{change}/comments"))? {
            // A comment on a line means little without the line.
            let place = match (&raw.path, raw.line) {
                (Some(path), Some(line)) => format!("{path}:{line}: "),
                (Some(path), None) => format!("{path}: "),
                _ => String::new(),
            };
            let body = format!("{place}{}", raw.body.unwrap_or_default());
            comments.push(Comment { id: format!("review-comment-{}", raw.id), body });
        }
        for raw in self.list::<RawComment>(&format!("pulls/{change}/reviews"))? {
            let Some(body) = raw.body.filter(|body| !body.trim().is_empty()) else { continue };
            let state = raw.state.unwrap_or_default().to_lowercase().replace('_', " ");
            let body = if state.is_empty() { body } else { format!("review ({state}): {body}") };
            comments.push(Comment { id: format!("review-{}", raw.id), body });
        }
        comments.retain(|comment| !comment.is_navigation());
        Ok(comments)
    }

    fn checks(&self, change: u64) -> Result<Option<Vec<Check>>, ForgeError> {
        let cmd = self.gh()?.args([
            "pr",
            "checks",
            &change.to_string(),
            "--json",
            "name,state,bucket,link,workflow",
        ]);
        let cmd = cmd.args(["-R", &self.repo_arg()]);
        let out = cmd.read_unchecked()?;
        self.check_auth(&out)?;
        if let Ok(raw) = serde_json::from_str::<Vec<RawCheck>>(&out.stdout) {
            return Ok((!raw.is_empty()).then(|| raw.into_iter().map(check).collect()));
        }
        let tolerated = matches!(out.status, ExitDescription::Code(0 | 1 | EXIT_PENDING));
        if out.stdout.trim().is_empty() && out.status == ExitDescription::Code(1) {
            // "no checks reported on the '<branch>' branch": no CI, or none for this commit yet.
            return Ok(None);
        }
        if tolerated && !out.stdout.trim().is_empty() {
            let detail = format!("not a JSON list of checks: {}", out.stdout.trim());
            return Err(ForgeError::Output { command: cmd.display(), detail });
        }
        Err(failed(&cmd, out))
    }
}

fn check(raw: RawCheck) -> Check {
    let state = match raw.bucket.as_str() {
        "pass" | "skipping" => CheckState::Passed,
        // A cancelled check did not pass: the change request is not green.
        "fail" | "cancel" => CheckState::Failed,
        _ => CheckState::Pending,
    };
    let name = if raw.workflow.is_empty() { raw.name } else { format!("{} / {}", raw.workflow, raw.name) };
    Check { name, state, link: Some(raw.link).filter(|link| !link.is_empty()) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buckets_decide_the_state_and_the_workflow_names_the_check() {
        let raw = |bucket: &str, workflow: &str| RawCheck {
            name: "build".into(),
            bucket: bucket.into(),
            link: "https://ci/1".into(),
            workflow: workflow.into(),
        };
        assert_eq!(check(raw("pass", "CI")).name, "CI / build");
        assert_eq!(check(raw("fail", "")).name, "build");
        let states: Vec<CheckState> = ["pass", "skipping", "fail", "cancel", "pending", ""]
            .iter()
            .map(|b| check(raw(b, "")).state)
            .collect();
        use CheckState::*;
        assert_eq!(states, [Passed, Passed, Failed, Failed, Pending, Pending]);
        assert_eq!(check(raw("fail", "")).link.as_deref(), Some("https://ci/1"));
    }

    #[test]
    fn github_over_ssh_443_is_github_com_and_enterprise_hosts_are_named() {
        let gh = GitHub::new("ssh.github.com".into(), "o".into(), "r".into());
        assert_eq!(gh.repo_arg(), "o/r");
        let ghe = GitHub::new("git.corp.example".into(), "o".into(), "r".into());
        assert_eq!(ghe.repo_arg(), "git.corp.example/o/r");
    }
}
