//! Killed runs resume to the same correct stack, with no commit lost or doubled: crash
//! injection at every named step (`WT_CRASH_AT`), and real `kill -9`.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::TestRepo;

/// Two sequential tasks (one with verify), three parallel ones, and a last sequential one.
/// Every agent is idempotent, as the engine expects of an agent it re-runs.
const PLAN: &str = r#"
[run]
id = "c0ffee"
[[phase]]
strategy = "sequential"
[[phase.task]]
name = "schema"
run = "echo schema > schema.sql"
verify = "test -s schema.sql"
[[phase.task]]
name = "model"
run = "echo model > model.rs"
[[phase]]
strategy = "parallel"
[[phase.task]]
name = "api"
run = "echo api > api.rs"
[[phase.task]]
name = "cli"
run = "echo cli > cli.rs"
[[phase.task]]
name = "docs"
run = "echo docs > docs.md"
[[phase]]
strategy = "sequential"
[[phase.task]]
name = "wire up"
run = "test -f api.rs && test -f cli.rs && echo main > main.rs"
"#;

const BRANCHES: [&str; 6] = [
    "c0ffee-task-1-1-schema",
    "c0ffee-task-1-2-model",
    "c0ffee-task-2-1-api",
    "c0ffee-task-2-2-cli",
    "c0ffee-task-2-3-docs",
    "c0ffee-task-3-1-wire-up",
];

/// The run finished: one linear stack, each branch holding exactly its task's one commit.
fn assert_complete_stack(repo: &TestRepo) {
    repo.assert_linear_stack("main", &BRANCHES);
    let mut below = "main".to_owned();
    for branch in BRANCHES {
        let subjects = repo.subjects(&below, branch);
        assert_eq!(subjects.len(), 1, "{branch} should hold exactly one commit, has {subjects:?}");
        below = branch.to_owned();
    }
    let top = repo.root.join(".worktrees/c0ffee-main");
    for file in ["schema.sql", "model.rs", "api.rs", "cli.rs", "docs.md", "main.rs"] {
        assert!(top.join(file).exists(), "{file} is missing from the top of the stack");
    }
    assert_eq!(repo.git_in(&top, &["branch", "--show-current"]).trim(), BRANCHES[5]);
    assert_eq!(repo.worktree_folders(), ["c0ffee-main"], "only the main worktree stays");
    assert!(repo.parked().len() <= 3, "the three task worktrees went to the pool, or were removed");
}

fn crash_then_resume(crash_at: &str) {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let before = repo.checkout_snapshot();
    let crashed = repo.wt_with_env(&["run", plan.to_str().unwrap()], &[("WT_CRASH_AT", crash_at)]);
    assert_ne!(crashed.code(), 0, "WT_CRASH_AT={crash_at} did not crash:\n{}", crashed.stderr());
    assert!(crashed.stderr().contains("aborting at step"), "WT_CRASH_AT={crash_at}: {}", crashed.stderr());
    let resumed = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(
        resumed.code(),
        0,
        "resume after WT_CRASH_AT={crash_at} failed:\n{}\n{}",
        resumed.stdout(),
        resumed.stderr()
    );
    assert_complete_stack(&repo);
    assert_eq!(repo.checkout_snapshot(), before, "the main checkout changed (WT_CRASH_AT={crash_at})");
}

macro_rules! crash_tests {
    ($($name:ident: [$($step:literal),+ $(,)?];)+) => {$(
        #[test]
        fn $name() {
            for step in [$($step),+] {
                crash_then_resume(step);
            }
        }
    )+};
}

crash_tests! {
    crash_during_prepare_resumes: ["exclude", "spice-init", "spice-init:after", "worktree-add@main", "worktree-fill@main", "worktree-add@main:after", "manifest:after"];
    crash_around_a_sequential_branch_resumes: ["claim@1.1:after", "branch-create@1.1", "branch-create@1.1:after", "branch-create@1.2:after"];
    crash_around_a_sequential_agent_resumes: ["agent@1.1", "agent@1.1:after", "commit@1.1:after", "verify@1.1", "verify@1.1:after", "agent@3.1:after"];
    // A parallel phase's branches are all created before its first task starts, last one first
    // (2.3, then 2.2 `--below` it, then 2.1): the first crash point of each target is there.
    crash_while_preparing_parallel_tasks_resumes: ["claim@2.3:after", "branch-create@2.3:after", "branch-create@2.2", "branch-create@2.2:after", "branch-create@2.1", "worktree-add@2.1", "worktree-fill@2.2", "worktree-add@2.2:after"];
    crash_around_parallel_agents_resumes: ["agent@2.2", "agent@2.1:after", "commit@2.3", "commit@2.2:after"];
    // git-spice already records the phase's branches in plan order, so stacking is one
    // `upstack onto` of the second branch that restacks everything above it.
    crash_during_linearization_resumes: ["release@2.1", "release@2.2:after", "upstack-onto@c0ffee-task-2-2-cli", "upstack-onto@c0ffee-task-2-2-cli:after", "checkout-top@c0ffee-task-2-3-docs", "finish"];
}

