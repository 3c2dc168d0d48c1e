//! Attacks on the check after each task, from a red team's report: a task that leaves the git
//! folders it may write in a state meant to break the check or to make wt's own git (which runs
//! outside the sandbox) do something. Each must fail the task (exit 1, not an internal error) and
//! leave nothing outside changed.

mod common;

use std::path::PathBuf;

use common::TestRepo;

fn plan(repo: &TestRepo, id: &str, run: &str) -> PathBuf {
    repo.plan(
        "plan.toml",
        &format!(
            "{}[run]\nid = \"{id}\"\n[[phase]]\nstrategy = \"sequential\"\n[[phase.task]]\nname = \"attack\"\n\
             run = '''{run}'''\n",
            repo.scratch_writable()
        ),
    )
}

fn rev(repo: &TestRepo, name: &str) -> String {
    repo.git(&["rev-parse", name]).trim().to_owned()
}

/// The task commits work first, so moving a branch to HEAD changes something.
const WORK: &str = "echo work > work.txt && git add work.txt && git commit -qm work && \
                    A=$(git rev-parse --git-dir) && C=$(git rev-parse --git-common-dir)";

/// Runs one attack; returns wt's stdout after asserting the task failed as a task.
fn attack(repo: &TestRepo, id: &str, script: &str) -> String {
    let out = repo.wt(&["run", plan(repo, id, &format!("{WORK} && {script}")).to_str().unwrap()]);
    assert_eq!(
        out.code(),
        1,
        "the task must fail, the run must not crash\n{}\n{}",
        out.stdout(),
        out.stderr()
    );
    assert!(out.stdout().contains("the task changed what it may not"), "{}", out.stdout());
    out.stdout()
}

#[test]
fn a_nested_repository_cannot_make_wts_git_run_its_fsmonitor() {
    let repo = TestRepo::new();
    let marker = repo.scratch.join("fsmonitor-ran");
    let script = format!(
        "git init -q sub && git -C sub commit -q --allow-empty -m s && \
         printf '[core]\\n\\tfsmonitor = \"touch {}; false\"\\n' >> sub/.git/config && \
         git add sub && git commit -qm sub && echo left > leftover.txt",
        marker.display()
    );
    let stdout = attack(&repo, "c4a001", &script);
    assert!(stdout.contains("made a git repository inside the worktree"), "{stdout}");
    assert!(!marker.exists(), "wt's own git ran the nested repository's fsmonitor");
    let worktree = repo.root.join(".worktrees/c4a001-main");
    assert!(worktree.join("sub/.git-disabled-by-wt").exists());
    repo.wt(&["cleanup", "c4a001", "--force"]).ok();
    assert!(!marker.exists(), "cleanup ran it");
}

#[test]
fn a_worktree_config_is_removed_before_wts_git_reads_it() {
    let repo = TestRepo::new();
    repo.git(&["config", "extensions.worktreeConfig", "true"]);
    let marker = repo.scratch.join("worktree-config-ran");
    let script = format!(
        "printf '[core]\\n\\tfsmonitor = \"touch {}; false\"\\n' > $A/config.worktree && echo left > leftover.txt",
        marker.display()
    );
    let stdout = attack(&repo, "c4a002", &script);
    assert!(stdout.contains("config.worktree (put back)"), "{stdout}");
    assert!(!marker.exists());
}

#[test]
fn wrecked_links_and_refs_are_put_back_and_fail_the_task() {
    for (id, script) in [
        ("c4a003", "git update-ref refs/heads/main HEAD && echo garbage > $A/HEAD"),
        ("c4a004", "git update-ref refs/heads/main HEAD && rm .git && mkdir -p .git/x"),
        ("c4a005", "git update-ref refs/heads/main HEAD && rm $A/commondir && mkdir $A/commondir"),
        ("c4a006", "echo \"ref: refs/heads/$WT_BRANCH\" > $C/refs/heads/main"),
        ("c4a007", "git update-ref refs/heads/main HEAD && chmod 000 $A"),
        ("c4a008", "git update-ref refs/heads/main HEAD && ln -s loop $C/refs/heads/loop"),
    ] {
        let repo = TestRepo::new();
        let main = rev(&repo, "main");
        let stdout = attack(&repo, id, script);
        assert_eq!(rev(&repo, "main"), main, "{id}: main is back\n{stdout}");
        assert_eq!(repo.git(&["symbolic-ref", "-q", "HEAD"]).trim(), "refs/heads/main", "{id}");
        repo.git(&["worktree", "list"]);
        repo.git(&["status", "--porcelain"]);
        let head = repo.git_in(&repo.root.join(format!(".worktrees/{id}-main")), &["symbolic-ref", "HEAD"]);
        assert_eq!(head.trim(), format!("refs/heads/{id}-task-1-1-attack"), "{id}");
    }
}

