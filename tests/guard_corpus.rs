//! The guard corpus: escape attempts that must be denied, ordinary work that must not be, and
//! commands wt cannot follow, each through the real `wt guard` binary with the hook JSON Claude
//! Code sends — in each of the three ways an agent can be contained (only the hook; the whole
//! agent in `wt sandbox`; each Bash call rewritten to run in `wt sandbox`).

mod common;
#[path = "common/escape_corpus.rs"]
mod escape_corpus;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use escape_corpus::{Case, ESCAPES, Expect, GUARD_HOLES, NOT_FOLLOWED, ORDINARY, RED_TEAM};

/// A worktree at `<tmp>/repo/.worktrees/abc123-task-1-1` with a sibling whose name extends it,
/// a symlink that leads out, and a file to restore.
struct Layout {
    _temp: tempfile::TempDir,
    repo: PathBuf,
    root: PathBuf,
}

fn layout() -> Layout {
    let temp = tempfile::tempdir().unwrap();
    let repo = temp.path().canonicalize().unwrap().join("repo");
    let root = repo.join(".worktrees/abc123-task-1-1");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(repo.join(".worktrees/abc123-task-1-10/src")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    std::fs::write(root.join(".git"), "gitdir: ../../.git/worktrees/abc123-task-1-1\n").unwrap();
    std::os::unix::fs::symlink("/etc", root.join("etc-link")).unwrap();
    escape_corpus::write_worktree_scripts(&root);
    Layout { _temp: temp, repo, root }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    HookOnly,
    Contained,
    SandboxWrap,
}

impl Mode {
    fn flags(self) -> &'static [&'static str] {
        match self {
            Mode::HookOnly => &[],
            Mode::Contained => &["--contained"],
            Mode::SandboxWrap => &["--sandbox-wrap"],
        }
    }
}

/// What the hook printed.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Answer {
    Deny,
    Allow,
    /// Allowed, with the command rewritten to run inside `wt sandbox`.
    Wrapped,
    NoDecision,
}

fn expected(expect: Expect, tool: &str, mode: Mode) -> Answer {
    match (expect, mode) {
        (Expect::Deny, _) => Answer::Deny,
        (Expect::NoDecision, _) => Answer::NoDecision,
        (Expect::Allow, _) if tool != "Bash" => Answer::Allow,
        (Expect::Allow | Expect::Unclear, Mode::SandboxWrap) => Answer::Wrapped,
        (Expect::Allow | Expect::Unclear, Mode::Contained) | (Expect::Allow, Mode::HookOnly) => Answer::Allow,
        (Expect::Unclear, Mode::HookOnly) => Answer::NoDecision,
    }
}

const BRANCH: &str = "abc123-task-1-1-feature";

fn hook_input(tool: &str, input: Value, cwd: &Path) -> String {
    json!({
        "session_id": "s", "transcript_path": "/tmp/t", "cwd": cwd, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "tool_name": tool, "tool_input": input, "tool_use_id": "t1",
        "agent_id": "a", "agent_type": "wt-abc123-task-1-1", "future_field": {"ignored": true}
    })
    .to_string()
}

/// Runs the guard on one call; returns the answer and its reason, after checking the JSON's shape.
fn run_guard(
    layout: &Layout,
    mode: Mode,
    tool: &str,
    input: Value,
    cwd: &Path,
) -> Result<(Answer, String), String> {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wt"));
    cmd.args(["guard", "--root", layout.root.to_str().unwrap(), "--branch", BRANCH]).args(mode.flags());
    let out = common::with_stdin(cmd, &hook_input(tool, input.clone(), cwd));
    if out.status.code() != Some(0) {
        return Err(format!("guard failed: {}", String::from_utf8_lossy(&out.stderr)));
    }
    let stdout = String::from_utf8(out.stdout).unwrap();
    if stdout.trim().is_empty() {
        return Ok((Answer::NoDecision, String::new()));
    }
    let value: Value = serde_json::from_str(&stdout).unwrap();
    let specific = &value["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse");
    let reason = specific["permissionDecisionReason"].as_str().unwrap_or_default().to_owned();
    let answer = match (specific["permissionDecision"].as_str(), specific.get("updatedInput")) {
        (Some("deny"), None) => Answer::Deny,
        (Some("allow"), None) => Answer::Allow,
        (Some("allow"), Some(updated)) => {
            check_wrapped(layout, &input, updated)?;
            Answer::Wrapped
        }
        other => return Err(format!("unexpected output {other:?}: {stdout}")),
    };
    Ok((answer, reason))
}

