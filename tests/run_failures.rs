//! Runs that fail: the run stops, nothing is lost, and the output says what to do next.

mod common;

use common::TestRepo;

#[test]
fn a_failed_parallel_task_keeps_its_work_and_lets_its_siblings_finish() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        r#"
[run]
id = "f00001"
[[phase]]
strategy = "parallel"
[[phase.task]]
name = "good one"
run = "echo 1 > one"
[[phase.task]]
name = "bad"
run = "echo half-done > partial.txt && exit 3"
[[phase.task]]
name = "good two"
run = "sleep 0.3 && echo 2 > two"
[[phase]]
strategy = "sequential"
[[phase.task]]
name = "never runs"
run = "echo never > never"
"#,
    );
    let out = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(out.code(), 1, "stderr: {}", out.stderr());
    let stdout = out.stdout();
    assert!(stdout.contains("task 1.2 (bad): the agent exited with status 3"), "{stdout}");
    assert!(stdout.contains("resume with: wt resume f00001"), "{stdout}");
    assert!(stdout.contains("logs: "), "{stdout}");

    let bad_worktree = repo.root.join(".worktrees/f00001-task-1-2");
    assert_eq!(std::fs::read_to_string(bad_worktree.join("partial.txt")).unwrap(), "half-done\n");
    assert!(repo.branch_exists("f00001-task-1-2-bad"));
    for (worktree, branch) in
        [("f00001-task-1-1", "f00001-task-1-1-good-one"), ("f00001-task-1-3", "f00001-task-1-3-good-two")]
    {
        assert_eq!(repo.subjects("main", branch).len(), 1, "sibling {branch} finished and committed");
        assert!(
            repo.root.join(".worktrees").join(worktree).exists(),
            "nothing is removed before the phase succeeds"
        );
    }
    assert!(!repo.branch_exists("f00001-task-2-1-never-runs"), "the run stops after the failed phase");

    let status: serde_json::Value =
        serde_json::from_str(&repo.wt(&["status", "f00001", "--json"]).ok()).unwrap();
    assert_eq!(status[0]["status"], "failed");
    assert_eq!(status[0]["phases"][0]["tasks"][1]["state"], "failed");
    assert_eq!(status[0]["phases"][0]["tasks"][0]["state"], "verified");
}

#[test]
fn a_task_that_changes_nothing_fails_unless_allowed() {
    let repo = TestRepo::new();
    let plan = "[run]\nid = \"f00002\"\n[[phase]]\n[[phase.task]]\nname = \"noop\"\nrun = \"true\"\n";
    let out = repo.wt(&["run", repo.plan("plan.toml", plan).to_str().unwrap()]);
    assert_eq!(out.code(), 1);
    assert!(out.stdout().contains("no changes"), "{}", out.stdout());
    assert!(out.stdout().contains("allow_empty = true"), "{}", out.stdout());

    let allowed =
        plan.replace("f00002", "f00003").replace("run = \"true\"", "run = \"true\"\nallow_empty = true");
    repo.wt(&["run", repo.plan("allowed.toml", &allowed).to_str().unwrap()]).ok();
    assert!(repo.branch_exists("f00003-task-1-1-noop"));
}

#[test]
fn a_failed_verify_keeps_the_commit_and_stops_the_sequence() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        r#"
[run]
id = "f00004"
[[phase]]
[[phase.task]]
name = "writes code"
run = "echo code > code.txt"
verify = "echo checking; exit 7"
[[phase.task]]
name = "second"
run = "echo 2 > two"
"#,
    );
    let out = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(out.code(), 1);
    assert!(out.stdout().contains("verify `echo checking; exit 7` exited with status 7"), "{}", out.stdout());
    assert_eq!(repo.subjects("main", "f00004-task-1-1-writes-code"), ["[Task 1.1] writes code"]);
    assert!(!repo.branch_exists("f00004-task-1-2-second"));
    let log =
        std::fs::read_to_string(repo.root.join(".git/spectacular/runs/f00004/logs/task-1-1.log")).unwrap();
    assert!(log.contains("checking"), "verify output is in the task log: {log}");
}

