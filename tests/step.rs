//! `wt step --json` driven by a scripted orchestrator: it dispatches exactly what wt lists,
//! plays each subagent in the worktree named by the prompt, and calls again until done.

mod common;

use std::path::PathBuf;

use common::TestRepo;
use serde_json::Value;

const PLAN: &str = r#"
[run]
id = "57e900"
[[phase]]
name = "Base"
strategy = "sequential"
[[phase.task]]
name = "schema"
prompt = "Write schema.sql"
verify = "test -f schema.sql"
[[phase]]
name = "Fan out"
strategy = "parallel"
[[phase.task]]
name = "api"
prompt = "Write api.rs"
[[phase.task]]
name = "cli"
prompt = "Write cli.rs"
[[phase]]
name = "Wire"
strategy = "sequential"
[[phase.task]]
name = "main"
prompt = "Write main.rs"
"#;

fn step(repo: &TestRepo, target: &str) -> (i32, Value) {
    let out = repo.wt(&["step", target, "--json"]);
    let value = serde_json::from_str(out.stdout().trim())
        .unwrap_or_else(|e| panic!("{e}: {} {}", out.stdout(), out.stderr()));
    (out.code(), value)
}

/// The absolute worktree path a dispatch prompt names.
fn worktree_of(dispatch: &Value) -> PathBuf {
    let prompt = dispatch["prompt"].as_str().unwrap();
    let start = prompt.find("Work only inside ").unwrap() + "Work only inside ".len();
    let rest = &prompt[start..];
    PathBuf::from(&rest[..rest.find(" (branch").unwrap()])
}

/// Plays a subagent: writes the file its prompt asks for (and commits one task itself).
fn play(repo: &TestRepo, dispatch: &Value) {
    let worktree = worktree_of(dispatch);
    assert!(worktree.is_absolute() && worktree.exists(), "{}", worktree.display());
    let prompt = dispatch["prompt"].as_str().unwrap();
    let file = prompt.split("Write ").nth(1).unwrap().split_whitespace().next().unwrap();
    std::fs::write(worktree.join(file), "done\n").unwrap();
    if file == "api.rs" {
        repo.git_in(&worktree, &["add", "api.rs"]);
        repo.git_in(&worktree, &["commit", "--quiet", "-m", "api by the subagent"]);
    }
}

#[test]
fn an_orchestrator_reaches_done_by_dispatching_what_step_lists() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let mut rounds = Vec::new();
    let (mut code, mut outcome) = step(&repo, plan.to_str().unwrap());
    while outcome["status"] == "dispatch" {
        assert_eq!(code, 0);
        let dispatch = outcome["dispatch"].as_array().unwrap().clone();
        rounds.push(
            dispatch.iter().map(|d| d["subagent_type"].as_str().unwrap().to_owned()).collect::<Vec<_>>(),
        );
        for item in &dispatch {
            play(&repo, item);
        }
        (code, outcome) = step(&repo, "57e900");
        assert!(rounds.len() < 10, "no progress: {outcome}");
    }
    assert_eq!(outcome["status"], "done", "{outcome}");
    assert_eq!(code, 0);
    assert_eq!(
        rounds,
        [
            vec!["spectacular:wt-worker-1"],
            vec!["spectacular:wt-worker-1", "spectacular:wt-worker-2"],
            vec!["spectacular:wt-worker-1"]
        ]
    );
    let branches =
        ["57e900-task-1-1-schema", "57e900-task-2-1-api", "57e900-task-2-2-cli", "57e900-task-3-1-main"];
    repo.assert_linear_stack("main", &branches);
    assert_eq!(repo.subjects(branches[0], branches[1]), ["api by the subagent"]);
    assert_eq!(repo.subjects(branches[1], branches[2]), ["[Task 2.2] cli"]);
    let stack: Vec<&str> =
        outcome["stack"].as_array().unwrap().iter().map(|e| e["branch"].as_str().unwrap()).collect();
    assert_eq!(stack, branches);
}

