//! `wt run` with the Claude Code backend, against the real client and a scripted model on
//! loopback: every worker tries to escape its worktree and does honest work; the guard denies
//! the first and lets the second through. A negative control shows the same worker escapes
//! without the guard, so these tests can fail.

mod common;
#[path = "common/model_server.rs"]
mod model_server;
#[path = "common/scripted_worker.rs"]
mod scripted_worker;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::TestRepo;
use model_server::{ModelServer, Turn};
use scripted_worker::{ESCAPES, HONEST, KERNEL_ESCAPES, KERNEL_REFUSAL, client_env, worker_turn};

/// A worker: four escape attempts, then a Write and a Bash inside its worktree.
fn worker(scratch: PathBuf) -> model_server::Script {
    Arc::new(move |request| worker_turn(request, &scratch).unwrap_or_else(|| Turn::Text("no task".into())))
}

fn claude_dir(repo: &TestRepo) -> PathBuf {
    let dir = repo.scratch.join("claude-bin");
    std::fs::create_dir_all(&dir).unwrap();
    std::os::unix::fs::symlink(common::claude_client(), dir.join("claude")).unwrap();
    dir
}

const PLAN: &str = r#"
[run]
id = "c1a0de"
[agent]
kind = "claude"
[[phase]]
strategy = "sequential"
[[phase.task]]
name = "base"
prompt = "Add the base files."
[[phase]]
strategy = "parallel"
[[phase.task]]
name = "left"
prompt = "Add the left files."
[[phase.task]]
name = "right"
prompt = "Add the right files."
"#;

#[test]
fn wt_run_with_claude_keeps_every_worker_in_its_worktree_and_commits_its_honest_work() {
    let repo = TestRepo::new();
    let server = ModelServer::start(worker(repo.scratch.clone()));
    let path = common::path_with(&claude_dir(&repo));
    let mut env = client_env(&server);
    env.push(("PATH", path.to_string_lossy().into_owned()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    let before = repo.checkout_snapshot();

    let out = repo.wt_with_env(&["run", repo.plan("plan.toml", PLAN).to_str().unwrap()], &env);
    assert_eq!(out.code(), 0, "{}\n{}\nresults: {:#?}", out.stdout(), out.stderr(), server.tool_results());

    let branches = ["c1a0de-task-1-1-base", "c1a0de-task-2-1-left", "c1a0de-task-2-2-right"];
    repo.assert_linear_stack("main", &branches);
    for (branch, task) in branches.iter().zip(["1-1", "2-1", "2-2"]) {
        let files = repo.git(&["show", "--name-only", "--format=", branch]);
        assert!(
            files.contains(&format!("honest-{task}.txt")) && files.contains(&format!("bash-{task}.txt")),
            "{branch}: {files}"
        );
        assert!(
            !repo.scratch.join(format!("escape-{task}.txt")).exists(),
            "task {task} wrote outside its worktree"
        );
        assert!(!repo.scratch.join(format!("cd-{task}.txt")).exists(), "task {task} escaped with cd");
        assert!(
            !repo.root.join(format!("escape-dotdot-{task}.txt")).exists(),
            "task {task} escaped through .."
        );
        assert!(!repo.root.join(format!("kernel-{task}.txt")).exists(), "task {task} escaped the sandbox");
    }
    assert_eq!(repo.checkout_snapshot(), before, "the main checkout was overwritten through ..");
    let results = server.tool_results();
    let stopped = results.iter().filter(|r| r.1 && r.2.contains(KERNEL_REFUSAL)).count();
    assert_eq!(
        stopped,
        3 * KERNEL_ESCAPES,
        "the agent runs inside wt sandbox, which stopped it: {results:#?}"
    );
    let denied: Vec<&String> =
        results.iter().filter(|r| r.1 && !r.2.contains(KERNEL_REFUSAL)).map(|r| &r.2).collect();
    assert_eq!(denied.len(), 3 * ESCAPES, "every escape of each worker is denied: {results:#?}");
    assert!(
        denied.iter().all(|reason| reason.contains(".worktrees/c1a0de-")),
        "each denial names the worktree: {denied:#?}"
    );
    assert!(denied.iter().any(|reason| reason.contains("git push is not allowed")), "{denied:#?}");
    assert_eq!(
        results.iter().filter(|r| !r.1).count(),
        3 * HONEST,
        "the honest Write and Bash of each worker ran"
    );
    let transcript = repo.root.join(".git/spectacular/runs/c1a0de/transcripts/task-2-1.jsonl");
    assert!(
        std::fs::read_to_string(transcript).unwrap().contains("\"type\":\"result\""),
        "the transcript is kept"
    );
    // Each task ran as its generated agent (`claude -p --agent wt-c1a0de-task-P-T`): the agent's
    // body, naming its task and worktree, is the system prompt the model received.
    let systems: Vec<String> =
        server.requests.lock().unwrap().iter().map(|r| r["system"].to_string()).collect();
    for (task, worktree) in [("1.1", "c1a0de-main"), ("2.1", "c1a0de-task-2-1"), ("2.2", "c1a0de-task-2-2")] {
        let intro = format!("You are the agent of task {task} ");
        assert!(
            systems.iter().any(|system| system.contains(&intro) && system.contains(worktree)),
            "no request ran as task {task}'s agent: {systems:#?}"
        );
    }
    let main = repo.root.join(".worktrees/c1a0de-main");
    assert!(
        main.join(".claude/agents/wt-c1a0de-task-1-1.md").is_file(),
        "the definition lives in the worktree"
    );
    assert!(repo.git_in(&main, &["status", "--porcelain"]).is_empty(), "and git ignores it");
}

#[test]
fn negative_control_the_same_worker_without_the_guard_escapes() {
    let repo = TestRepo::new();
    let server = ModelServer::start(worker(repo.scratch.clone()));
    let worktree = repo.root.clone();
    let prompt = format!("# Task 9.9: control\n\nWork only inside {} (branch `main`).", worktree.display());
    let mut cmd = repo.command(common::claude_client().to_str().unwrap(), &repo.root);
    cmd.args([
        "-p",
        &prompt,
        "--output-format",
        "stream-json",
        "--verbose",
        "--dangerously-skip-permissions",
    ]);
    cmd.envs(client_env(&server)).env("IS_SANDBOX", "1");
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        Path::new(&repo.scratch.join("escape-9-9.txt")).exists(),
        "without the guard the Write escapes: {:#?}",
        server.tool_results()
    );
}
