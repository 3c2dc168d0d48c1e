//! `wt step --json` driven by a scripted orchestrator: it dispatches exactly what wt lists,
//! plays each subagent in the worktree named by the prompt (with the SubagentStart and
//! SubagentStop hooks Claude Code runs around it), and calls again until done.

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

fn worker(dispatch: &Value) -> &str {
    dispatch["subagent_type"].as_str().unwrap()
}

/// Dispatches `item` as the subagent `agent_id`, which does its task and returns.
fn dispatch_and_return(repo: &TestRepo, item: &Value, agent_id: &str) {
    repo.subagent_starts(worker(item), agent_id);
    play(repo, item);
    repo.subagent_returns(worker(item), agent_id);
}

/// The workers a `wait` lists.
fn waiting(outcome: &Value) -> Vec<&str> {
    outcome["waiting"].as_array().unwrap().iter().map(|w| w["subagent_type"].as_str().unwrap()).collect()
}

/// The task states `wt status` shows, phase by phase.
fn task_states(repo: &TestRepo) -> Vec<Vec<String>> {
    let status: Value = serde_json::from_str(&repo.wt(&["status", "57e900", "--json"]).ok()).unwrap();
    let phases = status[0]["phases"].as_array().unwrap();
    let states = |phase: &Value| {
        phase["tasks"].as_array().unwrap().iter().map(|t| t["state"].as_str().unwrap().to_owned()).collect()
    };
    phases.iter().map(states).collect()
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
        rounds.push(dispatch.iter().map(|d| worker(d).to_owned()).collect::<Vec<_>>());
        for (n, item) in dispatch.iter().enumerate() {
            dispatch_and_return(&repo, item, &format!("a{}{n}", rounds.len()));
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
fn a_subagent_that_returns_without_work_gets_the_task_once_more_then_it_fails() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let (_, first) = step(&repo, plan.to_str().unwrap());
    assert_eq!(first["phase"]["number"], 1);
    assert_eq!(first["phase"]["strategy"], "sequential");
    repo.subagent_starts(worker(&first["dispatch"][0]), "a1");
    repo.subagent_returns(worker(&first["dispatch"][0]), "a1");
    let (_, again) = step(&repo, "57e900");
    assert_eq!(again["status"], "dispatch", "{again}");
    assert_eq!(again["dispatch"], first["dispatch"], "the same task, to the same worker");
    assert_eq!(task_states(&repo)[0], ["dispatched"]);
    repo.subagent_starts(worker(&again["dispatch"][0]), "a2");
    repo.subagent_returns(worker(&again["dispatch"][0]), "a2");
    let (code, failed) = step(&repo, "57e900");
    assert_eq!((code, failed["status"].as_str()), (1, Some("failed")), "{failed}");
    let message = failed["message"].as_str().unwrap();
    assert!(message.contains("task 1.1 (schema)") && message.contains("no changes"), "{message}");
    assert!(message.contains("wt step 57e900 --json"), "{message}");

    let (_, retry) = step(&repo, "57e900");
    assert_eq!(retry["status"], "dispatch", "after a failure the task is handed out again");
    dispatch_and_return(&repo, &retry["dispatch"][0], "a3");
    let (_, next) = step(&repo, "57e900");
    assert_eq!(next["phase"]["number"], 2, "{next}");
}

#[test]
fn asking_again_while_a_worker_is_out_answers_wait_and_neither_hands_out_nor_checks() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let (_, first) = step(&repo, plan.to_str().unwrap());
    let item = &first["dispatch"][0];
    let (code, before_start) = step(&repo, "57e900");
    assert_eq!((code, before_start["status"].as_str()), (0, Some("wait")), "{before_start}");
    assert_eq!(before_start["waiting"][0]["started"], false, "dispatched, no subagent started yet");

    repo.subagent_starts(worker(item), "a1");
    play(&repo, item);
    let (code, out) = step(&repo, "57e900");
    assert_eq!((code, out["status"].as_str()), (0, Some("wait")), "{out}");
    assert_eq!(out["dispatch"], serde_json::json!([]), "nothing handed out");
    assert_eq!(out["phase"]["number"], 1);
    let entry = &out["waiting"][0];
    assert_eq!(entry["subagent_type"], "spectacular:wt-worker-1");
    assert_eq!(entry["task"], "1.1");
    assert_eq!(entry["started"], true);
    assert!(entry["dispatched_at"].as_u64().unwrap() <= entry["last_activity"].as_u64().unwrap(), "{entry}");
    let message = out["message"].as_str().unwrap();
    assert!(message.contains("spectacular:wt-worker-1 (task 1.1"), "{message}");
    assert!(message.contains("wt step 57e900 --json --release <worker>"), "{message}");
    assert!(repo.subjects("main", "57e900-task-1-1-schema").is_empty(), "the task was not judged: {message}");
    assert_eq!(task_states(&repo)[0], ["dispatched"]);

    // A subagent of another type returning (the session's own Explore, say) changes nothing.
    repo.subagent_returns("general-purpose", "a1");
    repo.subagent_returns("spectacular:wt-worker-2", "a1");
    assert_eq!(step(&repo, "57e900").1["status"], "wait");

    repo.subagent_returns(worker(item), "a1");
    let (_, next) = step(&repo, "57e900");
    assert_eq!(next["status"], "dispatch", "{next}");
    assert_eq!(next["phase"]["number"], 2);
    assert_eq!(repo.subjects("main", "57e900-task-1-1-schema"), ["[Task 1.1] schema"]);
}