/// The rewritten call keeps every field but `command`, which runs the original through
/// `wt sandbox … -- bash -c '<original>'`.
fn check_wrapped(layout: &Layout, input: &Value, updated: &Value) -> Result<(), String> {
    let original = input["command"].as_str().unwrap_or_default();
    let quoted = format!("'{}'", original.replace('\'', r"'\''"));
    let command = updated["command"].as_str().unwrap_or_default();
    let root = layout.root.to_str().unwrap();
    let middle = format!("' sandbox --root '{root}' --branch '{BRANCH}' --check -- bash -c {quoted}");
    if !command.starts_with('\'')
        || !command.ends_with(&middle)
        || updated["description"] != input["description"]
    {
        return Err(format!("bad rewrite: {updated}"));
    }
    Ok(())
}

fn tool_input(tool: &str, text: &str) -> Value {
    match tool {
        "Bash" => json!({ "command": text, "description": "d", "timeout": 60000 }),
        "NotebookEdit" => json!({ "notebook_path": text, "new_source": "x" }),
        "Read" | "Write" | "Edit" | "MultiEdit" => {
            json!({ "file_path": text, "content": "x", "old_string": "a", "new_string": "b" })
        }
        _ => json!({ "pattern": text }),
    }
}

fn check(layout: &Layout, mode: Mode, cases: &[Case], cwd: &Path) -> Vec<String> {
    let root = layout.root.to_str().unwrap();
    let repo = layout.repo.to_str().unwrap();
    let mut failures = Vec::new();
    for (expect, tool, text) in cases {
        let text = text.replace("$ROOT", root).replace("$REPO", repo);
        let want = expected(*expect, tool, mode);
        match run_guard(layout, mode, tool, tool_input(tool, &text), cwd) {
            Err(err) => failures.push(format!("{mode:?} {tool} {text:?}: {err}")),
            Ok((got, reason)) if got != want => {
                failures.push(format!("{mode:?} {tool} {text:?}: expected {want:?}, got {got:?} ({reason})"))
            }
            Ok((Answer::Deny, reason)) if !reason.contains(root) => failures
                .push(format!("{mode:?} {tool} {text:?}: the reason does not name the worktree: {reason}")),
            Ok(_) => {}
        }
    }
    failures
}

fn red_team_cases() -> Vec<Case> {
    RED_TEAM.iter().chain(GUARD_HOLES).map(|(_, expect, text)| (*expect, "Bash", *text)).collect()
}

fn all_cases() -> Vec<Case> {
    let mut all = ESCAPES.to_vec();
    all.extend(red_team_cases());
    all.extend_from_slice(ORDINARY);
    all.extend_from_slice(NOT_FOLLOWED);
    all
}

