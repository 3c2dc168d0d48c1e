//! Team worktree names. A name is the worktree's folder (`.worktrees/<name>`), its branch and its
//! agent's name (`wt-<name>`), so it must be all three: `[A-Za-z0-9._-]{1,64}`, a branch name git
//! accepts (`git check-ref-format --branch`), never a run's (a run id, `<runId>-main`,
//! `<runId>-task-…`), whose worktrees and branches share `.worktrees/` and whose id `wt cleanup`
//! takes, and never `worker-<k>`, whose agent `wt-worker-<k>` is one of the plugin's worker slots.

use super::TeamError;
use crate::plan::run_id;

/// The longest name: folder, branch and agent name stay readable.
pub const MAX_LEN: usize = 64;

/// What the generated agent of a team worktree is called: `wt-<name>`.
const AGENT_PREFIX: &str = "wt-";

/// Ok when `name` can name a team worktree; else the problem and how to fix it.
pub fn check(name: &str) -> Result<(), TeamError> {
    problem(name)
        .map_or(Ok(()), |(problem, fix)| Err(TeamError::BadName { name: name.to_owned(), problem, fix }))
}

pub fn is_team_name(name: &str) -> bool {
    problem(name).is_none()
}

/// `wt-<name>`: the generated agent's name, the `subagent_type` a lead spawns, and the name it
/// gives a teammate (a teammate's hook calls carry its name as `agent_type`).
pub fn agent_name(name: &str) -> String {
    format!("{AGENT_PREFIX}{name}")
}

/// The team name an agent's `agent_type` stands for (`wt-<name>`), None for any other agent —
/// a run's generated agents (`wt-<runId>-task-…`) included.
pub fn from_agent_type(agent_type: &str) -> Option<&str> {
    agent_type.strip_prefix(AGENT_PREFIX).filter(|name| is_team_name(name))
}

/// The run id of a run's name (its id, `<runId>-main`, `<runId>-task-…`), else None.
pub fn run_of(name: &str) -> Option<&str> {
    let id = name.get(..6).filter(|id| run_id::is_valid(id))?;
    let rest = &name[6..];
    (rest.is_empty() || rest == "-main" || rest.starts_with("-task-")).then_some(id)
}

fn problem(name: &str) -> Option<(String, String)> {
    let fix = |text: &str| text.to_owned();
    if name.is_empty() {
        return Some(("it is empty".into(), fix("give a name such as `auth-api`")));
    }
    if let Some(bad) = name.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))) {
        return Some((
            format!("it contains {bad:?}; only letters, digits, `.`, `_` and `-` are allowed"),
            format!("use `{}`", suggestion(name)),
        ));
    }
    if name.len() > MAX_LEN {
        return Some((
            format!("it is {} characters long, more than {MAX_LEN}", name.len()),
            fix("shorten it"),
        ));
    }
    if name.starts_with(['-', '.']) {
        return Some(("it starts with `-` or `.`".into(), fix("start it with a letter or digit")));
    }
    if name.ends_with('.') || name.ends_with(".lock") || name.contains("..") || name == "HEAD" {
        return Some((
            "git does not accept it as a branch name (`..`, a trailing `.` or `.lock`, or `HEAD`)".into(),
            fix("rename it, e.g. with `-` instead of the dots"),
        ));
    }
    if let Some(id) = run_of(name) {
        return Some((
            format!(
                "it has the form of run {id}'s worktrees and branches (`<runId>`, `<runId>-main`, `<runId>-task-…`)"
            ),
            format!("pick a name that does not start with six hex digits and a dash, e.g. `team-{name}`"),
        ));
    }
    if let Some(slot) = name.strip_prefix("worker-").filter(|k| k.bytes().all(|b| b.is_ascii_digit())) {
        return Some((
            format!("its agent would be wt-worker-{slot}, the name of the plugin's worker slots"),
            format!("pick another name, e.g. `team-worker-{slot}`"),
        ));
    }
    None
}

/// `name` with every run of characters a name cannot hold replaced by one `-`.
fn suggestion(name: &str) -> String {
    let mut out = String::new();
    for c in name.chars() {
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '_') {
            out.push(c);
        } else if !out.ends_with('-') {
            out.push('-');
        }
    }
    let trimmed = out.trim_matches(['-', '.']).chars().take(MAX_LEN).collect::<String>();
    if trimmed.is_empty() { "team".to_owned() } else { trimmed }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn good_names_pass_and_git_takes_them_as_branches() {
        for name in [
            "a",
            "auth-api",
            "A.b_c-1",
            "x".repeat(MAX_LEN).as_str(),
            "abc12-main",
            "abc1234-main",
            "worker-a",
        ] {
            assert!(is_team_name(name), "{name}");
            assert!(git_accepts(name), "git refuses {name}");
        }
    }

    #[test]
    fn bad_names_say_why_and_how_to_fix_it() {
        let cases = [
            ("", "empty"),
            ("feat/x", "contains '/'"),
            ("a b", "contains ' '"),
            ("é", "contains 'é'"),
            ("-a", "starts with"),
            (".a", "starts with"),
            ("a.", "branch name"),
            ("a.lock", "branch name"),
            ("a..b", "branch name"),
            ("HEAD", "branch name"),
            ("abc123", "run abc123"),
            ("abc123-main", "run abc123"),
            ("abc123-task-1-1", "run abc123"),
            ("abc123-task-2-1-login", "run abc123"),
            ("worker-1", "worker slots"),
            ("worker-12", "worker slots"),
        ];
        for (name, expected) in cases {
            let err = check(name).expect_err(name);
            assert!(err.to_string().contains(expected), "{name}: {err}");
            let TeamError::BadName { fix, .. } = err else { panic!() };
            assert!(!fix.is_empty());
        }
        let long = "x".repeat(MAX_LEN + 1);
        assert!(check(&long).unwrap_err().to_string().contains("more than 64"));
        let TeamError::BadName { fix, .. } = check("feat/login page").unwrap_err() else { panic!() };
        assert_eq!(fix, "use `feat-login-page`");
    }

    /// Every name refused only for git's sake is one git refuses too.
    #[test]
    fn refused_branch_names_are_the_ones_git_refuses() {
        for name in ["a.", "a.lock", "a..b", "HEAD", "-a", ".a"] {
            assert!(!git_accepts(name), "git accepts {name}");
        }
    }

    #[test]
    fn agent_types_name_teams_but_not_runs() {
        assert_eq!(from_agent_type(&agent_name("auth")), Some("auth"));
        assert_eq!(from_agent_type("wt-abc123-task-1-1"), None);
        assert_eq!(from_agent_type("wt-"), None);
        assert_eq!(from_agent_type("general-purpose"), None);
        assert_eq!(from_agent_type("spectacular:wt-worker-1"), None);
        assert_eq!(run_of("abc123-task-1-1"), Some("abc123"));
        assert_eq!(run_of("abc123-other"), None);
    }

    fn git_accepts(name: &str) -> bool {
        crate::process::Cmd::new("git").args(["check-ref-format", "--branch", name]).read().is_ok()
    }
}
