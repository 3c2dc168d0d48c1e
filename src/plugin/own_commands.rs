//! A team worktree's agent running wt on its own worktree. Every other Bash call of the agent
//! runs inside `wt sandbox`, where `wt push`, `pr`, `rebase` (and `poll`) cannot work: they write
//! the remote, git-spice's state and wt's state, all outside the worktree. So exactly these run
//! as they are, unwrapped:
//!
//! `<wt> <push|pr|rebase|info|diff|poll> <its own name> [known flags]`, `<wt> list [--stack]
//! [--json]` and `<wt> stack [--json]` — where `<wt>` is `wt`, `spectacular-wt` or the absolute
//! path of this very binary (what the generated agent is told to call) — optionally after one
//! `cd <its worktree> &&` (the agent's rules begin every command with it). Every word must be
//! plain (no variable, substitution or glob), with no assignment, no redirection and nothing
//! before or after it; anything else gets no say here and goes the normal way.
//!
//! What runs is this wt by its absolute path, in the main checkout: the call is rewritten to
//! `cd <main checkout> && '<this wt>' <command> <its words>`, never `wt` looked up on PATH —
//! where a relative entry (`.`, `node_modules/.bin`) would find a `wt` the agent planted in its
//! worktree and run it outside the sandbox, and where another tool's `wt` may come first — and
//! never from the worktree, whose `.git` file is the agent's: wt would find the repository
//! through it, and so whatever repository (and config) the agent pointed it at. The main
//! checkout is the one holding `.worktrees/<name>`; wt then checks that worktree's git files
//! before it runs git there (`team::git_state`).

use std::path::Path;

use crate::guard::shell::{self, Join, Node, Segment, SimpleCommand};
use crate::guard::{Decision, HookInput, quote};

/// The names wt is installed under.
const PROGRAMS: &[&str] = &["wt", "spectacular-wt"];

/// The flags each command may carry, and whether a flag takes a number.
fn known_flags(command: &str) -> Option<&'static [(&'static str, bool)]> {
    Some(match command {
        "push" | "pr" | "info" => &[("--json", false)],
        "rebase" => &[("--json", false), ("--abort", false)],
        "diff" => &[("--stat", false)],
        "poll" => &[("--json", false), ("--timeout", true), ("--interval", true)],
        "list" => &[("--json", false), ("--stack", false)],
        "stack" => &[("--json", false)],
        _ => return None,
    })
}

/// The commands that change the branch, and run git and git-spice in the worktree while they
/// do: nothing else of the agent may run there meanwhile (see [`approve`]).
const CHANGING: &[&str] = &["push", "pr", "rebase"];

/// Allowed unwrapped, rewritten to run this wt by its path in the main checkout, when `input` is
/// exactly one of the agent `name`'s own wt commands on its worktree `root`; None otherwise (the
/// call goes the normal way). `push`, `pr` and `rebase` are refused in the background, and while
/// a command of the agent still runs in `wt sandbox` (`commands_running`): wt checks the
/// worktree's git files before it runs git there (`team::git_state`), and a command of the agent
/// running beside it could change them between that check and git's reading (a rebase's
/// to-do list given an `exec` line, the `.git` link pointed elsewhere).
pub fn approve(input: &HookInput, name: &str, root: &Path, commands_running: bool) -> Option<Decision> {
    let command = input.tool_input.get("command").and_then(|v| v.as_str())?;
    if input.tool_name.as_deref() != Some("Bash") {
        return None;
    }
    let args = own_command_args(command, name, root)?;
    if CHANGING.contains(&args[0].as_str()) {
        if in_background(&input.tool_input) {
            return Some(Decision::Deny(format!(
                "`{command}` runs git in your worktree outside the sandbox, so it runs in the foreground, with \
                 nothing else of yours running beside it: run it again without run_in_background"
            )));
        }
        if commands_running {
            return Some(Decision::Deny(format!(
                "`{command}` waits while a command of yours still runs in the worktree (one started in the \
                 background?): it runs git there outside the sandbox, with nothing else of yours beside it. \
                 Wait for that command to end or stop it, then run `{command}` again"
            )));
        }
    }
    let exe = crate::process::hook_exe().ok()?;
    let mut words = vec![quote(&exe.to_string_lossy())];
    words.extend(args.iter().map(|arg| quote(arg)));
    // `root` is `<main checkout>/.worktrees/<name>`, as the caller found it.
    let checkout = root.parent().and_then(Path::parent)?;
    let mut rewritten = input.tool_input.clone();
    rewritten["command"] = format!("cd {} && {}", quote(&checkout.to_string_lossy()), words.join(" ")).into();
    Some(Decision::Rewrite {
        reason: format!(
            "`{command}` is wt acting on the team worktree {name}, which writes outside it (the remote, \
             git-spice's and wt's state), so it runs outside `wt sandbox`, as {} itself",
            exe.display()
        ),
        input: rewritten,
        ask: false,
    })
}

