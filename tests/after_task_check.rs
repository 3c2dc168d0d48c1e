//! The check after every task: what an agent changed outside its own branch and worktree — refs
//! the kernel sandbox must leave writable, its worktree's link and HEAD, the repository's config
//! and hooks — is put back and the task fails, naming what was done. What others change while a
//! task runs (you, in your checkout) is left alone.

mod common;

use std::os::unix::fs::PermissionsExt;

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
fn modes_the_kernel_does_not_cover_are_put_back() {
    let repo = TestRepo::new();
    let config = repo.root.join(".git/config");
    let hook = repo.root.join(".git/hooks/pre-commit.sample");
    let mode = |path: &std::path::Path| std::fs::metadata(path).unwrap().permissions().mode();
    let (config_mode, hook_mode) = (mode(&config), mode(&hook));
    // Landlock does not cover chmod: the agent changes the mode of a hook and of the config
    // (the config writable for all).
    let run = "common=$(git rev-parse --git-common-dir) && chmod 0777 \"$common/config\" && \
               chmod 0600 \"$common/hooks/pre-commit.sample\" && echo x > x";
    let out = repo.wt(&["run", plan(&repo, "a7c003", run).to_str().unwrap()]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    let stdout = out.stdout();
    assert!(stdout.contains("config (put back)"), "{stdout}");
    assert!(stdout.contains("pre-commit.sample (put back)"), "{stdout}");
    assert_eq!((mode(&config), mode(&hook)), (config_mode, hook_mode));
}

#[test]
fn contained_by_policy_only_the_check_puts_back_config_and_hooks_it_wrote() {
    let repo = TestRepo::new();
    let config = std::fs::read(repo.root.join(".git/config")).unwrap();
    let run = "common=$(git rev-parse --git-common-dir) && git config --file \"$common/config\" core.hooksPath /tmp/x && \
               printf '#!/bin/sh\\n' > \"$common/hooks/post-checkout\" && echo x > x";
    let plan = plan(&repo, "a7c006", run);
    let text = std::fs::read_to_string(&plan).unwrap();
    std::fs::write(&plan, format!("[sandbox]\nrequired = false\n{text}")).unwrap();
    // A kernel without Landlock, as a test stands it in.
    let out = repo.wt_with_env(&["run", plan.to_str().unwrap()], &[("WT_SANDBOX_ABI", "0")]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    assert!(out.stderr().contains("contained by policy only"), "the run says so: {}", out.stderr());
    let stdout = out.stdout();
    assert!(stdout.contains("config (put back)"), "{stdout}");
    assert!(stdout.contains("hooks/post-checkout (removed)"), "{stdout}");
    assert_eq!(std::fs::read(repo.root.join(".git/config")).unwrap(), config);
    assert!(!repo.root.join(".git/hooks/post-checkout").exists());
    let status = repo.wt(&["status", "a7c006", "--json"]).ok();
    assert!(status.contains("\"containment\": \"policy-only\""), "{status}");
    let status = repo.wt(&["status", "a7c006"]).ok();
    assert!(status.contains("contained by policy only"), "{status}");
}

#[test]
fn your_own_commit_in_your_checkout_during_a_task_is_left_alone() {
    let repo = TestRepo::new();
    let (started, go) = (repo.scratch.join("started"), repo.scratch.join("go"));
    let run = format!(
        "touch {started} && while [ ! -f {go} ]; do sleep 0.05; done && echo work > work.txt",
        started = started.display(),
        go = go.display()
    );
    let plan = plan(&repo, "a7c004", &run);
    let text = std::fs::read_to_string(&plan).unwrap();
    std::fs::write(&plan, format!("{}{text}", repo.scratch_writable())).unwrap();
    let child = repo
        .command(env!("CARGO_BIN_EXE_wt"), &repo.root)
        .args(["run", plan.to_str().unwrap()])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !started.exists() {
        assert!(std::time::Instant::now() < deadline, "the task never started");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // While the task runs, you make a branch in your checkout, commit on it and go back.
    repo.git(&["checkout", "--quiet", "-b", "mine"]);
    repo.write("mine.txt", "mine\n");
    repo.git(&["add", "mine.txt"]);
    repo.git(&["commit", "--quiet", "-m", "mine"]);
    repo.git(&["checkout", "--quiet", "main"]);
    std::fs::write(&go, "").unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(repo.subjects("main", "mine"), ["mine"], "your branch and commit stay");
}

#[test]
fn without_landlock_a_run_is_refused_unless_the_project_allows_policy_only() {
    let repo = TestRepo::new();
    let out = repo.wt_with_env(
        &["run", plan(&repo, "a7c007", "echo x > x").to_str().unwrap()],
        &[("WT_SANDBOX_ABI", "0")],
    );
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(out.stderr().contains("the run's agents cannot be contained"), "{}", out.stderr());
    assert!(out.stderr().contains("[sandbox] required = false"), "{}", out.stderr());
    assert!(!repo.root.join(".worktrees").exists(), "nothing was made");
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
    repo.subagent_starts("spectacular:wt-worker-1", "a1");
    let worktree = repo.root.join(".worktrees/a7c005-main");
    std::fs::write(worktree.join("work.txt"), "work\n").unwrap();
    repo.git_in(&worktree, &["add", "work.txt"]);
    repo.git_in(&worktree, &["commit", "--quiet", "-m", "work"]);
    repo.git_in(&worktree, &["update-ref", "refs/heads/feature", "HEAD"]);
    repo.git_in(&repo.root, &["commit", "--quiet", "--allow-empty", "-m", "yours"]);
    repo.subagent_returns("spectacular:wt-worker-1", "a1");
    let out = repo.wt(&["step", "a7c005", "--json"]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    let step: serde_json::Value = serde_json::from_str(out.stdout().trim()).unwrap();
    assert_eq!(step["status"], "failed");
    let message = step["message"].as_str().unwrap();
    assert!(message.contains("moved refs/heads/feature"), "{message}");
    assert!(!message.contains("refs/heads/main"), "your commit on main is explained: {message}");
    assert_eq!(rev(&repo, "feature"), feature);
}

#[test]
fn a_background_job_cannot_move_a_branch_after_the_check() {
    let repo = TestRepo::new();
    let main = rev(&repo, "main");
    let run = "echo work > work.txt && git add work.txt && git commit -qm work; \
               (sleep 1; git update-ref refs/heads/main HEAD) >/dev/null 2>&1 &";
    let out = repo.wt(&["run", plan(&repo, "a7c008", run).to_str().unwrap()]);
    assert_eq!(out.code(), 0, "{}\n{}", out.stdout(), out.stderr());
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert_eq!(rev(&repo, "main"), main, "the job ended with its task");
}