#[test]
fn a_parallel_phase_is_checked_once_every_worker_is_back() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let (_, first) = step(&repo, plan.to_str().unwrap());
    dispatch_and_return(&repo, &first["dispatch"][0], "a1");
    let (_, parallel) = step(&repo, "57e900");
    let items = parallel["dispatch"].as_array().unwrap();
    for (item, id) in items.iter().zip(["b1", "b2"]) {
        repo.subagent_starts(worker(item), id);
    }
    dispatch_and_return(&repo, &items[0], "b1");
    let (_, out) = step(&repo, "57e900");
    assert_eq!(out["status"], "wait", "{out}");
    assert_eq!(waiting(&out), [worker(&items[1])]);
    assert_eq!(task_states(&repo)[1], ["dispatched", "dispatched"], "not even the returned one is checked");

    play(&repo, &items[1]);
    repo.subagent_returns(worker(&items[1]), "b2");
    let (_, next) = step(&repo, "57e900");
    assert_eq!(next["phase"]["number"], 3, "{next}");
    assert_eq!(task_states(&repo)[1], ["verified", "verified"]);
}

#[test]
fn a_return_from_an_earlier_hand_out_of_the_worker_does_not_end_the_new_one() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let (_, first) = step(&repo, plan.to_str().unwrap());
    let slot = worker(&first["dispatch"][0]).to_owned();
    repo.subagent_starts(&slot, "old");
    // The orchestrator gives it up for dead; its task, still without work, goes out again.
    let out = repo.wt(&["step", "57e900", "--json", "--release", &slot]);
    let again: Value = serde_json::from_str(&out.ok()).unwrap();
    assert_eq!(again["released"][0]["subagent_type"], slot.as_str(), "{again}");
    assert_eq!(again["released"][0]["how"], "released");
    assert_eq!(again["status"], "dispatch");
    assert_eq!(worker(&again["dispatch"][0]), slot, "the same worker slot, a new hand-out");
    repo.subagent_starts(&slot, "new");

    repo.subagent_returns(&slot, "old");
    let (_, out) = step(&repo, "57e900");
    assert_eq!(out["status"], "wait", "the late return of the old subagent is not the new one's: {out}");
    assert_eq!(task_states(&repo)[0], ["dispatched"]);

    play(&repo, &again["dispatch"][0]);
    repo.subagent_returns(&slot, "new");
    let (_, next) = step(&repo, "57e900");
    assert_eq!(next["phase"]["number"], 2, "{next}");
}

