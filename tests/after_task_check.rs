//! The check after every task: what an agent changed outside its own branch and worktree — refs
//! the kernel sandbox must leave writable, its worktree's link and HEAD, the repository's config
//! and hooks — is put back and the task fails, naming what was done. What others change while a
//! task runs (you, in your checkout) is left alone.

mod common;

use common::TestRepo;

fn plan(repo: &TestRepo, id: &str, run: &str) -> std::path::PathBuf {
    repo.plan(
        "plan.toml",
        &format!(
            r#"
[run]
id = "{id}"
[[phase]]
strategy = "sequential"
[[phase.task]]
name = "sneaky"
run = '''{run}'''
"#
        ),
    )
}

fn rev(repo: &TestRepo, name: &str) -> String {
    repo.git(&["rev-parse", name]).trim().to_owned()
}

#[test]
fn a_branch_the_agent_moved_is_put_back_and_the_task_fails() {
    let repo = TestRepo::new();
    repo.git(&["branch", "feature"]);
    repo.git(&["tag", "v1"]);
    let (main, feature) = (rev(&repo, "main"), rev(&repo, "feature"));
    // The agent commits its work, then moves the user's branches to it and makes a branch of
    // its own: all within refs/heads, which a commit needs writable.
    let run = "echo work > work.txt && git add work.txt && git commit -qm work && \
               git update-ref refs/heads/main HEAD && git branch -f feature HEAD && git branch extra HEAD";
    let out = repo.wt(&["run", plan(&repo, "a7c001", run).to_str().unwrap()]);
    assert_eq!(out.code(), 1, "{}\n{}", out.stdout(), out.stderr());
    let stdout = out.stdout();
    assert!(stdout.contains("task 1.1 (sneaky): the task changed what it may not"), "{stdout}");
    for what in ["moved refs/heads/main from", "moved refs/heads/feature from", "created refs/heads/extra at"]
    {
        assert!(stdout.contains(what), "{what}: {stdout}");
    }
    assert_eq!(rev(&repo, "main"), main, "main is back where it was");
    assert_eq!(rev(&repo, "feature"), feature);
    assert!(!repo.branch_exists("extra"));
    assert_eq!(rev(&repo, "v1"), main, "the tag never moved");
    let task_branch = "a7c001-task-1-1-sneaky";
    assert_eq!(repo.subjects("main", task_branch), ["work"], "the task's own commit is kept");
}

#[test]
fn a_worktree_switched_to_another_branch_is_pointed_back_at_its_own() {
    let repo = TestRepo::new();
    repo.git(&["branch", "other"]);
    let run = "git checkout -q other";
    let out = repo.wt(&["run", plan(&repo, "a7c002", run).to_str().unwrap()]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    assert!(out.stdout().contains("switched"), "{}", out.stdout());
    let worktree = repo.root.join(".worktrees/a7c002-main");
    let head = repo.git_in(&worktree, &["symbolic-ref", "HEAD"]);
    assert_eq!(head.trim(), "refs/heads/a7c002-task-1-1-sneaky");
}

#[test]
fn config_and_hooks_changed_by_a_task_are_put_back() {
    let repo = TestRepo::new();
    let config = std::fs::read(repo.root.join(".git/config")).unwrap();
    let run = "git config --file \"$(git rev-parse --git-common-dir)/config\" core.hooksPath /tmp/evil && \
               printf '#!/bin/sh\\n' > \"$(git rev-parse --git-common-dir)/hooks/post-checkout\" && echo x > x";
    let out = repo.wt(&["run", plan(&repo, "a7c003", run).to_str().unwrap()]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    let stdout = out.stdout();
    assert!(stdout.contains("config (put back)"), "{stdout}");
    assert!(stdout.contains("hooks/post-checkout (removed)"), "{stdout}");
    assert_eq!(std::fs::read(repo.root.join(".git/config")).unwrap(), config);
    assert!(!repo.root.join(".git/hooks/post-checkout").exists());
}

#[test]
fn wt_step_checks_what_a_subagent_changed_against_the_hand_out() {
    let repo = TestRepo::new();
    repo.git(&["branch", "feature"]);
    let feature = rev(&repo, "feature");
    let plan = plan(&repo, "a7c005", "true");
    let out = repo.wt(&["step", plan.to_str().unwrap(), "--json"]);
    assert_eq!(out.code(), 0, "{}", out.stderr());
    // The subagent does its work and moves a branch that is not its own.
    let worktree = repo.root.join(".worktrees/a7c005-main");
    std::fs::write(worktree.join("work.txt"), "work\n").unwrap();
    repo.git_in(&worktree, &["add", "work.txt"]);
    repo.git_in(&worktree, &["commit", "--quiet", "-m", "work"]);
    repo.git_in(&worktree, &["update-ref", "refs/heads/feature", "HEAD"]);
    repo.git_in(&repo.root, &["commit", "--quiet", "--allow-empty", "-m", "yours"]);
    let out = repo.wt(&["step", "a7c005", "--json"]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    let step: serde_json::Value = serde_json::from_str(out.stdout().trim()).unwrap();
    assert_eq!(step["status"], "failed");
    let message = step["message"].as_str().unwrap();
    assert!(message.contains("moved refs/heads/feature"), "{message}");
    assert!(!message.contains("refs/heads/main"), "your commit on main is explained: {message}");
    assert_eq!(rev(&repo, "feature"), feature);
}
