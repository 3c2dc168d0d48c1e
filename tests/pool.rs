//! The pool of recycled worktrees through `wt run`, `wt cleanup`, `wt status` and `wt doctor`:
//! nothing of one task reaches the next but ignored build output, a pooled worktree is never
//! handed to two tasks at once, a worktree with state of its own is removed instead, and the
//! options turn it off.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};

use common::TestRepo;
use serde_json::Value;

/// A repository whose `main` ignores `target/` and `.env` and has `lib.rs`.
fn repo_with_ignores() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", "target/\n.env\n");
    repo.write("lib.rs", "pub fn lib() {}\n");
    repo.git(&["add", "--all"]);
    repo.git(&["commit", "--quiet", "-m", "ignores and lib"]);
    repo
}

/// Everything a task can leave in its worktree besides its work: a tracked change git cannot
/// see (skip-worktree), an untracked file (committed by wt), ignored build output, an ignored
/// secret, the generated agent of a Claude task. `n` tells the tasks' tracked files apart.
fn messy_task(n: usize) -> String {
    format!(
        "[[phase.task]]\nname = \"messy {n}\"\nrun = \"echo task {n} >> README{n}.md && echo notes > notes-{n}.txt && \
         mkdir -p target/debug && echo built by {n} > target/debug/app && echo SECRET={n} > .env && \
         mkdir -p .claude/agents && echo agent > .claude/agents/wt-aaaaaa-task-1-{n}.md && \
         echo hidden >> lib.rs && git update-index --skip-worktree lib.rs\"\n"
    )
}

/// A task that writes what its worktree holds, as it starts, to `<scratch>/<name>.report`.
fn reporting_task(repo: &TestRepo, name: &str) -> String {
    let report = repo.scratch.join(format!("{name}.report"));
    format!(
        "[[phase.task]]\nname = \"{name}\"\nrun = \"{{ git rev-parse HEAD; echo ---; ls -A | grep -v '^.git$'; echo ---; \
         cat lib.rs; echo ---; cat target/debug/app; echo ---; git status --porcelain --ignored; echo ---; \
         git ls-files -v | grep -v '^H '; echo ---; cat .git; }} > {report} 2>&1; echo {name} > {name}.txt\"\n",
        report = report.display()
    )
}

fn report(repo: &TestRepo, name: &str) -> Vec<String> {
    let text = std::fs::read_to_string(repo.scratch.join(format!("{name}.report"))).unwrap();
    text.split("---\n").map(str::to_owned).collect()
}

/// The `pool` lines of a run's events.
fn pool_events(repo: &TestRepo, run_id: &str) -> Vec<Value> {
    let events =
        std::fs::read_to_string(repo.root.join(format!(".git/spectacular/runs/{run_id}/events.jsonl")))
            .unwrap_or_default();
    events
        .lines()
        .map(|line| serde_json::from_str::<Value>(line).unwrap())
        .filter(|event| event["event"] == "pool")
        .collect()
}

#[test]
fn nothing_of_one_task_reaches_the_next_tasks_worktree_but_ignored_build_output() {
    let repo = repo_with_ignores();
    let first = format!(
        "[run]\nid = \"aaaaaa\"\n[[phase]]\nstrategy = \"parallel\"\n{}{}",
        messy_task(1),
        messy_task(2)
    );
    let first = repo.plan("first.toml", &first);
    repo.wt(&["run", first.to_str().unwrap()]).ok();
    assert_eq!(repo.parked().len(), 2, "both task worktrees wait in the pool");
    assert!(
        repo.subjects("main", "aaaaaa-task-1-2-messy-2").len() == 2,
        "the tasks' work is on their branches"
    );

    // The next run's main worktree (its sequential task) and its parallel task's worktree both
    // come from the pool.
    let second = format!(
        "[run]\nid = \"bbbbbb\"\n{}[[phase]]\n{}[[phase]]\nstrategy = \"parallel\"\n{}",
        repo.scratch_writable(),
        reporting_task(&repo, "sequential"),
        reporting_task(&repo, "parallel")
    );
    let second = repo.plan("second.toml", &second);
    repo.wt(&["run", second.to_str().unwrap()]).ok();
    let took: Vec<&str> = vec!["main", "2.1"];
    let events = pool_events(&repo, "bbbbbb");
    for target in &took {
        assert!(
            events.iter().any(|e| e["action"] == "took" && e["target"] == *target),
            "{target} was not recycled: {events:?}"
        );
    }
    let base = |branch: &str| repo.git(&["rev-parse", branch]);
    for (name, at, own) in [
        ("sequential", base("main"), ""),
        ("parallel", base("bbbbbb-task-1-1-sequential"), "sequential.txt\n"),
    ] {
        let parts = report(&repo, name);
        assert_eq!(parts[0], at, "{name}: HEAD is not the task's base");
        assert_eq!(parts[1], format!(".gitignore\nREADME.md\nlib.rs\n{own}target\n"), "{name}: files");
        assert_eq!(parts[2], "pub fn lib() {}\n", "{name}: a hidden change leaked");
        assert!(parts[3].starts_with("built by "), "{name}: build output was not kept: {}", parts[3]);
        assert_eq!(parts[4], "!! target/\n", "{name}: status");
        assert_eq!(parts[5], "", "{name}: index flags carried over");
        assert!(
            parts[6].contains("/worktrees/aaaaaa-task-1-"),
            "{name}: not a recycled worktree: {}",
            parts[6]
        );
    }
    repo.assert_linear_stack("main", &["bbbbbb-task-1-1-sequential", "bbbbbb-task-2-1-parallel"]);
}

