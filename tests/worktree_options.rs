//! A fresh worktree beyond `git worktree add`, through `wt run` and a plan's `[worktree]` table:
//! `sparse` checks out only the folders named (the branch still holds the rest), `copy` brings
//! ignored folders of the main checkout along (and says once how), `setup` runs once in each fresh
//! worktree inside its sandbox before the agent — not again in the same worktree, not in a
//! recycled one — and a setup that fails or leaves files git would commit fails its task.

mod common;

use common::TestRepo;

/// A repository with folders `api/`, `web/`, a top file, and `node_modules/` ignored.
fn repo() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".gitignore", "node_modules/\n");
    repo.write("api/server.txt", "api\n");
    repo.write("web/page.txt", "web\n");
    repo.write("top.txt", "top\n");
    repo.git(&["add", "--all"]);
    repo.git(&["commit", "--quiet", "-m", "folders"]);
    repo
}

fn plan(repo: &TestRepo, id: &str, worktree: &str, phases: &str) -> String {
    let text = format!("[run]\nid = \"{id}\"\n[worktree]\n{worktree}\n{phases}");
    repo.plan(&format!("{id}.toml"), &text).to_str().unwrap().to_owned()
}

fn task(name: &str, run: &str) -> String {
    format!("[[phase.task]]\nname = \"{name}\"\nrun = \"{run}\"\n")
}

fn log(repo: &TestRepo, run_id: &str, task: &str) -> String {
    let path = repo.root.join(format!(".git/spectacular/runs/{run_id}/logs/task-{task}.log"));
    std::fs::read_to_string(path).unwrap_or_default()
}

#[test]
fn a_sparse_worktree_has_only_its_folders_and_its_branch_keeps_the_rest() {
    let repo = repo();
    // Each task fails unless it finds exactly the sparse checkout.
    let check = "test -f api/server.txt && test -f top.txt && test ! -e web";
    let phases = format!(
        "[[phase]]\nstrategy = \"sequential\"\n{}[[phase]]\nstrategy = \"parallel\"\n{}",
        task("first", &format!("{check} && echo 1 > api/first.txt")),
        task("second", &format!("{check} && echo 2 > api/second.txt")),
    );
    let out = repo.wt(&["run", &plan(&repo, "5a0001", "sparse = [\"api\"]", &phases)]);
    assert_eq!(out.code(), 0, "{}\n{}", out.stdout(), out.stderr());
    let files = repo.git(&["ls-tree", "-r", "--name-only", "5a0001-task-2-1-second"]);
    for file in ["api/first.txt", "api/second.txt", "api/server.txt", "web/page.txt", "top.txt"] {
        assert!(files.lines().any(|line| line == file), "{file} is in the branch: {files}");
    }
    assert_eq!(
        repo.git(&["show", "--name-only", "--format=", "5a0001-task-2-1-second"]).trim(),
        "api/second.txt",
        "the folders left out are not deleted by the task's commit"
    );
    assert!(repo.root.join("web/page.txt").exists(), "the main checkout is whole");
}

#[test]
fn the_folders_a_sparse_worktree_leaves_out_are_not_uncommitted_files() {
    // git status shows nothing in a sparse worktree: the files outside its cone are skip-worktree.
    // The checks after setup and verify, and `wt cleanup`, must not take them for files left behind.
    let repo = repo();
    let phases = format!(
        "[[phase]]\nstrategy = \"sequential\"\n{}verify = \"true\"\n",
        task("first", "echo 1 > api/first.txt")
    );
    let out = repo.wt(&["run", &plan(&repo, "5a0002", "sparse = [\"api\"]\nsetup = \"true\"", &phases)]);
    assert_eq!(out.code(), 0, "{}\n{}", out.stdout(), out.stderr());
    let cleanup = repo.wt(&["cleanup", "5a0002"]);
    assert_eq!(cleanup.code(), 0, "{}\n{}", cleanup.stdout(), cleanup.stderr());
}

#[test]
fn copy_brings_ignored_folders_of_the_main_checkout_into_fresh_worktrees() {
    let repo = repo();
    repo.write("node_modules/left-pad/index.js", "module.exports = 1\n");
    let phases = format!(
        "[[phase]]\nstrategy = \"parallel\"\n{}",
        task("uses deps", "test -f node_modules/left-pad/index.js && echo ok > used.txt"),
    );
    let out = repo.wt(&["run", &plan(&repo, "c0b100", "copy = [\"node_modules\"]", &phases)]);
    assert_eq!(out.code(), 0, "{}\n{}", out.stdout(), out.stderr());
    let said = format!("{}{}", out.stdout(), out.stderr());
    assert_eq!(said.matches("fresh worktrees get node_modules from the main checkout").count(), 1, "{said}");
    assert!(said.contains("copied: this file system cannot clone files"), "ext4 has no reflink: {said}");
    let committed = repo.git(&["show", "--name-only", "--format=", "c0b100-task-1-1-uses-deps"]);
    assert_eq!(committed.trim(), "used.txt", "the copy stays ignored, out of the commit");

    // Only ignored paths, inside the checkout: anything else is refused before a worktree is made.
    for (copy, problem) in [("\"top.txt\"", "is not ignored by git"), ("\"../x\"", "without `..`")] {
        let id = if copy.contains("..") { "c0b102" } else { "c0b101" };
        let refused = repo.wt(&["run", &plan(&repo, id, &format!("copy = [{copy}]"), &phases)]);
        assert_eq!(refused.code(), 2, "{}", refused.stderr());
        assert!(refused.stderr().contains(problem), "{}", refused.stderr());
        assert!(!repo.root.join(format!(".worktrees/{id}-task-1-1")).exists());
    }
}

