//! The generated agent of a team worktree (`.claude/agents/wt-<name>.md` in the main checkout,
//! rendered by `agent::definition`): what `wt create` writes and `wt cleanup` removes. Claude
//! Code's PreToolUse hook of the plugin routes `agent_type` `wt-<name>` to the worktree
//! (`plugin::route`), so the guard runs whether or not the file's own hook fires.

use std::path::Path;

use super::TeamError;
use crate::agent::definition;
pub use crate::agent::definition::AgentSpec;
use crate::guard::quote;

/// The agent of the team worktree `name` at `worktree` (`verify`: its `wt create --verify`).
pub fn team_agent(name: &str, worktree: &Path, wt: &Path, verify: Option<&str>) -> AgentSpec {
    let agent = super::name::agent_name(name);
    let wt_word = quote(&wt.display().to_string());
    let root = worktree.display().to_string();
    let guard = format!("{wt_word} guard --root {} --branch {} --sandbox-wrap", quote(&root), quote(name));
    let command = |args: &str| format!("{wt_word} {args} {name}");
    AgentSpec {
        description: format!(
            "Works only in the wt team worktree {root} on branch {name}. Spawn it as subagent_type {agent}, and \
             give a teammate the name {agent}: wt's guard finds the worktree by that name."
        ),
        guard,
        origin: format!(
            "`wt create {name}` made it, `wt cleanup {name}` removes it; do not edit, wt rewrites it"
        ),
        intro: format!(
            "You work in the git worktree {root} on branch `{name}`, which is already checked out there and \
             stacked with git-spice on another branch, its base. The task comes from whoever spawned you."
        ),
        rules: crate::agent::team_worker_rules(&root, name, &wt_word, verify),
        commands: vec![
            (command("info"), "its base, dependents, change request and whether it needs a rebase".into()),
            (command("diff"), "your branch's changes since its base (`--stat` for the summary)".into()),
            (command("rebase"), "moves the branch onto its base when the base changed".into()),
            (command("push"), "pushes the branch; never over someone else's push".into()),
            (command("pr"), "opens or updates its draft change request".into()),
            (command("poll"), "waits for the next CI, review or base event; run it in the background".into()),
        ],
        name: agent,
    }
}

/// Whether the file at `path` is one wt generated (None: there is no file).
pub fn is_generated(path: &Path) -> Result<Option<bool>, TeamError> {
    definition::is_generated(path).map_err(TeamError::io(format!("reading {}", path.display())))
}

/// Writes the agent file (atomically: a session reading agents never sees half of one).
pub fn write(path: &Path, spec: &AgentSpec) -> Result<(), TeamError> {
    definition::write(path, spec).map_err(TeamError::io(format!("writing {}", path.display())))
}

/// Removes the agent file if wt generated it; returns whether it removed one.
pub fn remove(path: &Path) -> Result<bool, TeamError> {
    definition::remove(path).map_err(TeamError::io(format!("removing {}", path.display())))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::agent::definition::render;

    fn spec() -> AgentSpec {
        team_agent(
            "auth",
            Path::new("/r/.worktrees/auth"),
            Path::new("/opt/bin/spectacular-wt"),
            Some("cargo test"),
        )
    }

    #[test]
    fn the_frontmatter_names_the_agent_and_guards_its_worktree() {
        let text = render(&spec());
        let front = text.split("---\n").nth(1).unwrap();
        assert!(front.starts_with("name: \"wt-auth\"\n"), "{front}");
        assert!(front.contains("skills:\n  - worktree-worker\n"), "{front}");
        assert!(front.contains("tools: Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, Bash\n"));
        assert!(
            front.contains(
                r#"command: "'/opt/bin/spectacular-wt' guard --root '/r/.worktrees/auth' --branch 'auth' --sandbox-wrap""#
            ),
            "{front}"
        );
        assert!(front.contains(r#"matcher: "Edit|Write|MultiEdit|NotebookEdit|Bash""#), "{front}");
        assert!(
            front.contains("timeout: 10\n          onFailure: block\n"),
            "a failing guard blocks: {front}"
        );
    }

    #[test]
    fn the_body_holds_the_worktree_the_rules_and_the_commands() {
        let text = render(&spec());
        let body = text.splitn(3, "---\n").nth(2).unwrap();
        assert!(body.contains("/r/.worktrees/auth on branch `auth`"), "{body}");
        let wt = "'/opt/bin/spectacular-wt'";
        let rules = crate::agent::team_worker_rules("/r/.worktrees/auth", "auth", wt, Some("cargo test"));
        for (number, rule) in rules.iter().enumerate() {
            assert!(body.contains(&format!("{}. {rule}\n", number + 1)), "rule {number} missing: {body}");
        }
        assert!(body.contains("`cargo test` must pass"), "{body}");
        for command in ["info", "diff", "rebase", "push", "pr", "poll"] {
            assert!(
                body.contains(&format!("- `'/opt/bin/spectacular-wt' {command} auth`: ")),
                "{command}: {body}"
            );
        }
    }

    #[test]
    fn odd_paths_stay_one_shell_word_and_valid_yaml_strings() {
        let odd = team_agent("a", Path::new("/r/it's \"here\"/.worktrees/a"), Path::new("/bin/wt"), None);
        let text = render(&odd);
        let line = text.lines().find(|l| l.trim_start().starts_with("command:")).unwrap();
        let value: String = serde_json::from_str(line.trim_start().trim_start_matches("command: ")).unwrap();
        assert!(value.contains(r#"--root '/r/it'\''s "here"/.worktrees/a'"#), "{value}");
    }

    #[test]
    fn only_generated_files_are_removed() {
        let temp = tempfile::tempdir().unwrap();
        let (ours, theirs) = (temp.path().join("wt-a.md"), temp.path().join("wt-b.md"));
        write(&ours, &spec()).unwrap();
        std::fs::write(&theirs, "---\nname: wt-b\n---\nmine\n").unwrap();
        assert_eq!(is_generated(&ours).unwrap(), Some(true));
        assert_eq!(is_generated(&theirs).unwrap(), Some(false));
        assert_eq!(is_generated(&temp.path().join("none.md")).unwrap(), None);
        assert!(remove(&ours).unwrap() && !ours.exists());
        assert!(!remove(&theirs).unwrap() && theirs.exists());
    }
}