/// The steps a run journaled, as `step@target` in order (intents only).
fn journaled_steps(repo: &TestRepo) -> Vec<String> {
    let events =
        std::fs::read_to_string(repo.root.join(".git/spectacular/runs/c0ffee/events.jsonl")).unwrap();
    events
        .lines()
        .map(|line| serde_json::from_str::<serde_json::Value>(line).unwrap())
        .filter(|event| event["event"] == "step" && event["at"] == "intent")
        .map(|event| format!("{}@{}", event["step"].as_str().unwrap(), event["target"].as_str().unwrap()))
        .collect()
}

#[test]
fn a_parallel_phase_is_stacked_by_one_upstack_onto_with_no_base_left_to_record() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    repo.wt(&["run", plan.to_str().unwrap()]).ok();
    assert_complete_stack(&repo);
    let steps = journaled_steps(&repo);
    let stacking: Vec<&String> = steps
        .iter()
        .filter(|step| step.starts_with("upstack-onto") || step.starts_with("retarget"))
        .collect();
    assert_eq!(stacking, ["upstack-onto@c0ffee-task-2-2-cli"], "{steps:?}");
    let created: Vec<&String> = steps.iter().filter(|step| step.starts_with("branch-create@2.")).collect();
    assert_eq!(created[..3], ["branch-create@2.3", "branch-create@2.2", "branch-create@2.1"], "{steps:?}");
}

/// A stand-in for git-spice (`WT_GIT_SPICE`) that passes every call on to the real one, except
/// a call whose arguments contain `intercept`: it runs `instead` (a shell command, in the
/// directory wt called it in) and then kills wt with SIGKILL, as a kill in the middle of that
/// git-spice call would leave things.
fn git_spice_killing_wt(repo: &TestRepo, intercept: &str, instead: &str) -> Vec<(String, String)> {
    let path = std::env::var_os("PATH").unwrap();
    let dirs: Vec<PathBuf> = std::env::split_paths(&path).collect();
    let real = ["git-spice", "gs"]
        .iter()
        .flat_map(|name| dirs.iter().map(move |dir| dir.join(name)))
        .find(|path| path.is_file())
        .expect("git-spice on PATH");
    let wrapper = repo.scratch.join("git-spice-killing-wt");
    let script = format!(
        "#!/bin/sh\ncase \"$*\" in *\"{intercept}\"*) {instead}; kill -KILL $PPID; exit 1;; esac\nexec \"{}\" \"$@\"\n",
        real.display()
    );
    std::fs::write(&wrapper, script).unwrap();
    std::fs::set_permissions(&wrapper, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    vec![
        ("WT_GIT_SPICE".to_owned(), wrapper.display().to_string()),
        ("REAL_GS".to_owned(), real.display().to_string()),
    ]
}

fn run_with(repo: &TestRepo, plan: &Path, env: &[(String, String)]) -> common::WtOutput {
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    repo.wt_with_env(&["run", plan.to_str().unwrap()], &env)
}

#[test]
fn a_phase_killed_half_stacked_is_finished_by_the_resume() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let before = repo.checkout_snapshot();
    // Half of the phase's restack: cli moves onto api; docs, recorded on cli, is not replayed.
    let env = git_spice_killing_wt(
        &repo,
        "upstack onto c0ffee-task-2-1-api --branch c0ffee-task-2-2-cli",
        "\"$REAL_GS\" --no-prompt branch restack --branch c0ffee-task-2-2-cli </dev/null",
    );
    let killed = run_with(&repo, &plan, &env);
    assert_ne!(killed.code(), 0, "{}", killed.stderr());
    let log = repo.spice_log();
    assert!(log["c0ffee-task-2-2-cli"]["down"].get("needsRestack").is_none(), "{log:?}");
    assert_eq!(log["c0ffee-task-2-3-docs"]["down"]["name"], "c0ffee-task-2-2-cli");
    assert_eq!(log["c0ffee-task-2-3-docs"]["down"]["needsRestack"], true, "{log:?}");

    let resumed = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(resumed.code(), 0, "{}\n{}", resumed.stdout(), resumed.stderr());
    assert_complete_stack(&repo);
    assert_eq!(repo.checkout_snapshot(), before);
}

