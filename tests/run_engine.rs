//! `wt run` end to end against real git and real git-spice: stacks, invariants, failures.

mod common;

use common::TestRepo;

const SEQUENTIAL: &str = r#"
[run]
id = "a1b2c3"

[[phase]]
name = "Foundation"
strategy = "sequential"

[[phase.task]]
name = "Add schema"
run = "echo 'create table users;' > schema.sql"
verify = "grep -q users schema.sql"

[[phase.task]]
name = "Add model"
run = "echo 'struct User;' > model.rs && git add model.rs && git commit -q -m 'agent commit: model'"
"#;

#[test]
fn sequential_phase_stacks_each_task_on_the_previous_one() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", SEQUENTIAL);
    repo.wt(&["run", plan.to_str().unwrap()]).ok();

    let (first, second) = ("a1b2c3-task-1-1-add-schema", "a1b2c3-task-1-2-add-model");
    repo.assert_linear_stack("main", &[first, second]);
    assert_eq!(repo.subjects("main", first), ["[Task 1.1] Add schema"]);
    assert_eq!(repo.subjects(first, second), ["agent commit: model"], "an agent's own commit is kept as is");
    let main_worktree = repo.root.join(".worktrees/a1b2c3-main");
    assert_eq!(repo.git_in(&main_worktree, &["branch", "--show-current"]).trim(), second);
}

const PARALLEL: &str = r#"
[run]
id = "b2c3d4"

[agent]
max_parallel = 3

[[phase]]
name = "Languages"
strategy = "parallel"

[[phase.task]]
name = "French"
run = "echo bonjour > fr.txt"

[[phase.task]]
name = "German"
run = "echo hallo > de.txt"

[[phase.task]]
name = "Spanish"
run = "echo hola > es.txt"
"#;

#[test]
fn parallel_phase_stacks_branches_in_plan_order_and_parks_task_worktrees_in_the_pool() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PARALLEL);
    repo.wt(&["run", plan.to_str().unwrap()]).ok();

    let branches = ["b2c3d4-task-1-1-french", "b2c3d4-task-1-2-german", "b2c3d4-task-1-3-spanish"];
    repo.assert_linear_stack("main", &branches);
    assert_eq!(
        repo.subjects("main", branches[2]),
        ["[Task 1.1] French", "[Task 1.2] German", "[Task 1.3] Spanish"]
    );
    assert_eq!(repo.worktree_folders(), ["b2c3d4-main"], "task worktrees leave their names after stacking");
    let registered: Vec<String> = repo
        .git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|line| line.strip_prefix("worktree ").map(str::to_owned))
        .collect();
    assert_eq!(repo.parked().len(), 3, "each task worktree waits in the pool for the next task");
    assert_eq!(registered.len(), 2 + 3, "git records the checkout, the main worktree and the pool's");
    let main_worktree = repo.root.join(".worktrees/b2c3d4-main");
    assert_eq!(repo.git_in(&main_worktree, &["branch", "--show-current"]).trim(), branches[2]);
    for file in ["fr.txt", "de.txt", "es.txt"] {
        assert!(main_worktree.join(file).exists(), "{file} is in the top of the stack");
    }
}

#[test]
fn mixed_plan_makes_one_linear_stack_across_phases() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        r#"
[run]
id = "c3d4e5"
[[phase]]
strategy = "sequential"
[[phase.task]]
name = "one"
run = "echo 1 > one"
[[phase]]
strategy = "parallel"
[[phase.task]]
name = "two"
run = "echo 2 > two"
[[phase.task]]
name = "three"
run = "echo 3 > three"
[[phase]]
strategy = "sequential"
[[phase.task]]
name = "four"
run = "test -f one && test -f two && test -f three && echo 4 > four"
"#,
    );
    let events = repo.wt(&["run", plan.to_str().unwrap(), "--json"]);
    events.ok();
    let branches =
        ["c3d4e5-task-1-1-one", "c3d4e5-task-2-1-two", "c3d4e5-task-2-2-three", "c3d4e5-task-3-1-four"];
    repo.assert_linear_stack("main", &branches);
    let finished = events.events().into_iter().find(|e| e["event"] == "run_finished").unwrap();
    assert_eq!(finished["ok"], true);
    let stacked: Vec<&str> =
        finished["stack"].as_array().unwrap().iter().map(|e| e["branch"].as_str().unwrap()).collect();
    assert_eq!(stacked, branches);
}

#[test]
fn the_main_checkout_is_untouched_even_when_dirty_and_on_another_branch() {
    let repo = TestRepo::new();
    repo.git(&["checkout", "--quiet", "-b", "feature"]);
    repo.write("README.md", "# project\nlocal edit, not staged\n");
    repo.write("staged.txt", "staged\n");
    repo.git(&["add", "staged.txt"]);
    repo.write("untracked.txt", "mine\n");
    let before = repo.checkout_snapshot();

    let plan =
        repo.plan("plan.toml", &PARALLEL.replace("id = \"b2c3d4\"", "id = \"b2c3d4\"\nbase = \"main\""));
    repo.wt(&["run", plan.to_str().unwrap()]).ok();

    assert_eq!(repo.checkout_snapshot(), before);
    repo.assert_linear_stack(
        "main",
        &["b2c3d4-task-1-1-french", "b2c3d4-task-1-2-german", "b2c3d4-task-1-3-spanish"],
    );
    let exclude = std::fs::read_to_string(repo.root.join(".git/info/exclude")).unwrap();
    assert!(exclude.lines().any(|line| line == "/.worktrees/"), "{exclude}");
}

