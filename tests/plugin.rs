//! The repository is a Claude Code plugin: the real client validates it strictly, and its hook
//! commands behave (session start, completion gates, the guard wrapper without wt).

mod common;

use std::path::Path;
use std::process::Command;

use common::{TestRepo, with_stdin};

#[test]
fn claude_plugin_validate_strict_accepts_the_repository() {
    let repo = TestRepo::new();
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = repo
        .command(common::claude_client().to_str().unwrap(), root)
        .args(["plugin", "validate", ".", "--strict"])
        .output()
        .unwrap();
    let text = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{text}");
    for part in [
        "spectacular:execute",
        "spectacular:orchestrating-runs",
        "spectacular:worktree-worker",
        "spectacular:worktree-lead",
        "spectacular:wt-worker-8",
        "PreToolUse",
    ] {
        assert!(text.contains(part), "{part} missing from:\n{text}");
    }
}

#[test]
fn the_plugins_guard_blocks_the_call_when_it_fails() {
    let hooks: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin/hooks.json")).unwrap(),
    )
    .unwrap();
    let guard = &hooks["hooks"]["PreToolUse"][0]["hooks"][0];
    assert!(guard["command"].as_str().unwrap().ends_with("guard.sh\""), "{guard}");
    assert_eq!(guard["onFailure"], "block", "a guard that crashes or times out must not let the call run");
}