#[test]
fn setup_runs_once_per_fresh_worktree_in_its_sandbox_before_the_agent() {
    let repo = repo();
    // What setup makes goes where a recycled worktree keeps it (node_modules/ by default).
    let setup = "setup = \"mkdir -p node_modules && echo ran >> node_modules/.setup-log && touch \\\"$HOME/escaped\\\" 2>/dev/null; true\"";
    let ready = |name: &str| task(name, "test -f node_modules/.setup-log && echo x >> work.txt");
    let phases = format!(
        "[[phase]]\nstrategy = \"sequential\"\n{}{}[[phase]]\nstrategy = \"parallel\"\n{}{}",
        ready("one"),
        ready("two"),
        ready("three"),
        ready("four"),
    );
    let out = repo.wt(&["run", &plan(&repo, "5e7000", setup, &phases)]);
    assert_eq!(out.code(), 0, "{}\n{}", out.stdout(), out.stderr());
    let ran: Vec<&str> = ["1-1", "1-2", "2-1", "2-2"]
        .into_iter()
        .filter(|task| log(&repo, "5e7000", task).contains("setup: mkdir -p node_modules"))
        .collect();
    assert_eq!(ran, ["1-1", "2-1", "2-2"], "once in the main worktree, once in each task's");
    assert!(!repo.home.join("escaped").exists(), "setup runs inside the sandbox");

    // A second run takes the first run's two parked task worktrees — warm, so not set up again —
    // for its main worktree and one task; the other task's worktree is fresh.
    let out = repo.wt(&["run", &plan(&repo, "5e7001", setup, &phases)]);
    assert_eq!(out.code(), 0, "{}\n{}", out.stdout(), out.stderr());
    let ran: Vec<&str> = ["1-1", "2-1", "2-2"]
        .into_iter()
        .filter(|task| log(&repo, "5e7001", task).contains("setup:"))
        .collect();
    assert_eq!(ran.len(), 1, "only the fresh worktree is set up: {ran:?}");
    assert_ne!(ran, ["1-1"], "the main worktree came from the pool");
}

#[test]
fn a_failing_setup_or_one_that_leaves_files_fails_its_task() {
    let repo = repo();
    let phases = format!("[[phase]]\nstrategy = \"parallel\"\n{}", task("t", "echo x > work.txt"));
    let out = repo.wt(&["run", &plan(&repo, "5e7100", "setup = \"exit 3\"", &phases)]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    let status = repo.wt(&["status", "5e7100"]).stdout();
    assert!(status.contains("setup `exit 3` exited with status 3"), "{status}");

    let out = repo.wt(&["run", &plan(&repo, "5e7101", "setup = \"echo x > generated.txt\"", &phases)]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    let status = repo.wt(&["status", "5e7101"]).stdout();
    assert!(
        status.contains("setup left files git does not ignore") && status.contains("generated.txt"),
        "{status}"
    );
}

#[test]
fn under_wt_step_setup_runs_before_the_first_subagent_is_dispatched() {
    let repo = repo();
    let setup = "setup = \"mkdir -p node_modules && echo ran > node_modules/.setup-log\"";
    let phases = ONE_SUBAGENT_TASK;
    let plan = plan(&repo, "5e7200", setup, phases);
    let out = repo.wt(&["step", &plan, "--json"]);
    let step: serde_json::Value = serde_json::from_str(out.stdout().trim()).unwrap();
    assert_eq!(step["status"], "dispatch", "{step:#}");
    let worktree = repo.root.join(".worktrees/5e7200-task-1-1");
    assert!(worktree.join("node_modules/.setup-log").is_file(), "set up before the subagent comes");
    assert!(log(&repo, "5e7200", "1-1").contains("setup: mkdir -p node_modules"));

    let failing = plan_failing(&repo);
    let out = repo.wt(&["step", &failing, "--json"]);
    let step: serde_json::Value = serde_json::from_str(out.stdout().trim()).unwrap();
    assert_eq!(step["status"], "failed", "a failed setup dispatches nothing: {step:#}");
    assert!(step.to_string().contains("setup `exit 4` exited with status 4"), "{step:#}");
}

fn plan_failing(repo: &TestRepo) -> String {
    plan(repo, "5e7201", "setup = \"exit 4\"", ONE_SUBAGENT_TASK)
}

/// One parallel phase of one task for a subagent.
const ONE_SUBAGENT_TASK: &str =
    "[[phase]]\nstrategy = \"parallel\"\n[[phase.task]]\nname = \"t\"\nprompt = \"x\"\n";