/// A kill inside `git-spice branch create --below` after git made the branch and before
/// git-spice recorded it: the resume tracks the branch on the phase base, so the branch above it
/// is not recorded on it, and stacking records that base first (`retarget`). Crashes at that
/// step, before and after it, resume too.
#[test]
fn a_branch_git_spice_never_recorded_below_the_next_is_put_in_its_place_when_stacking() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let before = repo.checkout_snapshot();
    let env = git_spice_killing_wt(
        &repo,
        "branch create c0ffee-task-2-2-cli --target c0ffee-task-2-3-docs --below",
        "git branch c0ffee-task-2-2-cli c0ffee-task-1-2-model",
    );
    let killed = run_with(&repo, &plan, &env);
    assert_ne!(killed.code(), 0, "{}", killed.stderr());
    assert!(repo.branch_exists("c0ffee-task-2-2-cli"));
    for crash_at in ["retarget@c0ffee-task-2-3-docs", "retarget@c0ffee-task-2-3-docs:after"] {
        let crashed = repo.wt_with_env(&["run", plan.to_str().unwrap()], &[("WT_CRASH_AT", crash_at)]);
        assert!(crashed.stderr().contains("aborting at step"), "{crash_at}: {}", crashed.stderr());
    }
    let resumed = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(resumed.code(), 0, "{}\n{}", resumed.stdout(), resumed.stderr());
    assert_complete_stack(&repo);
    assert_eq!(repo.checkout_snapshot(), before);
    let retargets = journaled_steps(&repo).into_iter().filter(|step| step.starts_with("retarget@")).count();
    assert_eq!(retargets, 2, "the retarget cut short by the first crash ran again, the done one did not");
}

#[test]
fn a_worktree_whose_add_was_cut_short_mid_checkout_is_made_again_not_used() {
    let repo = TestRepo::new();
    repo.write("kept.txt", "a file of the base\n");
    repo.git(&["add", "kept.txt"]);
    repo.git(&["commit", "--quiet", "-m", "kept"]);
    let plan = repo.plan("plan.toml", PLAN);
    let args = ["run", plan.to_str().unwrap(), "--max-parallel", "1"];
    repo.wt_with_env(&args, &[("WT_CRASH_AT", "worktree-add@2.1")]);
    // What `git worktree add` killed while it wrote the files leaves: a worktree git records and
    // opens, with part of its files missing.
    let worktree = repo.root.join(".worktrees/c0ffee-task-2-1");
    repo.git(&[
        "worktree",
        "add",
        "--quiet",
        "--detach",
        worktree.to_str().unwrap(),
        "c0ffee-task-1-2-model",
    ]);
    std::fs::remove_file(worktree.join("kept.txt")).unwrap();
    repo.wt(&["run", plan.to_str().unwrap()]).ok();
    assert_complete_stack(&repo);
    let changed = repo.git(&["show", "--name-status", "--format=", "c0ffee-task-2-1-api"]);
    assert_eq!(changed, "A\tapi.rs\n", "the task committed only its own file");
    assert!(repo.root.join(".worktrees/c0ffee-main/kept.txt").exists());
}

/// Two parallel phases: the first phase's task worktrees go to the pool of recycled worktrees when
/// it is stacked, and the second phase's come out of it.
const POOL_PLAN: &str = r#"
[run]
id = "0ab0ab"
[[phase]]
strategy = "parallel"
[[phase.task]]
name = "a"
run = "echo a > a.txt"
[[phase.task]]
name = "b"
run = "echo b > b.txt"
[[phase]]
strategy = "parallel"
[[phase.task]]
name = "c"
run = "test -f a.txt && echo c > c.txt"
[[phase.task]]
name = "d"
run = "test -f b.txt && echo d > d.txt"
"#;