#[test]
fn a_step_without_new_work_repeats_the_dispatch_once_then_fails_the_task() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let (_, first) = step(&repo, plan.to_str().unwrap());
    assert_eq!(first["phase"]["number"], 1);
    assert_eq!(first["phase"]["strategy"], "sequential");
    let (_, again) = step(&repo, "57e900");
    assert_eq!(again["dispatch"], first["dispatch"], "the same dispatch, nothing handed out twice");
    let status: Value = serde_json::from_str(&repo.wt(&["status", "57e900", "--json"]).ok()).unwrap();
    assert_eq!(status[0]["status"], "dispatched");
    assert_eq!(status[0]["phases"][0]["tasks"][0]["state"], "dispatched");
    let (code, failed) = step(&repo, "57e900");
    assert_eq!((code, failed["status"].as_str()), (1, Some("failed")), "{failed}");
    let message = failed["message"].as_str().unwrap();
    assert!(message.contains("task 1.1 (schema)") && message.contains("no changes"), "{message}");
    assert!(message.contains("wt step 57e900 --json"), "{message}");

    let (_, retry) = step(&repo, "57e900");
    assert_eq!(retry["status"], "dispatch", "after a failure the task is handed out again");
    play(&repo, &retry["dispatch"][0]);
    let (_, next) = step(&repo, "57e900");
    assert_eq!(next["phase"]["number"], 2, "{next}");
}

#[test]
fn a_parallel_phase_hands_out_only_what_is_not_yet_done() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let (_, first) = step(&repo, plan.to_str().unwrap());
    play(&repo, &first["dispatch"][0]);
    let (_, parallel) = step(&repo, "57e900");
    let items = parallel["dispatch"].as_array().unwrap();
    assert_eq!(items.len(), 2);
    assert_ne!(worktree_of(&items[0]), worktree_of(&items[1]), "each parallel task has its own worktree");
    play(&repo, &items[0]);
    let (_, rest) = step(&repo, "57e900");
    assert_eq!(rest["dispatch"].as_array().unwrap().len(), 1, "{rest}");
    assert_eq!(rest["dispatch"][0]["prompt"], items[1]["prompt"]);
    assert_eq!(rest["dispatch"][0]["subagent_type"], items[1]["subagent_type"], "it keeps its worker slot");
}

#[test]
fn a_failed_verify_is_reported_with_the_task_and_its_worktree() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", &PLAN.replace("test -f schema.sql", "test -f missing.sql"));
    let (_, first) = step(&repo, plan.to_str().unwrap());
    play(&repo, &first["dispatch"][0]);
    let (code, failed) = step(&repo, "57e900");
    assert_eq!(code, 1);
    let message = failed["message"].as_str().unwrap();
    assert!(
        message.contains("verify `test -f missing.sql`") && message.contains(".worktrees/57e900-main"),
        "{message}"
    );
    assert_eq!(
        repo.subjects("main", "57e900-task-1-1-schema"),
        ["[Task 1.1] schema"],
        "the work is committed, not lost"
    );
}

/// `wt guard` on a call of the worker holding slot 1, in `worktree`: (decision, updatedInput).
fn worker_call(worktree: &std::path::Path, tool: &str, input: Value) -> (String, Value) {
    let hook = serde_json::json!({
        "cwd": worktree, "hook_event_name": "PreToolUse", "tool_name": tool,
        "agent_type": "spectacular:wt-worker-1", "tool_input": input,
    });
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_wt"));
    cmd.arg("guard");
    let out = common::with_stdin(cmd, &hook.to_string());
    let value: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let specific = &value["hookSpecificOutput"];
    (specific["permissionDecision"].as_str().unwrap_or("none").to_owned(), specific["updatedInput"].clone())
}

#[test]
fn a_worker_cannot_write_files_while_a_command_it_started_still_runs() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let (_, first) = step(&repo, plan.to_str().unwrap());
    let worktree = worktree_of(&first["dispatch"][0]);
    let write = |name: &str| {
        worker_call(&worktree, "Write", serde_json::json!({"file_path": worktree.join(name), "content": "x"}))
            .0
    };
    assert_eq!(write("schema.sql"), "allow");
    // The worker's Bash call, as the guard rewrites it (inside `wt sandbox`), left running in
    // the background as Claude Code's run_in_background does.
    let (decision, updated) = worker_call(&worktree, "Bash", serde_json::json!({"command": "sleep 30"}));
    assert_eq!(decision, "allow");
    let wrapped = updated["command"].as_str().unwrap();
    let mut background = repo.command("bash", &worktree);
    let mut background = background.args(["-c", wrapped]).spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    let during = write("schema.sql");
    std::process::Command::new("kill").args(["-TERM", &background.id().to_string()]).status().unwrap();
    background.wait().unwrap();
    assert_eq!(during, "deny", "a write while the background command runs");
    assert_eq!(write("schema.sql"), "allow", "once it has ended");
}