/// Whether the Bash call runs in the background (`run_in_background`, which Claude Code also
/// takes as the string "true").
fn in_background(tool_input: &serde_json::Value) -> bool {
    match tool_input.get("run_in_background") {
        Some(serde_json::Value::Bool(yes)) => *yes,
        Some(serde_json::Value::String(text)) => text.eq_ignore_ascii_case("true"),
        _ => false,
    }
}

#[cfg(test)]
fn is_own_command(command: &str, name: &str, root: &Path) -> bool {
    own_command_args(command, name, root).is_some()
}

/// The words after the program of the agent's own wt command (`push api --json`); None when
/// `command` is anything else.
fn own_command_args(command: &str, name: &str, root: &Path) -> Option<Vec<String>> {
    let script = shell::parse(command).ok()?;
    let commands: Option<Vec<&SimpleCommand>> = script
        .items
        .iter()
        .map(|item| match &item.node {
            Node::Command(simple) if !item.isolated && !item.negated => Some(simple),
            _ => None,
        })
        .collect();
    let wt = match commands?.as_slice() {
        [wt] => *wt,
        [cd, wt] if script.items[1].join == Join::And && is_cd_into(cd, root) => *wt,
        _ => return None,
    };
    let words = plain_words(wt)?;
    is_own_wt(&words, name).then(|| words[1..].to_vec())
}

/// The plain words of a command with no assignment and no redirection: all literal, and no
/// unquoted text that bash would glob or brace-expand.
fn plain_words(command: &SimpleCommand) -> Option<Vec<String>> {
    if !command.assignments.is_empty() || !command.redirects.is_empty() {
        return None;
    }
    let expands = |word: &shell::Word| {
        word.segments.iter().any(|s| matches!(s, Segment::Bare(text) if text.contains(['*', '?', '[', '{'])))
    };
    command.words.iter().map(|word| if expands(word) { None } else { word.literal() }).collect()
}

fn is_cd_into(command: &SimpleCommand, root: &Path) -> bool {
    let Some(words) = plain_words(command) else { return false };
    let root = root.to_string_lossy();
    matches!(words.as_slice(), [cd, dir] if cd == "cd" && dir.trim_end_matches('/') == root.trim_end_matches('/'))
}

fn is_own_wt(words: &[String], name: &str) -> bool {
    let [program, subcommand, rest @ ..] = words else { return false };
    let Some(flags) = known_flags(subcommand) else { return false };
    if !is_wt(program) {
        return false;
    }
    let takes_name = !matches!(subcommand.as_str(), "list" | "stack");
    let mut named = false;
    let mut words = rest.iter();
    while let Some(word) = words.next() {
        if !word.starts_with('-') {
            // The one positional: its own name, once.
            if !takes_name || named || word != name {
                return false;
            }
            named = true;
            continue;
        }
        let (flag, inline) = match word.split_once('=') {
            Some((flag, value)) => (flag, Some(value)),
            None => (word.as_str(), None),
        };
        let Some(&(_, numeric)) = flags.iter().find(|(known, _)| *known == flag) else { return false };
        let value = match (numeric, inline) {
            (false, None) => continue,
            (false, Some(_)) => return false,
            (true, Some(value)) => Some(value),
            (true, None) => words.next().map(String::as_str),
        };
        if !value.is_some_and(|v| !v.is_empty() && v.bytes().all(|b| b.is_ascii_digit())) {
            return false;
        }
    }
    named || !takes_name
}