fn assert_mode(mode: Mode) {
    let layout = layout();
    let failures = check(&layout, mode, &all_cases(), &layout.root);
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn with_only_the_hook_escapes_are_denied_ordinary_work_allowed_and_the_rest_left_to_the_user() {
    assert_mode(Mode::HookOnly);
}

#[test]
fn inside_the_sandbox_everything_not_denied_is_allowed() {
    assert_mode(Mode::Contained);
}

#[test]
fn with_sandbox_wrapping_everything_not_denied_runs_inside_wt_sandbox() {
    assert_mode(Mode::SandboxWrap);
}

#[test]
fn every_red_team_class_is_covered_and_none_is_allowed_by_the_hook_alone() {
    let mut per_class: BTreeMap<&str, usize> = BTreeMap::new();
    for (class, expect, text) in RED_TEAM {
        *per_class.entry(class.split(':').next().unwrap()).or_default() += 1;
        assert_ne!(*expect, Expect::Allow, "{text:?} is an escape");
    }
    for class in ["syntax", "state", "shells", "options", "writers", "git", "gh"] {
        assert!(per_class.get(class).is_some_and(|n| *n >= 5), "class {class}: {per_class:?}");
    }
}

#[test]
fn every_guard_hole_of_the_second_red_team_is_covered_and_none_is_allowed_by_the_hook_alone() {
    let mut per_class: BTreeMap<&str, usize> = BTreeMap::new();
    for (class, expect, text) in GUARD_HOLES {
        *per_class.entry(class.split(':').next().unwrap()).or_default() += 1;
        assert_ne!(*expect, Expect::Allow, "{text:?} is an escape");
    }
    for class in ["G1", "G2", "G3", "G4", "K9"] {
        assert!(per_class.get(class).is_some_and(|n| *n >= 5), "class {class}: {per_class:?}");
    }
}

#[test]
fn the_corpus_is_large_enough_to_mean_something() {
    assert!(all_cases().len() >= 400, "{}", all_cases().len());
}

#[test]
fn a_relative_path_is_judged_from_the_hooks_cwd() {
    // A subagent starts in the session's folder (the main checkout), not in its worktree.
    let layout = layout();
    let cases = [
        (Expect::Deny, "Bash", "touch notes.txt"),
        (Expect::Deny, "Write", "src/lib.rs"),
        (Expect::Allow, "Bash", "cd $ROOT && touch notes.txt"),
        (Expect::Allow, "Bash", "touch $ROOT/notes.txt"),
        (Expect::Deny, "Bash", "git commit -am 'wip'"),
        (Expect::Deny, "Bash", "git checkout -- README.md"),
        (Expect::Allow, "Bash", "git status && git log --oneline -3"),
        (Expect::Allow, "Bash", "cd $ROOT && git commit -am 'wip'"),
        (Expect::Allow, "Bash", "git -C $ROOT add -A"),
        (Expect::Unclear, "Bash", "cargo build"),
        (Expect::Allow, "Bash", "cd $ROOT && cargo build"),
        (Expect::Allow, "Bash", "ls -la && cat README.md"),
    ];
    let failures = check(&layout, Mode::HookOnly, &cases, &layout.repo);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bad_hook_input_blocks_with_exit_2_never_1() {
    for input in ["", "not json", "[1,2", "{\"tool_name\": 3}"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wt"));
        cmd.args(["guard", "--root", "/tmp"]);
        let out = common::with_stdin(cmd, input);
        assert_eq!(out.status.code(), Some(2), "input {input:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

/// Runs the guard on a Bash command with a hang detector far above any real run (Claude Code
/// lets a call run when its hook times out); returns the deny reason.
fn denied_in_bounded_time(layout: &Layout, command: &str) -> String {
    use std::io::Write;
    let mut child = Command::new(env!("CARGO_BIN_EXE_wt"))
        .args(["guard", "--root", layout.root.to_str().unwrap(), "--branch", BRANCH])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = hook_input("Bash", json!({ "command": command }), &layout.root);
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(10) {
            child.kill().unwrap();
            panic!("the guard hung on a {}-byte command", command.len());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    writer.join().unwrap().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(value["hookSpecificOutput"]["permissionDecision"], "deny", "{value}");
    value["hookSpecificOutput"]["permissionDecisionReason"].as_str().unwrap().to_owned()
}

#[test]
fn a_variable_doubled_into_gigabytes_is_denied_at_once() {
    let layout = layout();
    let command = format!("a=x; {}echo $a", "a=$a$a; ".repeat(29));
    let reason = denied_in_bounded_time(&layout, &command);
    assert!(reason.contains("longer than") && reason.contains("script file"), "{reason}");
}

#[test]
fn a_megabyte_command_is_denied_without_being_read() {
    let layout = layout();
    let reason = denied_in_bounded_time(&layout, &"echo hi; ".repeat(1024 * 1024 / 9));
    assert!(reason.contains("KiB") && reason.contains("script file"), "{reason}");
}

#[test]
fn deep_nesting_is_denied() {
    let layout = layout();
    for command in
        ["$(".repeat(5_000), "(".repeat(20_000), "{ ".repeat(10_000), "if true; then ".repeat(3_000)]
    {
        let reason = denied_in_bounded_time(&layout, &command);
        assert!(reason.contains("deeper than"), "{reason}");
    }
}

#[test]
fn many_heredocs_are_denied() {
    let layout = layout();
    let command = format!("cat{}\n{}", " <<E".repeat(2_000), "E\n".repeat(2_000));
    let reason = denied_in_bounded_time(&layout, &command);
    assert!(reason.contains("heredocs"), "{reason}");
}

#[test]
fn nested_loops_and_shells_are_denied_past_their_budget() {
    let layout = layout();
    let loops = format!(
        "{}echo x{}",
        "for a in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16; do ".repeat(6),
        "; done".repeat(6)
    );
    // The step cap or, on a loaded machine, the time budget: either way a deny that says what to do.
    let reason = denied_in_bounded_time(&layout, &loops);
    assert!(
        reason.contains("commands for wt guard to follow") || reason.contains(" ms to follow"),
        "{reason}"
    );
    assert!(reason.contains("script file"), "{reason}");
    let shells = format!("{}ls", "eval ".repeat(20));
    assert!(denied_in_bounded_time(&layout, &shells).contains("nests shells"));
}