const POOL_BRANCHES: [&str; 4] =
    ["0ab0ab-task-1-1-a", "0ab0ab-task-1-2-b", "0ab0ab-task-2-1-c", "0ab0ab-task-2-2-d"];

/// Killed while a worktree moved into or out of the pool, the run resumes to its stack, and the
/// pool holds only clean worktrees git records, with nothing left under way.
fn crash_in_the_pool_then_resume(crash_at: &str) {
    let repo = TestRepo::new();
    let plan = repo.plan("pool.toml", POOL_PLAN);
    let before = repo.checkout_snapshot();
    let crashed = repo.wt_with_env(&["run", plan.to_str().unwrap()], &[("WT_CRASH_AT", crash_at)]);
    assert!(crashed.stderr().contains("aborting at step"), "WT_CRASH_AT={crash_at}: {}", crashed.stderr());
    let resumed = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(
        resumed.code(),
        0,
        "resume after WT_CRASH_AT={crash_at}:\n{}\n{}",
        resumed.stdout(),
        resumed.stderr()
    );
    repo.assert_linear_stack("main", &POOL_BRANCHES);
    let mut below = "main".to_owned();
    for branch in POOL_BRANCHES {
        assert_eq!(repo.subjects(&below, branch).len(), 1, "{branch} (WT_CRASH_AT={crash_at})");
        below = branch.to_owned();
    }
    assert_eq!(repo.worktree_folders(), ["0ab0ab-main"], "WT_CRASH_AT={crash_at}");
    assert!(repo.parked().len() <= 2, "WT_CRASH_AT={crash_at}");
    let registered = repo.git(&["worktree", "list", "--porcelain"]);
    assert_eq!(
        registered.lines().filter(|line| line.starts_with("worktree ")).count(),
        2 + repo.parked().len(),
        "{registered}"
    );
    assert_eq!(repo.checkout_snapshot(), before, "the main checkout changed (WT_CRASH_AT={crash_at})");
}

#[test]
fn crash_while_a_worktree_moves_into_the_pool_resumes() {
    for step in ["pool-park@1.1", "pool-park-moved@1.2", "pool-park@1.2:after", "release@1.1:after"] {
        crash_in_the_pool_then_resume(step);
    }
}

#[test]
fn crash_while_a_worktree_moves_out_of_the_pool_resumes() {
    for step in ["pool-take@2.1", "pool-take-moved@2.1", "pool-take-moved@2.2", "pool-take@2.2:after"] {
        crash_in_the_pool_then_resume(step);
    }
}

#[test]
fn a_cleanup_killed_while_it_parks_the_main_worktree_finishes_when_run_again() {
    for step in ["pool-park@main", "pool-park-moved@main", "pool-park@main:after"] {
        let repo = TestRepo::new();
        let plan = repo.plan("pool.toml", POOL_PLAN);
        repo.wt(&["run", plan.to_str().unwrap()]).ok();
        let killed = repo.wt_with_env(&["cleanup", "0ab0ab"], &[("WT_CRASH_AT", step)]);
        assert!(killed.stderr().contains("aborting at step"), "WT_CRASH_AT={step}: {}", killed.stderr());
        repo.wt(&["cleanup", "0ab0ab"]).ok();
        assert!(repo.worktree_folders().is_empty(), "WT_CRASH_AT={step}");
        assert!(!repo.root.join(".git/spectacular/runs/0ab0ab").exists());
        let parked = repo.parked();
        assert!((2..=3).contains(&parked.len()), "WT_CRASH_AT={step}: {parked:?}");
        let registered = repo.git(&["worktree", "list", "--porcelain"]);
        assert_eq!(
            registered.lines().filter(|line| line.starts_with("worktree ")).count(),
            1 + parked.len(),
            "{registered}"
        );
        assert!(POOL_BRANCHES.iter().all(|branch| repo.branch_exists(branch)));
    }
}

/// A run of `wt` in its own process group, so a test can kill it alone or with its agents.
fn spawn_wt(repo: &TestRepo, plan: &Path) -> Child {
    use std::os::unix::process::CommandExt;
    let mut cmd = repo.command(env!("CARGO_BIN_EXE_wt"), &repo.root);
    cmd.args(["run", plan.to_str().unwrap()]).stdout(Stdio::null()).stderr(Stdio::null()).process_group(0);
    cmd.spawn().unwrap()
}