#[test]
fn symlinks_planted_for_wts_git_to_write_through_are_removed() {
    let repo = TestRepo::new();
    let outside = repo.scratch.join("outside.txt");
    std::fs::write(&outside, "outside\n").unwrap();
    let script = format!(
        "ln -sf {out} $A/COMMIT_EDITMSG && ln -sf {out} $A/logs/HEAD && \
         ln -sf {out} $C/logs/refs/heads/$WT_BRANCH && echo left > leftover.txt",
        out = outside.display()
    );
    let stdout = attack(&repo, "c4a009", &script);
    assert!(stdout.contains("as a symlink (removed)"), "{stdout}");
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "outside\n", "wt's git wrote through a symlink");
}

#[test]
fn a_lock_left_on_your_branch_is_removed() {
    let repo = TestRepo::new();
    let stdout = attack(&repo, "c4a010", "touch $C/refs/heads/main.lock && sleep 1.2");
    assert!(stdout.contains("main.lock (removed)"), "{stdout}");
    repo.git(&["commit", "--quiet", "--allow-empty", "-m", "yours, after the run"]);
}

#[test]
fn a_task_cannot_move_its_siblings_branch() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        r#"
[run]
id = "c4a011"
[[phase]]
strategy = "parallel"
[[phase.task]]
name = "attacker"
run = '''sleep 0.5 && echo evil > evil.txt && git add evil.txt && git commit -qm evil && git update-ref refs/heads/c4a011-task-1-2-victim HEAD'''
[[phase.task]]
name = "victim"
run = '''echo good > good.txt'''
"#,
    );
    let out = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(out.code(), 1, "{}\n{}", out.stdout(), out.stderr());
    assert!(out.stdout().contains("moved refs/heads/c4a011-task-1-2-victim"), "{}", out.stdout());
    let victim = repo.git(&["log", "--format=%s", "c4a011-task-1-2-victim"]);
    assert!(!victim.contains("evil"), "{victim}");
}

#[test]
fn a_branch_planted_for_a_task_that_has_not_started_is_refused() {
    // A task's branch made by someone else between its claim and its placement (by a task of
    // another run, say, whose check allows that run's branches) at a commit of their choosing:
    // the task must not start on it.
    let repo = TestRepo::new();
    repo.git(&["commit", "--quiet", "--allow-empty", "-m", "older"]);
    repo.git(&["commit", "--quiet", "--allow-empty", "-m", "base"]);
    let older = rev(&repo, "HEAD~1");
    let plan = plan(&repo, "c4a012", "echo work > work.txt");
    let crashed = repo.wt_with_env(&["run", plan.to_str().unwrap()], &[("WT_CRASH_AT", "claim@1.1:after")]);
    assert!(crashed.stderr().contains("aborting at step"), "{}", crashed.stderr());
    repo.git(&["branch", "c4a012-task-1-1-attack", &older]);
    let resumed = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_ne!(resumed.code(), 0, "{}\n{}", resumed.stdout(), resumed.stderr());
    assert!(
        resumed
            .stderr()
            .contains("branch c4a012-task-1-1-attack already exists and was not created by run c4a012"),
        "{}",
        resumed.stderr()
    );
    let worktree = repo.root.join(".worktrees/c4a012-main");
    assert!(!worktree.join("work.txt").exists(), "the task ran on the planted branch");
}

#[test]
fn a_task_whose_wt_was_killed_is_checked_when_the_run_resumes() {
    let repo = TestRepo::new();
    let marker = repo.scratch.join("attacked");
    // The first attempt plants a branch; wt is killed right after its agent, before the check.
    let script = format!(
        "if [ ! -e {marker} ]; then touch {marker} && git update-ref refs/heads/planted HEAD; fi; echo work > work.txt",
        marker = marker.display()
    );
    let plan = plan(&repo, "c4a013", &script);
    let crashed = repo.wt_with_env(&["run", plan.to_str().unwrap()], &[("WT_CRASH_AT", "agent@1.1:after")]);
    assert!(crashed.stderr().contains("aborting at step"), "{}", crashed.stderr());
    assert!(!repo.git(&["branch", "--list", "planted"]).is_empty(), "the attack did not happen");
    let resumed = repo.wt(&["run", plan.to_str().unwrap()]);
    let shown = format!("{}\n{}", resumed.stdout(), resumed.stderr());
    assert!(
        shown.contains("in the attempt wt was killed during") && shown.contains("created refs/heads/planted"),
        "{shown}"
    );
    assert!(repo.git(&["branch", "--list", "planted"]).is_empty(), "the planted branch is still there");
    assert_eq!(resumed.code(), 0, "the task runs again and passes: {}", resumed.stderr());
}
