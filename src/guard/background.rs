//! Commands a worker must start in the background: `wt poll` waits — up to its `--timeout`,
//! twenty minutes by default — for CI, a review or the base to change, so run in the foreground
//! it holds the worker's turn for all that time. Claude Code runs a Bash call in the background
//! when its input says `run_in_background: true`; the guard refuses a `wt poll` without it.
//!
//! Found where the shell would run it: a simple command (after `env`, `nohup`, `timeout`, …
//! and their options) whose program is `wt` or `spectacular-wt` with the subcommand `poll`,
//! also inside `( )`, `{ }`, `$( )` and a shell's `-c` script. Not a containment rule: a poll
//! hidden from this reading only costs the worker its own time.

use super::shell::{self, Node, Script, SimpleCommand};
use super::shells::is_shell;

/// Programs that run the command after their own words.
const WRAPPERS: &[&str] = &["env", "nohup", "timeout", "nice", "time", "command", "exec", "setsid", "stdbuf"];

/// How deep `-c` scripts and substitutions are followed.
const MAX_DEPTH: usize = 8;

/// Why the Bash call with `tool_input` running `command` is refused: it runs `wt poll` in the
/// foreground. None: it may go on to the policy.
pub fn refusal(tool_input: &serde_json::Value, command: &str) -> Option<String> {
    if in_background(tool_input) {
        return None;
    }
    let poll = wt_poll(command)?;
    Some(format!(
        "`{poll}` waits (up to its --timeout, 20 minutes by default) for CI, a review or the base to change, so it \
         must not hold your turn: run the same command with the Bash tool's run_in_background: true, and act on \
         the event it prints when it ends"
    ))
}

/// Whether a Bash tool input runs its command in the background (`run_in_background`, which
/// Claude Code also takes as the string "true").
fn in_background(tool_input: &serde_json::Value) -> bool {
    match tool_input.get("run_in_background") {
        Some(serde_json::Value::Bool(yes)) => *yes,
        Some(serde_json::Value::String(text)) => text.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

/// The `wt poll …` that `command` runs, as written; None when it runs none.
pub fn wt_poll(command: &str) -> Option<String> {
    in_text(command, 0)
}

fn in_text(text: &str, depth: usize) -> Option<String> {
    let script = shell::parse(text).ok()?;
    in_script(&script, depth)
}

fn in_script(script: &Script, depth: usize) -> Option<String> {
    if depth > MAX_DEPTH {
        return None;
    }
    script.items.iter().find_map(|item| match &item.node {
        Node::Command(command) => in_command(command, depth),
        Node::Subshell(inner) | Node::Group(inner) => in_script(inner, depth + 1),
    })
}

fn in_command(command: &SimpleCommand, depth: usize) -> Option<String> {
    let nested =
        command.words.iter().flat_map(|word| word.substitutions()).find_map(|s| in_script(s, depth + 1));
    if nested.is_some() {
        return nested;
    }
    let words: Vec<Option<String>> = command.words.iter().map(|word| word.literal()).collect();
    for (index, word) in words.iter().enumerate() {
        let word = word.as_deref()?;
        let name = word.rsplit('/').next().unwrap_or(word);
        if name == "wt" || name == "spectacular-wt" {
            let rest = &words[index + 1..];
            return (subcommand(rest) == Some("poll")).then(|| shown(&words[index..]));
        }
        if is_shell(name) {
            let script =
                words.iter().skip(index + 1).position(|w| w.as_deref().is_some_and(is_command_flag))?;
            return in_text(words.get(index + 2 + script)?.as_deref()?, depth + 1);
        }
        let wrapper_word =
            WRAPPERS.contains(&name) || word.starts_with('-') || word.contains('=') || is_amount(word);
        if !wrapper_word {
            return None;
        }
    }
    None
}

/// wt's subcommand among `args`: the first word that is not an option (`-C <dir>` takes one).
fn subcommand(args: &[Option<String>]) -> Option<&str> {
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let arg = arg.as_deref()?;
        match arg {
            "-C" => {
                args.next();
            }
            _ if arg.starts_with('-') => {}
            _ => return Some(arg),
        }
    }
    None
}

/// `-c`, or a cluster of a shell's short options that holds it (`-lc`).
fn is_command_flag(word: &str) -> bool {
    word.strip_prefix('-').is_some_and(|flags| !flags.starts_with('-') && flags.contains('c'))
}

/// A number or a duration (`timeout 600`, `timeout 10m`, `nice 5`).
fn is_amount(word: &str) -> bool {
    let digits = word.trim_end_matches(['s', 'm', 'h', 'd']);
    !digits.is_empty() && digits.chars().all(|c| c.is_ascii_digit() || c == '.')
}

fn shown(words: &[Option<String>]) -> String {
    words.iter().map(|word| word.as_deref().unwrap_or("…")).collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wt_poll_is_found_where_the_shell_runs_it() {
        for command in [
            "wt poll api",
            "spectacular-wt poll api --json",
            "'/opt/bin/spectacular-wt' poll api",
            "cd /r/.worktrees/api && wt poll api",
            "wt -C /r poll api",
            "timeout 10m nohup env A=1 wt poll api",
            "bash -lc 'wt poll api --interval 5'",
            "(wt poll api) | tee log",
            "echo $(wt poll api)",
        ] {
            assert!(wt_poll(command).is_some(), "{command}");
        }
        assert_eq!(wt_poll("cd x && wt poll api --json").as_deref(), Some("wt poll api --json"));
    }

    #[test]
    fn other_commands_and_mentions_are_not_a_poll() {
        for command in [
            "wt info api",
            "wt push api",
            "echo wt poll api",
            "git commit -m 'wt poll api'",
            "grep -r 'wt poll' .",
            "wt -C poll info",
            "cargo test",
        ] {
            assert_eq!(wt_poll(command), None, "{command}");
        }
    }

    #[test]
    fn background_is_read_from_the_tool_input() {
        use serde_json::json;
        assert!(in_background(&json!({"command": "x", "run_in_background": true})));
        assert!(in_background(&json!({"command": "x", "run_in_background": "true"})));
        assert!(!in_background(&json!({"command": "x", "run_in_background": false})));
        assert!(!in_background(&json!({"command": "x"})));
    }
}