#[test]
fn a_worker_that_will_not_return_is_released_and_its_task_checked_as_it_stands() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let (_, first) = step(&repo, plan.to_str().unwrap());
    let item = &first["dispatch"][0];
    repo.subagent_starts(worker(item), "a1");
    play(&repo, item);
    // The session that dispatched it ended: no SubagentStop will come.
    let bad = repo.wt(&["step", "57e900", "--json", "--release", "worker-1"]);
    assert_eq!(bad.code(), 2, "{}", bad.stderr());
    assert!(bad.stderr().contains("spectacular:wt-worker-<k>"), "{}", bad.stderr());

    let out = repo.wt(&["step", "57e900", "--json", "--release", "all"]);
    let next: Value = serde_json::from_str(&out.ok()).unwrap();
    assert_eq!(next["released"][0]["subagent_type"], "spectacular:wt-worker-1", "{next}");
    assert_eq!(next["status"], "dispatch");
    assert_eq!(next["phase"]["number"], 2);
    assert_eq!(repo.subjects("main", "57e900-task-1-1-schema"), ["[Task 1.1] schema"]);
    assert_eq!(
        repo.wt(&["step", "57e900", "--json", "--release", "all"]).code(),
        0,
        "nothing left to release"
    );
}

#[test]
fn a_worker_not_seen_for_an_hour_is_released_by_the_next_step() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let (_, first) = step(&repo, plan.to_str().unwrap());
    dispatch_and_return(&repo, &first["dispatch"][0], "a1");
    let (_, parallel) = step(&repo, "57e900");
    let items = parallel["dispatch"].as_array().unwrap();
    for (item, id) in items.iter().zip(["b1", "b2"]) {
        repo.subagent_starts(worker(item), id);
    }
    let lease = |item: &Value| {
        let name = worker(item).trim_start_matches("spectacular:");
        repo.root.join(format!(".git/spectacular/slots/{name}.json"))
    };
    let hours_ago = |hours: u64| std::time::SystemTime::now() - std::time::Duration::from_secs(hours * 3600);
    for item in items {
        let file = std::fs::OpenOptions::new().write(true).open(lease(item)).unwrap();
        file.set_modified(hours_ago(2)).unwrap();
    }
    // The second worker is still at work: the guard sees its calls.
    let worktree = worktree_of(&items[1]);
    let write = serde_json::json!({"file_path": worktree.join("cli.rs"), "content": "x"});
    assert_eq!(worker_call_as(worker(&items[1]), &worktree, "Write", write).0, "allow");

    let (_, out) = step(&repo, "57e900");
    assert_eq!(out["status"], "wait", "{out}");
    assert_eq!(out["released"][0]["subagent_type"], worker(&items[0]));
    assert_eq!(out["released"][0]["how"], "silent");
    assert_eq!(waiting(&out), [worker(&items[1])]);
    let seen = out["waiting"][0]["last_activity"].as_u64().unwrap();
    assert!(seen >= out["waiting"][0]["dispatched_at"].as_u64().unwrap(), "its call counts: {out}");
}

#[test]
fn the_subagent_hooks_ignore_what_is_not_theirs_and_never_block() {
    let repo = TestRepo::new();
    for input in [
        serde_json::json!({}),
        serde_json::json!({"hook_event_name": "SubagentStop", "agent_type": "spectacular:wt-worker-1"}),
        common::subagent_event("SubagentStop", "spectacular:wt-worker-1", "a1", &repo.scratch),
        common::subagent_event("SubagentStart", "general-purpose", "a1", &repo.root),
    ] {
        assert_eq!(repo.subagent_hook(&input), 0, "{input}");
    }
    assert!(!repo.root.join(".git/spectacular/slots").exists(), "nothing was written");
}