#[test]
fn parallel_tasks_really_overlap_in_time() {
    let repo = TestRepo::new();
    let stamps = repo.scratch.join("stamps");
    std::fs::create_dir_all(&stamps).unwrap();
    // Each task records when it started and ended; overlap means every task started before any ended.
    let task = |name: &str| {
        format!(
            "[[phase.task]]\nname = \"{name}\"\nrun = \"date +%s%N > {dir}/{name}.start && sleep 0.6 && echo x > {name} && date +%s%N > {dir}/{name}.end\"\n",
            dir = stamps.display()
        )
    };
    let plan = format!(
        "[run]\nid = \"d4e5f6\"\n[agent]\nmax_parallel = 3\n{}[[phase]]\nstrategy = \"parallel\"\n{}{}{}",
        repo.scratch_writable(),
        task("a"),
        task("b"),
        task("c")
    );
    let plan = repo.plan("plan.toml", &plan);
    repo.wt(&["run", plan.to_str().unwrap()]).ok();
    let read =
        |file: &str| -> u128 { std::fs::read_to_string(stamps.join(file)).unwrap().trim().parse().unwrap() };
    let last_start = ["a", "b", "c"].iter().map(|n| read(&format!("{n}.start"))).max().unwrap();
    let first_end = ["a", "b", "c"].iter().map(|n| read(&format!("{n}.end"))).min().unwrap();
    assert!(
        last_start < first_end,
        "tasks ran one after another: last start {last_start} >= first end {first_end}"
    );
}

#[test]
fn max_parallel_one_runs_parallel_tasks_one_at_a_time() {
    let repo = TestRepo::new();
    let log = repo.scratch.join("order");
    let task = |name: &str| {
        format!(
            "[[phase.task]]\nname = \"{name}\"\nrun = \"echo start >> {log} && sleep 0.2 && echo end >> {log} && echo x > {name}\"\n",
            log = log.display()
        )
    };
    let plan = format!(
        "[run]\nid = \"e5f6a7\"\n{}[[phase]]\nstrategy = \"parallel\"\n{}{}",
        repo.scratch_writable(),
        task("a"),
        task("b")
    );
    let plan = repo.plan("plan.toml", &plan);
    repo.wt(&["run", plan.to_str().unwrap(), "--max-parallel", "1"]).ok();
    assert_eq!(std::fs::read_to_string(&log).unwrap(), "start\nend\nstart\nend\n");
}

#[test]
fn the_base_moving_on_during_the_run_does_not_fail_it() {
    // You keep committing on main while the run works: the run's stack stays on the main it
    // started from, which is still a stack git-spice can restack later.
    let repo = TestRepo::new();
    let moved = repo.scratch.join("moved");
    let plan = repo.plan(
        "plan.toml",
        &format!(
            "[run]\nid = \"ba5e00\"\n[[phase]]\nstrategy = \"sequential\"\n[[phase.task]]\nname = \"first\"\n\
             run = '''for i in $(seq 100); do [ -e {moved} ] && break; sleep 0.1; done; echo one > one.txt'''\n\
             [[phase.task]]\nname = \"second\"\nrun = 'echo two > two.txt'\n\
             [[phase]]\nstrategy = \"parallel\"\n[[phase.task]]\nname = \"third\"\nrun = 'echo three > three.txt'\n\
             [[phase.task]]\nname = \"fourth\"\nrun = 'echo four > four.txt'\n",
            moved = moved.display()
        ),
    );
    let mut cmd = repo.command(env!("CARGO_BIN_EXE_wt"), &repo.root);
    let run = cmd
        .args(["run", plan.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Your commit lands once the first task's agent works: its branch is made on main's tip by
    // then (a commit before `branch create` would only give the run a newer start).
    let events = repo.root.join(".git/spectacular/runs/ba5e00/events.jsonl");
    let started = || std::fs::read_to_string(&events).is_ok_and(|log| log.contains(r#""activity":"agent""#));
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !started() {
        assert!(std::time::Instant::now() < deadline, "the first task's agent never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    repo.write("yours.txt", "yours\n");
    repo.git(&["add", "yours.txt"]);
    repo.git(&["commit", "--quiet", "-m", "yours, during the run"]);
    std::fs::write(&moved, "").unwrap();
    let out = run.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    let shown = format!("{stdout}{stderr}");
    assert!(shown.contains("main moved on during the run (1 new commit(s))"), "{shown}");
    // The advice works: the stack then sits on the new main.
    let advice = shown.split("To move it onto the new main: ").nth(1).unwrap().lines().next().unwrap();
    let followed = repo.command("bash", &repo.root).args(["-c", advice]).output().unwrap();
    assert!(followed.status.success(), "{advice}: {}", String::from_utf8_lossy(&followed.stderr));
    repo.assert_linear_stack(
        "main",
        &[
            "ba5e00-task-1-1-first",
            "ba5e00-task-1-2-second",
            "ba5e00-task-2-1-third",
            "ba5e00-task-2-2-fourth",
        ],
    );
}
