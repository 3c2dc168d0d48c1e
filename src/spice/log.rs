//! `git-spice log short --all [--cr-status --cr-comments] --json`: one JSON object per line, one
//! per tracked branch and the trunk (the one without `down`). Every field but `name` is optional:
//! git-spice leaves out what is empty or unknown (`worktree` only for a branch checked out in
//! another worktree than the one git-spice ran in; `change.status` only with `--cr-status` and a
//! forge that answered; `change.comments` only with `--cr-comments`).

use serde::Deserialize;

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct LoggedBranch {
    pub name: String,
    #[serde(default)]
    pub current: bool,
    pub worktree: Option<String>,
    pub down: Option<Down>,
    #[serde(default)]
    pub ups: Vec<Up>,
    pub change: Option<Change>,
    /// How the branch compares with its pushed copy (only for a branch pushed before).
    pub push: Option<Push>,
}

/// The change request of a submitted branch.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Change {
    /// The forge's id as git-spice prints it: `#12` (GitHub, shamhub), `!12` (GitLab).
    pub id: String,
    /// Its web address; without a forge to ask, git-spice repeats the id here.
    pub url: Option<String>,
    /// `open`, `closed` or `merged`: only with `--cr-status`, when the forge answered.
    pub status: Option<ChangeStatus>,
    /// Review-thread comments (resolvable ones only): only with `--cr-comments`.
    pub comments: Option<CommentCounts>,
}

impl Change {
    /// The number in the id (`#12` → 12).
    pub fn number(&self) -> Option<u64> {
        self.id.trim_start_matches(|c: char| !c.is_ascii_digit()).parse().ok()
    }

    /// The web address, when git-spice gave one (not the id it repeats without a forge).
    pub fn web_url(&self) -> Option<&str> {
        self.url.as_deref().filter(|url| url.contains("://"))
    }
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ChangeStatus {
    Open,
    Closed,
    Merged,
}

#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, serde::Serialize)]
pub struct CommentCounts {
    pub total: u32,
    pub resolved: u32,
    pub unresolved: u32,
}

/// Commits the branch has that its remote copy lacks (`ahead`) and the reverse (`behind`).
#[derive(Debug, Clone, Copy, Deserialize, PartialEq, Eq, serde::Serialize)]
pub struct Push {
    pub ahead: u32,
    pub behind: u32,
    #[serde(default, rename = "needsPush")]
    pub needs_push: bool,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Down {
    pub name: String,
    #[serde(default, rename = "needsRestack")]
    pub needs_restack: bool,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Up {
    pub name: String,
}

pub fn parse(stdout: &str) -> Result<Vec<LoggedBranch>, String> {
    stdout
        .lines()
        .filter(|line| !line.trim().is_empty())
        .map(|line| serde_json::from_str(line).map_err(|err| format!("{err} in {line:?}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_parse_with_optional_fields() {
        let out = "{\"name\":\"b\",\"down\":{\"name\":\"main\",\"needsRestack\":true},\"worktree\":\"/w\"}\n\
                   {\"name\":\"main\",\"current\":true,\"ups\":[{\"name\":\"b\"}],\"change\":{\"id\":\"#1\"}}\n";
        let branches = parse(out).unwrap();
        assert_eq!(branches[0].down.as_ref().map(|d| d.needs_restack), Some(true));
        assert!(branches[1].current);
        assert_eq!(branches[1].ups[0].name, "b");
    }

    /// As git-spice v0.31.2 prints a submitted branch with `--cr-status --cr-comments`
    /// (FINDINGS §1a), and without a forge to ask.
    #[test]
    fn change_requests_parse_with_status_comments_and_push_state() {
        let out = r##"{"name":"b","down":{"name":"a"},"ups":[{"name":"c"}],"change":{"id":"#2","url":"http://127.0.0.1:44861/alice/app/change/2","status":"merged","comments":{"total":2,"resolved":1,"unresolved":1}},"push":{"ahead":1,"behind":0,"needsPush":true},"worktree":"/r/.worktrees/b"}
{"name":"c","down":{"name":"b"},"change":{"id":"#3","url":"#3"},"push":{"ahead":0,"behind":0}}"##;
        let branches = parse(out).unwrap();
        let change = branches[0].change.as_ref().unwrap();
        assert_eq!((change.number(), change.status), (Some(2), Some(ChangeStatus::Merged)));
        assert_eq!(change.web_url(), Some("http://127.0.0.1:44861/alice/app/change/2"));
        assert_eq!(change.comments.map(|c| c.unresolved), Some(1));
        assert_eq!(branches[0].push, Some(Push { ahead: 1, behind: 0, needs_push: true }));
        let offline = branches[1].change.as_ref().unwrap();
        assert_eq!((offline.number(), offline.status, offline.web_url()), (Some(3), None, None));
        assert!(!branches[1].push.unwrap().needs_push);
    }
}