#[test]
fn running_the_plan_again_after_a_failure_finishes_it_without_redoing_verified_tasks() {
    let repo = TestRepo::new();
    let gate = repo.scratch.join("gate");
    let counter = repo.scratch.join("counter");
    let plan = repo.plan(
        "plan.toml",
        &format!(
            r#"
{sandbox}
[[phase]]
strategy = "parallel"
[[phase.task]]
name = "steady"
run = "echo run >> {counter} && echo s > steady"
[[phase.task]]
name = "flaky"
run = "test -f {gate} && echo f > flaky"
"#,
            counter = counter.display(),
            gate = gate.display(),
            sandbox = repo.scratch_writable()
        ),
    );
    assert_eq!(repo.wt(&["run", plan.to_str().unwrap()]).code(), 1);
    std::fs::write(&gate, "open").unwrap();
    let out = repo.wt(&["run", plan.to_str().unwrap(), "--json"]);
    out.ok();
    assert_eq!(std::fs::read_to_string(&counter).unwrap(), "run\n", "the verified task did not run again");
    let skipped = out.events().into_iter().filter(|e| e["event"] == "task_skipped").count();
    assert_eq!(skipped, 1);
    let run_id = out.events()[0]["run_id"].as_str().unwrap().to_owned();
    repo.assert_linear_stack(
        "main",
        &[&format!("{run_id}-task-1-1-steady"), &format!("{run_id}-task-1-2-flaky")],
    );
}

#[test]
fn a_stuck_agent_is_stopped_at_its_timeout_and_its_work_is_kept() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        "[run]\nid = \"71e0a7\"\n[[phase]]\n[[phase.task]]\nname = \"stuck\"\nrun = \"echo partial > partial.txt && sleep 30\"\ntimeout = \"1s\"\n",
    );
    let started = std::time::Instant::now();
    let out = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    assert!(started.elapsed() < std::time::Duration::from_secs(20), "the timeout stopped it");
    assert!(out.stdout().contains("stopped after the 1 s timeout"), "{}", out.stdout());
    let main = repo.root.join(".worktrees/71e0a7-main");
    assert_eq!(std::fs::read_to_string(main.join("partial.txt")).unwrap(), "partial\n");
}

#[test]
fn parallel_tasks_that_conflict_stop_the_stacking_with_every_commit_kept_and_resume_once_resolved() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        r#"
[run]
id = "c0c0c0"
[[phase]]
strategy = "parallel"
[[phase.task]]
name = "one"
run = "echo one > same.txt"
[[phase.task]]
name = "two"
run = "echo two > same.txt"
[[phase.task]]
name = "three"
run = "echo three > other.txt"
"#,
    );
    let branches = ["c0c0c0-task-1-1-one", "c0c0c0-task-1-2-two", "c0c0c0-task-1-3-three"];
    let out = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    let stderr = out.stderr();
    assert!(stderr.contains(&format!("moving {} onto {} failed", branches[1], branches[0])), "{stderr}");
    assert!(
        stderr.contains(&format!("gs upstack onto {} --branch {}", branches[0], branches[1])),
        "{stderr}"
    );
    let main = repo.root.join(".worktrees/c0c0c0-main");
    assert!(repo.git_in(&main, &["status", "--porcelain"]).is_empty(), "the main worktree is left clean");
    let rebasing = repo.git_in(&main, &["rev-parse", "--git-path", "rebase-merge"]);
    assert!(!main.join(rebasing.trim()).exists(), "no rebase is left under way");
    for branch in branches {
        assert_eq!(repo.subjects("main", branch).len(), 1, "{branch} keeps its own commit");
    }

    // Resolved by hand as the hint says; the run then finishes the stack.
    let gs = |args: &[&str]| repo.command("gs", &main).arg("--no-prompt").args(args).output().unwrap();
    assert!(!gs(&["upstack", "onto", branches[0], "--branch", branches[1]]).status.success());
    std::fs::write(main.join("same.txt"), "one and two\n").unwrap();
    repo.git_in(&main, &["add", "same.txt"]);
    let continued = gs(&["rebase", "continue", "--no-edit"]);
    assert!(continued.status.success(), "{}", String::from_utf8_lossy(&continued.stderr));
    repo.wt(&["run", plan.to_str().unwrap()]).ok();
    repo.assert_linear_stack("main", &branches);
    assert_eq!(std::fs::read_to_string(main.join("same.txt")).unwrap(), "one and two\n");
}