/// A run of a plan, started in the background.
fn spawn_run(repo: &TestRepo, plan: &Path) -> Child {
    let mut cmd = repo.command(env!("CARGO_BIN_EXE_wt"), &repo.root);
    cmd.args(["run", plan.to_str().unwrap()]).stdout(Stdio::piped()).stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

#[test]
fn two_runs_at_once_never_get_the_same_worktree_at_the_same_time() {
    let repo = TestRepo::new();
    let marks = repo.scratch.join("marks");
    std::fs::create_dir_all(&marks).unwrap();
    let task = |run: &str, n: usize| {
        format!(
            "[[phase.task]]\nname = \"t{n}\"\nrun = \"echo start $(date +%s%N) > {marks}/{run}-{n} && cat .git >> {marks}/{run}-{n} && \
             sleep 2 && echo end $(date +%s%N) >> {marks}/{run}-{n} && echo {n} > t{n}.txt\"\n",
            marks = marks.display()
        )
    };
    let plan = |run: &str, tasks: usize| {
        let tasks: String = (1..=tasks).map(|n| task(run, n)).collect();
        let text = format!(
            "[run]\nid = \"{run}\"\n{}[agent]\nmax_parallel = 4\n[[phase]]\nstrategy = \"parallel\"\n{tasks}",
            repo.scratch_writable()
        );
        repo.plan(&format!("{run}.toml"), &text)
    };
    repo.wt(&["run", plan("aaaaaa", 4).to_str().unwrap()]).ok();
    assert_eq!(repo.parked().len(), 4);

    let runs: Vec<(&str, Child)> =
        ["bbbbbb", "cccccc"].into_iter().map(|run| (run, spawn_run(&repo, &plan(run, 3)))).collect();
    for (run, child) in runs {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "run {run} failed: {}", String::from_utf8_lossy(&out.stderr));
    }
    // Each task's worktree (its admin folder) and when the task ran in it.
    let mut by_admin: BTreeMap<String, Vec<(u128, u128, String)>> = BTreeMap::new();
    for entry in std::fs::read_dir(&marks).unwrap() {
        let path = entry.unwrap().path();
        let text = std::fs::read_to_string(&path).unwrap();
        let number = |prefix: &str| {
            text.lines().find_map(|l| l.strip_prefix(prefix)).unwrap().trim().parse::<u128>().unwrap()
        };
        let admin = text.lines().find_map(|l| l.strip_prefix("gitdir: ")).unwrap().to_owned();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        by_admin.entry(admin).or_default().push((number("start "), number("end "), name));
    }
    for (admin, uses) in &by_admin {
        for (i, a) in uses.iter().enumerate() {
            for b in &uses[i + 1..] {
                assert!(a.1 < b.0 || b.1 < a.0, "{admin} was handed to {} and {} at once", a.2, b.2);
            }
        }
    }
    let took: usize = ["bbbbbb", "cccccc"]
        .iter()
        .flat_map(|run| pool_events(&repo, run))
        .filter(|e| e["action"] == "took")
        .count();
    assert!(took >= 4, "the pool's four worktrees were taken ({took} takes)");
    let recycled = by_admin.keys().filter(|admin| admin.contains("/worktrees/aaaaaa-")).count();
    assert!(recycled >= 3, "tasks of the second runs worked in the first run's worktrees: {by_admin:?}");
    repo.parked();
}

#[test]
fn a_task_worktree_with_a_ref_of_its_own_is_removed_not_recycled() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        "[run]\nid = \"aaaaaa\"\n[[phase]]\nstrategy = \"parallel\"\n[[phase.task]]\nname = \"ref\"\n\
         run = \"git update-ref refs/worktree/mine HEAD && echo x > x\"\n[[phase.task]]\nname = \"plain\"\n\
         run = \"echo y > y\"\n",
    );
    repo.wt(&["run", plan.to_str().unwrap()]).ok();
    let events = pool_events(&repo, "aaaaaa");
    let removed = events.iter().find(|e| e["action"] == "removed").expect("one worktree removed");
    assert_eq!(removed["target"], "1.1");
    assert!(removed["reason"].as_str().unwrap().contains("refs of its own"), "{removed}");
    assert_eq!(repo.parked().len(), 1, "the other one is parked");
    assert!(!repo.git(&["worktree", "list"]).contains("task-1-1"));
}