/// `wt`, `spectacular-wt`, or this binary by its absolute path (as the generated agent names it).
fn is_wt(program: &str) -> bool {
    if PROGRAMS.contains(&program) {
        return true;
    }
    let ours = [crate::process::own_exe().ok(), crate::process::hook_exe().ok()];
    ours.into_iter().flatten().any(|exe| exe.as_os_str() == program)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ROOT: &str = "/r/.worktrees/api";

    fn own(command: &str) -> bool {
        is_own_command(command, "api", Path::new(ROOT))
    }

    #[test]
    fn its_own_wt_commands_are_recognised() {
        let exe = crate::process::own_exe().unwrap();
        let quoted = format!("'{}' push api", exe.display());
        for command in [
            "wt push api",
            "spectacular-wt pr api --json",
            "wt rebase api",
            "wt rebase api --abort --json",
            "wt info api --json",
            "wt diff api --stat",
            "wt diff --stat api",
            "wt list",
            "wt list --stack --json",
            "wt stack --json",
            "wt poll api",
            "wt poll api --timeout 30 --interval=5 --json",
            "cd /r/.worktrees/api && wt push api",
            "cd '/r/.worktrees/api/' && spectacular-wt pr api",
            quoted.as_str(),
        ] {
            assert!(own(command), "{command}");
        }
    }

    #[test]
    fn it_runs_as_this_wt_by_its_path_in_the_main_checkout_whatever_wt_the_path_would_find() {
        let input: HookInput = serde_json::from_value(serde_json::json!({
            "tool_name": "Bash",
            "tool_input": {"command": "wt poll api --json", "run_in_background": true, "description": "poll"},
        }))
        .unwrap();
        let Some(Decision::Rewrite { input: rewritten, ask: false, .. }) =
            approve(&input, "api", Path::new(ROOT), false)
        else {
            panic!("not rewritten")
        };
        let exe = crate::process::hook_exe().unwrap();
        let expected = format!("cd '/r' && {} 'poll' 'api' '--json'", quote(&exe.to_string_lossy()));
        assert_eq!(rewritten["command"], expected.as_str());
        assert_eq!(
            (&rewritten["run_in_background"], &rewritten["description"]),
            (&true.into(), &"poll".into())
        );
    }

    #[test]
    fn anything_more_or_else_is_not() {
        for command in [
            "wt push web",
            "wt push",
            "wt push api api",
            "wt push api --force",
            "wt push api --json=1",
            "wt push api; rm -rf ~",
            "wt push api && git push origin main",
            "wt push api || true",
            "wt push api > /tmp/out",
            "wt push api 2>&1",
            "wt push api &",
            "wt push $(echo api)",
            "wt push \"$NAME\"",
            "wt push ap*",
            "wt push {api,x}",
            "wt push ap[i]",
            "X=1 wt push api",
            "(wt push api)",
            "! wt push api",
            "wt push api | cat",
            "wt sync",
            "wt sync api",
            "wt cleanup api",
            "wt create api --base main",
            "wt -C / push api",
            "wt poll api --timeout",
            "wt poll api --timeout 5m",
            "wt list api",
            "wt sandbox --root / -- sh",
            "/tmp/x/spectacular-wt push api",
            "./wt push api",
            "cd /r && wt push api",
            "cd /r/.worktrees/api; wt push api",
            "cd /r/.worktrees/api && wt push api && rm x",
            "cd /r/.worktrees/api && cd / && wt push api",
            "wtx push api",
        ] {
            assert!(!own(command), "{command}");
        }
    }
}