fn kill(target: &str) {
    let status = Command::new("kill").args(["-KILL", "--", target]).status().unwrap();
    assert!(status.success(), "kill {target} failed");
}

fn wait_for(path: &Path, deadline: Duration) {
    let start = Instant::now();
    while !path.exists() {
        assert!(start.elapsed() < deadline, "{} never appeared", path.display());
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Parallel agents that take a while and mark when they started.
fn slow_plan(repo: &TestRepo, marks: &Path) -> PathBuf {
    let task = |name: &str| {
        format!(
            "[[phase.task]]\nname = \"{name}\"\nrun = \"touch {marks}/{name}.started && sleep 1 && echo {name} > {name}.txt\"\n",
            marks = marks.display()
        )
    };
    let plan = format!(
        "[run]\nid = \"5105e0\"\n{}[[phase]]\n[[phase.task]]\nname = \"first\"\nrun = \"echo 1 > first.txt\"\n\
         [[phase]]\nstrategy = \"parallel\"\n{}{}{}",
        repo.scratch_writable(),
        task("a"),
        task("b"),
        task("c")
    );
    repo.plan("slow.toml", &plan)
}

fn assert_slow_plan_complete(repo: &TestRepo) {
    let branches = ["5105e0-task-1-1-first", "5105e0-task-2-1-a", "5105e0-task-2-2-b", "5105e0-task-2-3-c"];
    repo.assert_linear_stack("main", &branches);
    let mut below = "main".to_owned();
    for branch in branches {
        assert_eq!(repo.subjects(&below, branch).len(), 1, "{branch}");
        below = branch.to_owned();
    }
}

#[test]
fn kill_9_of_the_whole_process_group_at_several_moments_resumes_correctly() {
    for delay_ms in [150, 500, 1300] {
        let repo = TestRepo::new();
        let marks = repo.scratch.join("marks");
        std::fs::create_dir_all(&marks).unwrap();
        let plan = slow_plan(&repo, &marks);
        let before = repo.checkout_snapshot();
        let child = spawn_wt(&repo, &plan);
        std::thread::sleep(Duration::from_millis(delay_ms));
        kill(&format!("-{}", child.id()));
        let _ = child.wait_with_output();
        let resumed = repo.wt(&["run", plan.to_str().unwrap()]);
        assert_eq!(
            resumed.code(),
            0,
            "resume after kill at {delay_ms} ms:\n{}\n{}",
            resumed.stdout(),
            resumed.stderr()
        );
        assert_slow_plan_complete(&repo);
        assert_eq!(repo.checkout_snapshot(), before);
    }
}

#[test]
fn kill_9_of_wt_alone_waits_for_its_orphaned_agents_then_resumes() {
    let repo = TestRepo::new();
    let marks = repo.scratch.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let plan = slow_plan(&repo, &marks);
    let mut child = spawn_wt(&repo, &plan);
    for name in ["a", "b", "c"] {
        wait_for(&marks.join(format!("{name}.started")), Duration::from_secs(20));
    }
    kill(&child.id().to_string());
    let _ = child.wait();
    let resumed = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(resumed.code(), 0, "{}\n{}", resumed.stdout(), resumed.stderr());
    assert!(
        resumed.stderr().contains("from the interrupted run is still working in"),
        "{}",
        resumed.stderr()
    );
    assert_slow_plan_complete(&repo);
}

#[test]
fn three_runs_of_one_plan_at_once_each_make_their_own_complete_stack() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", &PLAN.replace("id = \"c0ffee\"\n", ""));
    let before = repo.checkout_snapshot();
    let ids = ["aaa111", "bbb222", "ccc333"];
    let children: Vec<Child> = ids
        .iter()
        .map(|id| {
            let mut cmd = repo.command(env!("CARGO_BIN_EXE_wt"), &repo.root);
            cmd.args(["run", plan.to_str().unwrap(), "--run-id", id])
                .stdout(Stdio::piped())
                .stderr(Stdio::piped());
            cmd.spawn().unwrap()
        })
        .collect();
    for (id, child) in ids.iter().zip(children) {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "run {id} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    for id in ids {
        let branches: Vec<String> = BRANCHES.iter().map(|b| b.replace("c0ffee", id)).collect();
        let refs: Vec<&str> = branches.iter().map(String::as_str).collect();
        repo.assert_linear_stack("main", &refs);
        let top = repo.root.join(format!(".worktrees/{id}-main"));
        assert_eq!(repo.git_in(&top, &["branch", "--show-current"]).trim(), refs[5]);
    }
    assert_eq!(repo.checkout_snapshot(), before);
}

