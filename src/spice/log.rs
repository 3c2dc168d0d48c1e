//! `git-spice log short --all --json`: one JSON object per line, one per tracked branch and trunk.

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
}

/// The change request of a submitted branch.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct Change {
    pub id: String,
    pub url: Option<String>,
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
}