#[test]
fn task_completed_refuses_a_worker_with_no_commit_or_uncommitted_files() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        "[run]\nid = \"9a7e00\"\n[[phase]]\n[[phase.task]]\nname = \"t\"\nprompt = \"x\"\n",
    );
    repo.wt(&["step", plan.to_str().unwrap(), "--json"]).ok();
    let main = repo.root.join(".worktrees/9a7e00-main");
    let gate = |input: &str| {
        let mut cmd = repo.command(env!("CARGO_BIN_EXE_wt"), &repo.root);
        cmd.args(["hook", "task-completed"]);
        with_stdin(cmd, input)
    };
    let input = format!(
        r#"{{"cwd": "{}", "hook_event_name": "TaskCompleted", "teammate_name": "spectacular:wt-worker-1"}}"#,
        repo.root.display()
    );

    let out = gate(&input);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("has no commit on 9a7e00-task-1-1-t yet"));
    std::fs::write(main.join("work.txt"), "x").unwrap();
    let out = gate(&input);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("uncommitted files"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    repo.git_in(&main, &["add", "work.txt"]);
    repo.git_in(&main, &["commit", "--quiet", "-m", "work"]);
    assert_eq!(gate(&input).status.code(), Some(0));
    let other = format!(r#"{{"cwd": "{}", "teammate_name": "researcher"}}"#, repo.root.display());
    assert_eq!(gate(&other).status.code(), Some(0), "not a wt worker: no opinion");
}

#[test]
fn session_start_reports_the_runs_that_wait_to_be_carried_on() {
    let repo = TestRepo::new();
    let start = || {
        let mut cmd = repo.command(env!("CARGO_BIN_EXE_wt"), &repo.root);
        cmd.args(["hook", "session-start"]);
        let input = format!(r#"{{"cwd": "{}", "hook_event_name": "SessionStart"}}"#, repo.root.display());
        let out = with_stdin(cmd, &input);
        assert!(out.status.success());
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let quiet = start();
    assert!(quiet.contains("/spectacular:execute") && !quiet.contains("carry it on"), "{quiet}");
    let plan = repo.plan(
        "plan.toml",
        "[run]\nid = \"5e55a0\"\n[[phase]]\n[[phase.task]]\nname = \"t\"\nprompt = \"x\"\n",
    );
    repo.wt(&["step", plan.to_str().unwrap(), "--json"]).ok();
    let waiting = start();
    assert!(
        waiting.contains("run 5e55a0 is dispatched; carry it on with /spectacular:execute 5e55a0"),
        "{waiting}"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "the check changes nothing git sees");
}

#[test]
fn the_guard_wrapper_blocks_wt_workers_and_team_agents_when_wt_is_missing_and_nothing_else() {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin/guard.sh");
    let run = |input: &str| {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg(&script).env_clear().env("PATH", "/usr/bin:/bin");
        with_stdin(cmd, input)
    };
    let worker = run(
        r#"{"tool_name": "Bash", "agent_type": "spectacular:wt-worker-3", "tool_input": {"command": "ls"}}"#,
    );
    assert_eq!(worker.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&worker.stderr).contains("spectacular-wt is not on PATH"));
    let team = run(r#"{"tool_name": "Bash", "agent_type": "wt-auth", "tool_input": {"command": "ls"}}"#);
    assert_eq!(team.status.code(), Some(2), "a team worktree's agent is blocked too");
    let other = run(r#"{"tool_name": "Bash", "tool_input": {"command": "ls"}}"#);
    assert_eq!(other.status.code(), Some(0));
    for own_guard in ["wt-abc123-task-1-1", "general-purpose"] {
        let input = format!(
            r#"{{"tool_name": "Bash", "agent_type": "{own_guard}", "tool_input": {{"command": "ls"}}}}"#
        );
        assert_eq!(run(&input).status.code(), Some(0), "{own_guard} is not routed by the plugin");
    }
}

#[test]
fn the_hooks_reach_this_wt_even_with_another_wt_first_on_path() {
    let repo = TestRepo::new();
    // worktrunk's `wt` answers `wt guard …` with exit 2, which would block every call.
    let other = repo.scratch.join("other-wt");
    std::fs::create_dir_all(&other).unwrap();
    std::fs::write(other.join("wt"), "#!/bin/sh\necho 'error: unknown command' >&2\nexit 2\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(other.join("wt"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let ours = Path::new(env!("CARGO_BIN_EXE_spectacular-wt")).parent().unwrap();
    let path =
        std::env::join_paths([other.as_path(), ours, Path::new("/usr/bin"), Path::new("/bin")]).unwrap();
    let hook = |script: &str, arg: Option<&str>, input: &str| {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin").join(script));
        cmd.args(arg).env_clear().env("PATH", &path).env("HOME", &repo.home);
        with_stdin(cmd, input)
    };
    let cwd = repo.root.display();
    let user = hook(
        "guard.sh",
        None,
        &format!(r#"{{"cwd": "{cwd}", "tool_name": "Bash", "tool_input": {{"command": "ls"}}}}"#),
    );
    assert_eq!(user.status.code(), Some(0), "{}", String::from_utf8_lossy(&user.stderr));
    let worker = hook(
        "guard.sh",
        None,
        &format!(
            r#"{{"cwd": "{cwd}", "tool_name": "Bash", "agent_type": "spectacular:wt-worker-2", "tool_input": {{"command": "ls"}}}}"#
        ),
    );
    assert_eq!(worker.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&worker.stderr).contains("holds no task of a wt run"),
        "this wt answered"
    );
    let start = hook("session-start.sh", None, &format!(r#"{{"cwd": "{cwd}"}}"#));
    assert!(String::from_utf8_lossy(&start.stdout).contains("/spectacular:execute"));
    let gate =
        hook("gate.sh", Some("task-completed"), &format!(r#"{{"cwd": "{cwd}", "teammate_name": "x"}}"#));
    assert_eq!(gate.status.code(), Some(0));
    // The other wt's exit 2 on SubagentStop would keep a returning worker from returning.
    for event in ["subagent-start", "subagent-stop"] {
        let input = common::subagent_event("SubagentStop", "spectacular:wt-worker-2", "a1", &repo.root);
        let recorded = hook("subagent.sh", Some(event), &input.to_string());
        assert_eq!(recorded.status.code(), Some(0), "{event}: {}", String::from_utf8_lossy(&recorded.stderr));
    }
    let missing = {
        let mut cmd = Command::new("/bin/sh");
        cmd.arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("plugin/subagent.sh")).arg("subagent-stop");
        cmd.env_clear().env("PATH", "/usr/bin:/bin");
        with_stdin(cmd, r#"{"agent_type": "spectacular:wt-worker-2"}"#)
    };
    assert_eq!(missing.status.code(), Some(0), "without spectacular-wt nothing is recorded, nothing blocked");
}
