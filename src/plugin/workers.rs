//! The plugin's worker agents, `agents/wt-worker-<k>.md`: a fixed set of slots that `wt step`
//! leases to the tasks it hands out. Claude Code reads agent definitions when a session starts and
//! announces new ones only on a later turn, so agents written for a run mid-session cannot be
//! dispatched in the turn that needs them; the plugin's agents exist from the start. The guard
//! finds a worker's worktree through its slot's lease (`super::leases`).

/// The plugin's name, which namespaces its agents (`spectacular:wt-worker-1`).
const PLUGIN: &str = "spectacular";

/// How many worker agents the plugin ships: the most tasks out at once in one repository.
pub const WORKER_SLOTS: usize = 8;

/// `wt-worker-<slot>`: the agent's name in its file.
pub fn worker_name(slot: usize) -> String {
    format!("wt-worker-{slot}")
}

/// `spectacular:wt-worker-<slot>`: the subagent type the orchestrator dispatches, and the
/// `agent_type` of the worker's hook calls.
pub fn worker_type(slot: usize) -> String {
    format!("{PLUGIN}:{}", worker_name(slot))
}

/// The slot a worker's `agent_type` names (with or without the plugin's namespace); None for
/// any other agent.
pub fn parse_worker_type(agent_type: &str) -> Option<usize> {
    let name = agent_type.strip_prefix(PLUGIN).and_then(|rest| rest.strip_prefix(':')).unwrap_or(agent_type);
    let digits = name.strip_prefix("wt-worker-")?;
    let slot: usize = digits.chars().all(|c| c.is_ascii_digit()).then(|| digits.parse().ok()).flatten()?;
    (1..=WORKER_SLOTS).contains(&slot).then_some(slot)
}

#[cfg(test)]
mod tests {
    use std::fmt::Write;

    use super::*;
    use crate::agent::{team_worker_rules, worker_rules};

    /// The file `agents/wt-worker-<slot>.md` of the plugin.
    fn render_worker(slot: usize) -> String {
        let mut text = String::new();
        let _ = writeln!(text, "---");
        let _ = writeln!(text, "name: {}", worker_name(slot));
        let _ = writeln!(
            text,
            "description: Worker slot {slot} of wt runs. Dispatch it only when `wt step` lists it, with the \
         prompt wt wrote; it implements one task inside that task's git worktree."
        );
        let _ = writeln!(text, "tools: Read, Write, Edit, MultiEdit, NotebookEdit, Glob, Grep, Bash");
        let _ = writeln!(text, "skills:\n  - worktree-worker");
        let _ = writeln!(text, "---\n");
        text.push_str(
            "You implement one task of a wt run. Your prompt names the task, its worktree (an absolute \
         path) and its branch, which is already checked out there.\n\n",
        );
        for (number, rule) in worker_rules("<worktree>", "the task's branch").iter().enumerate() {
            let _ = writeln!(text, "{}. {rule}", number + 1);
        }
        text
    }

    const SKILL: &str = "skills/worktree-worker/SKILL.md";

    /// The skill's sections generated from the rules: (start marker, end marker, rules).
    fn skill_sections() -> [(&'static str, &'static str, Vec<String>); 2] {
        [
            (
                "<!-- The rules: generated from src/agent/rules.rs (SPECTACULAR_BLESS=1 cargo test rewrites them). -->",
                "<!-- End of the rules. -->",
                worker_rules("<worktree>", "your branch"),
            ),
            (
                "<!-- The team rules: generated from src/agent/rules.rs (SPECTACULAR_BLESS=1 cargo test rewrites them). -->",
                "<!-- End of the team rules. -->",
                team_worker_rules("<worktree>", "<name>", "spectacular-wt", None),
            ),
        ]
    }

    /// The skill's text with each generated section as rendered now.
    fn current_skill(text: &str) -> Option<String> {
        let mut text = text.to_owned();
        for (start_marker, end_marker, rules) in skill_sections() {
            let start = text.find(start_marker)?;
            let end = text.find(end_marker)? + end_marker.len();
            let mut section = format!("{start_marker}\n");
            for rule in rules {
                let _ = writeln!(section, "- {rule}");
            }
            section.push_str(end_marker);
            text.replace_range(start..end, &section);
        }
        Some(text)
    }

    #[test]
    fn the_worker_skill_holds_the_rules() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(SKILL);
        let text = std::fs::read_to_string(&path).unwrap();
        let expected = current_skill(&text).unwrap_or_else(|| panic!("{SKILL} has no rules section"));
        if std::env::var_os("SPECTACULAR_BLESS").is_some() {
            std::fs::write(&path, &expected).unwrap();
        }
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            expected,
            "{SKILL} is stale: run SPECTACULAR_BLESS=1 cargo test"
        );
    }

    #[test]
    fn worker_types_round_trip() {
        for slot in 1..=WORKER_SLOTS {
            assert_eq!(parse_worker_type(&worker_type(slot)), Some(slot));
            assert_eq!(parse_worker_type(&worker_name(slot)), Some(slot));
        }
        for other in [
            "general-purpose",
            "wt-worker-0",
            "wt-worker-9",
            "wt-worker-1x",
            "wt-worker-+1",
            "other:wt-worker-1",
            "spectacular:wt-worker-",
        ] {
            assert_eq!(parse_worker_type(other), None, "{other}");
        }
    }

    /// The plugin's agent files are these renders; `SPECTACULAR_BLESS=1` rewrites them.
    #[test]
    fn the_plugins_worker_agents_are_current() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("agents");
        let bless = std::env::var_os("SPECTACULAR_BLESS").is_some();
        let mut expected: Vec<String> = Vec::new();
        for slot in 1..=WORKER_SLOTS {
            let name = format!("{}.md", worker_name(slot));
            let path = dir.join(&name);
            if bless {
                std::fs::create_dir_all(&dir).unwrap();
                std::fs::write(&path, render_worker(slot)).unwrap();
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            assert_eq!(
                text,
                render_worker(slot),
                "agents/{name} is stale: run SPECTACULAR_BLESS=1 cargo test"
            );
            expected.push(name);
        }
        let mut found: Vec<String> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        found.sort();
        expected.sort();
        assert_eq!(found, expected, "agents/ holds only the worker slots");
    }
}
