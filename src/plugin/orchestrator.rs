//! The orchestrating session's own calls: the plugin approves `wt step …` and `wt status …` run
//! as one plain command, so `/spectacular:execute` can carry a run through every turn (the
//! command's `allowed-tools` only cover the turn it starts in) without a prompt — and a headless
//! `claude -p` session is not refused. Anything more than that one command gets no decision.

use crate::guard::shell::{self, Node, RedirectKind};
use crate::guard::{Decision, HookInput};

/// The names wt is installed under (the plugin's commands use `spectacular-wt`).
const PROGRAMS: &[&str] = &["wt", "spectacular-wt"];

/// The `wt` subcommands an orchestrator runs.
const ORCHESTRATOR_COMMANDS: &[&str] = &["step", "status"];

pub fn approve(input: &HookInput) -> Decision {
    let command = input.tool_input.get("command").and_then(|v| v.as_str());
    match (input.tool_name.as_deref(), input.agent_type.as_deref(), command) {
        (Some("Bash"), None, Some(command)) if is_orchestrator_command(command) => Decision::Allow(
            "the spectacular plugin runs its own `wt step` and `wt status` for /spectacular:execute".into(),
        ),
        _ => Decision::None,
    }
}

fn is_orchestrator_command(command: &str) -> bool {
    let Ok(script) = shell::parse(command) else { return false };
    let [item] = script.items.as_slice() else { return false };
    let Node::Command(simple) = &item.node else { return false };
    let words: Option<Vec<String>> = simple.words.iter().map(|w| w.literal()).collect();
    let Some(words) = words else { return false };
    simple.assignments.is_empty()
        && !item.isolated
        && simple.redirects.iter().all(|r| r.kind == RedirectKind::Duplicate)
        && words.first().is_some_and(|w| PROGRAMS.contains(&w.as_str()))
        && words.get(1).is_some_and(|w| ORCHESTRATOR_COMMANDS.contains(&w.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn input(command: &str, agent_type: Option<&str>) -> HookInput {
        HookInput {
            cwd: Some("/r".into()),
            tool_name: Some("Bash".into()),
            tool_input: serde_json::json!({ "command": command }),
            agent_type: agent_type.map(str::to_owned),
        }
    }

    #[test]
    fn approves_one_plain_wt_step_or_status_of_the_main_session() {
        for command in [
            "wt step plan.toml --json",
            "wt step c0e0e0 --json 2>&1",
            "wt status --json",
            "spectacular-wt step c0e0e0 --json",
            "spectacular-wt step c0e0e0 --json --release spectacular:wt-worker-2",
            "spectacular-wt step c0e0e0 --json --release all",
        ] {
            assert!(matches!(approve(&input(command, None)), Decision::Allow(_)), "{command}");
        }
    }

    #[test]
    fn anything_more_gets_no_decision() {
        for command in [
            "wt step x --json && rm -rf /",
            "wt step x; git push",
            "wt step x > /etc/passwd",
            "wt step $(rm -rf /)",
            "WT=1 wt step x",
            "wt cleanup c0e0e0",
            "wt step x | sh",
            "(wt step x)",
            "wt",
            "wtx step",
            "spectacular-wtx step",
        ] {
            assert!(matches!(approve(&input(command, None)), Decision::None), "{command}");
        }
        assert!(matches!(approve(&input("wt step x --json", Some("general-purpose"))), Decision::None));
    }
}