#[test]
fn a_second_run_of_the_same_id_is_refused_while_the_first_holds_it() {
    let repo = TestRepo::new();
    let marks = repo.scratch.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let plan = slow_plan(&repo, &marks);
    let child = spawn_wt(&repo, &plan);
    wait_for(&marks.join("a.started"), Duration::from_secs(20));
    let second = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(second.code(), 4, "{}", second.stderr());
    assert!(
        second.stderr().contains(&format!("run 5105e0 is active (process {})", child.id())),
        "{}",
        second.stderr()
    );
    let status = repo.wt(&["status", "5105e0"]).ok();
    assert!(status.contains("running"), "{status}");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
}

#[test]
fn status_marks_a_run_whose_process_died_as_interrupted_with_the_resume_command() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    repo.wt_with_env(&["run", plan.to_str().unwrap()], &[("WT_CRASH_AT", "agent@2.1")]);
    let status: serde_json::Value = serde_json::from_str(&repo.wt(&["status", "--json"]).ok()).unwrap();
    assert_eq!(status[0]["status"], "interrupted");
    assert_eq!(status[0]["resume"], format!("wt resume c0ffee"));
}

#[test]
fn a_half_created_task_worktree_is_moved_aside_and_made_again() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    repo.wt_with_env(&["run", plan.to_str().unwrap()], &[("WT_CRASH_AT", "agent@2.1")]);
    // Killed before it wrote the task's snapshot (else the check of the interrupted task puts the
    // link back first)...
    std::fs::remove_file(repo.root.join(".git/spectacular/runs/c0ffee/watch/task-2-1.json")).unwrap();
    // ...with what a `git worktree add` killed while writing leaves: a folder whose .git file is
    // empty.
    let worktree = repo.root.join(".worktrees/c0ffee-task-2-1");
    std::fs::write(worktree.join(".git"), "").unwrap();
    std::fs::write(worktree.join("stray.txt"), "kept").unwrap();
    let resumed = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(resumed.code(), 0, "{}\n{}", resumed.stdout(), resumed.stderr());
    repo.assert_linear_stack("main", &BRANCHES);
    let aside: Vec<_> = std::fs::read_dir(repo.root.join(".worktrees"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("c0ffee-task-2-1.broken-"))
        .collect();
    assert_eq!(aside.len(), 1, "the broken folder is kept aside, not deleted");
    assert_eq!(std::fs::read_to_string(aside[0].join("stray.txt")).unwrap(), "kept");
}

#[test]
fn a_worktree_folder_left_by_an_interrupted_add_is_made_again_but_a_foreign_one_is_refused() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    // Killed right after journaling the intent to add task 2.1's worktree; git had made the
    // folder but not yet registered it.
    // One task at a time, so task 2.2 has not started when 2.1 is cut short.
    let args = ["run", plan.to_str().unwrap(), "--max-parallel", "1"];
    repo.wt_with_env(&args, &[("WT_CRASH_AT", "worktree-add@2.1")]);
    let worktree = repo.root.join(".worktrees/c0ffee-task-2-1");
    std::fs::create_dir_all(&worktree).unwrap();
    std::fs::write(worktree.join("partial.txt"), "half").unwrap();
    // The place of task 2.2 holds a folder the run never started to make: not ours to move.
    let foreign = repo.root.join(".worktrees/c0ffee-task-2-2");
    std::fs::create_dir_all(&foreign).unwrap();
    let refused = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(refused.code(), 3, "{}", refused.stderr());
    assert!(
        refused.stderr().contains("c0ffee-task-2-2 exists but is not a git worktree"),
        "{}",
        refused.stderr()
    );

    std::fs::remove_dir(&foreign).unwrap();
    repo.wt(&["run", plan.to_str().unwrap()]).ok();
    repo.assert_linear_stack("main", &BRANCHES);
    assert_eq!(
        repo.worktree_folders(),
        ["c0ffee-main"],
        "no agent ever ran in the half-made folder, so it is simply made again"
    );
}