#[test]
fn recycling_is_off_when_the_project_says_so_unless_the_plan_turns_it_on() {
    let repo = TestRepo::new();
    repo.write(".spectacular/worktree.toml", "recycle = false\n");
    let plan = |id: &str, table: &str| {
        repo.plan(
            &format!("{id}.toml"),
            &format!(
                "[run]\nid = \"{id}\"\n{table}[[phase]]\nstrategy = \"parallel\"\n[[phase.task]]\nname = \"a\"\n\
                 run = \"echo a > a\"\n[[phase.task]]\nname = \"b\"\nrun = \"echo b > b\"\n"
            ),
        )
    };
    repo.wt(&["run", plan("aaaaaa", "").to_str().unwrap()]).ok();
    assert!(repo.parked().is_empty());
    assert_eq!(repo.pool()["recycle"], false);
    let doctor: Value = serde_json::from_str(&repo.wt(&["doctor", "--json"]).stdout()).unwrap();
    let check = doctor["checks"].as_array().unwrap().iter().find(|c| c["name"] == "worktree pool").unwrap();
    assert!(check["detail"].as_str().unwrap().contains("recycling is off"), "{check}");

    repo.wt(&["run", plan("bbbbbb", "[worktree]\nrecycle = true\npool_size = 1\n").to_str().unwrap()]).ok();
    assert_eq!(repo.parked().len(), 1, "pool_size caps the pool");
    let refused = repo.wt(&["run", plan("cccccc", "[worktree]\nrecycel = true\n").to_str().unwrap()]);
    assert_eq!(refused.code(), 2, "{}", refused.stderr());
    assert!(refused.stderr().contains("unknown field `recycel`"), "{}", refused.stderr());
}

#[test]
fn cleanup_parks_the_main_worktree_the_next_run_takes_and_cleanup_pool_empties_it() {
    let repo = TestRepo::new();
    let plan = |id: &str| {
        repo.plan(
            &format!("{id}.toml"),
            &format!(
                "[run]\nid = \"{id}\"\n[[phase]]\n[[phase.task]]\nname = \"one\"\nrun = \"echo {id} > one\"\n"
            ),
        )
    };
    repo.wt(&["run", plan("aaaaaa").to_str().unwrap()]).ok();
    let cleaned: Value = serde_json::from_str(&repo.wt(&["cleanup", "aaaaaa", "--json"]).ok()).unwrap();
    let main = repo.root.join(".worktrees/aaaaaa-main");
    assert_eq!(cleaned[0]["parked_worktrees"][0]["worktree"], main.to_str().unwrap());
    assert_eq!(cleaned[0]["removed_worktrees"], serde_json::json!([]));
    let parked = repo.parked();
    assert_eq!(parked.len(), 1);
    let status = repo.wt(&["status"]).ok();
    assert!(status.contains("pool of recycled worktrees: 1 worktree(s)"), "{status}");
    let pool = repo.pool();
    assert_eq!(pool["worktrees"][0]["origin"], "aaaaaa-main");
    assert!(pool["worktrees"][0]["bytes"].as_u64().unwrap() > 0);

    repo.wt(&["run", plan("bbbbbb").to_str().unwrap()]).ok();
    let took = pool_events(&repo, "bbbbbb");
    assert_eq!(took[0]["action"], "took", "{took:?}");
    assert_eq!(took[0]["target"], "main");
    assert!(repo.parked().is_empty());
    let top = repo.root.join(".worktrees/bbbbbb-main");
    assert_eq!(std::fs::read_to_string(top.join("one")).unwrap(), "bbbbbb\n");

    repo.wt(&["cleanup", "bbbbbb"]).ok();
    let emptied: Value = serde_json::from_str(&repo.wt(&["cleanup", "--pool", "--json"]).ok()).unwrap();
    assert_eq!(emptied["removed_worktrees"].as_array().unwrap().len(), 1);
    assert!(emptied["freed_bytes"].as_u64().unwrap() > 0);
    assert!(repo.parked().is_empty());
    assert!(!repo.root.join(".worktrees/.pool").exists());
    let registered: Vec<PathBuf> = repo
        .git(&["worktree", "list", "--porcelain"])
        .lines()
        .filter_map(|l| l.strip_prefix("worktree ").map(PathBuf::from))
        .collect();
    assert_eq!(registered, std::slice::from_ref(&repo.root));
    assert_eq!(repo.wt(&["cleanup", "--pool"]).ok().trim(), "the pool of recycled worktrees is empty");
}