#[test]
fn a_failed_verify_is_reported_with_the_task_and_its_worktree() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", &PLAN.replace("test -f schema.sql", "test -f missing.sql"));
    let (_, first) = step(&repo, plan.to_str().unwrap());
    dispatch_and_return(&repo, &first["dispatch"][0], "a1");
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
    worker_call_as("spectacular:wt-worker-1", worktree, tool, input)
}

/// `wt guard` on a call of the worker `agent_type`, in `worktree`: (decision, updatedInput).
fn worker_call_as(agent_type: &str, worktree: &std::path::Path, tool: &str, input: Value) -> (String, Value) {
    let hook = serde_json::json!({
        "cwd": worktree, "hook_event_name": "PreToolUse", "tool_name": tool,
        "agent_type": agent_type, "tool_input": input,
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
    let (decision, updated) =
        worker_call(&worktree, "Bash", serde_json::json!({"command": "touch started && sleep 30"}));
    assert_eq!(decision, "allow");
    let wrapped = updated["command"].as_str().unwrap();
    let mut background = repo.command("bash", &worktree);
    let mut background = background.args(["-c", wrapped]).spawn().unwrap();
    let begun = std::time::Instant::now();
    while !worktree.join("started").exists() && begun.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let during = write("schema.sql");
    std::process::Command::new("kill").args(["-TERM", &background.id().to_string()]).status().unwrap();
    background.wait().unwrap();
    assert_eq!(during, "deny", "a write while the background command runs");
    assert_eq!(write("schema.sql"), "allow", "once it has ended");
}

#[test]
fn a_parallel_phase_handed_out_by_step_is_stacked_with_its_bases_recorded_then_one_restack() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        "[run]\nid = \"57e901\"\n[[phase]]\nname = \"Fan out\"\nstrategy = \"parallel\"\n\
         [[phase.task]]\nname = \"a\"\nprompt = \"Write a.rs\"\n[[phase.task]]\nname = \"b\"\nprompt = \"Write b.rs\"\n\
         [[phase.task]]\nname = \"c\"\nprompt = \"Write c.rs\"\n[[phase.task]]\nname = \"d\"\nprompt = \"Write d.rs\"\n",
    );
    let (mut code, mut outcome) = step(&repo, plan.to_str().unwrap());
    let mut rounds = 0;
    while outcome["status"] == "dispatch" {
        assert_eq!(code, 0);
        rounds += 1;
        for (n, item) in outcome["dispatch"].as_array().unwrap().clone().iter().enumerate() {
            dispatch_and_return(&repo, item, &format!("a{rounds}{n}"));
        }
        (code, outcome) = step(&repo, "57e901");
        assert!(rounds < 10, "no progress: {outcome}");
    }
    assert_eq!(outcome["status"], "done", "{outcome}");
    let branches = ["57e901-task-1-1-a", "57e901-task-1-2-b", "57e901-task-1-3-c", "57e901-task-1-4-d"];
    repo.assert_linear_stack("main", &branches);
    // wt step creates each branch on the phase base as it hands the task out, so stacking
    // records the bases of c and d (top first), and one upstack onto of b restacks the rest.
    let events =
        std::fs::read_to_string(repo.root.join(".git/spectacular/runs/57e901/events.jsonl")).unwrap();
    let stacking: Vec<String> = events
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|e| e["event"] == "step" && e["at"] == "intent")
        .filter(|e| e["step"] == "retarget" || e["step"] == "upstack-onto")
        .map(|e| format!("{}@{}", e["step"].as_str().unwrap(), e["target"].as_str().unwrap()))
        .collect();
    assert_eq!(
        stacking,
        ["retarget@57e901-task-1-4-d", "retarget@57e901-task-1-3-c", "upstack-onto@57e901-task-1-2-b"]
    );
}
