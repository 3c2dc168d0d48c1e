//! `wt cleanup` removes exactly what one run owns, refuses to lose work, and can run twice.

mod common;

use std::process::Stdio;
use std::time::{Duration, Instant};

use common::TestRepo;

fn plan(id: &str) -> String {
    format!(
        "[run]\nid = \"{id}\"\n[[phase]]\n[[phase.task]]\nname = \"one\"\nrun = \"echo {id} > one\"\n\
         [[phase]]\nstrategy = \"parallel\"\n[[phase.task]]\nname = \"two\"\nrun = \"echo {id} > two\"\n\
         [[phase.task]]\nname = \"three\"\nrun = \"echo {id} > three\"\n"
    )
}

fn run_plan(repo: &TestRepo, id: &str) {
    let path = repo.plan(&format!("{id}.toml"), &plan(id));
    repo.wt(&["run", path.to_str().unwrap()]).ok();
}

fn worktree_names(repo: &TestRepo) -> Vec<String> {
    repo.worktree_folders()
}

#[test]
fn cleanup_removes_only_its_run_and_keeps_every_branch() {
    let repo = TestRepo::new();
    run_plan(&repo, "aaaaaa");
    run_plan(&repo, "bbbbbb");
    let before = repo.checkout_snapshot();
    let branches_before =
        repo.git(&["for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads"]);

    let out = repo.wt(&["cleanup", "aaaaaa"]).ok();
    assert!(out.contains("parked worktree") && out.contains("aaaaaa-main in the pool"), "{out}");
    assert!(out.contains("kept 3 branch(es)"), "{out}");
    assert_eq!(worktree_names(&repo), ["bbbbbb-main"]);
    assert_eq!(
        repo.git(&["for-each-ref", "--format=%(refname:short) %(objectname)", "refs/heads"]),
        branches_before,
        "no branch was deleted or moved"
    );
    assert!(!repo.git(&["worktree", "list"]).contains("aaaaaa"), "git's records of the run are gone");
    assert!(!repo.root.join(".git/spectacular/runs/aaaaaa").exists());
    let status = repo.wt(&["status"]).ok();
    assert!(!status.contains("aaaaaa") && status.contains("run bbbbbb"), "{status}");
    assert_eq!(repo.checkout_snapshot(), before);
    repo.assert_linear_stack(
        "main",
        &["bbbbbb-task-1-1-one", "bbbbbb-task-2-1-two", "bbbbbb-task-2-2-three"],
    );

    let again = repo.wt(&["cleanup", "aaaaaa"]).ok();
    assert!(again.contains("kept 3 branch(es)") || again.contains("nothing left"), "{again}");
    assert_eq!(worktree_names(&repo), ["bbbbbb-main"]);
}

#[test]
fn cleanup_refuses_a_dirty_worktree_without_force_and_loses_nothing() {
    let repo = TestRepo::new();
    run_plan(&repo, "cccccc");
    let main = repo.root.join(".worktrees/cccccc-main");
    std::fs::write(main.join("notes.txt"), "my unsaved notes").unwrap();
    std::fs::write(main.join("one"), "edited").unwrap();

    let refused = repo.wt(&["cleanup", "cccccc"]);
    assert_eq!(refused.code(), 6, "{}", refused.stderr());
    assert!(refused.stderr().contains("cccccc-main has uncommitted files: "), "{}", refused.stderr());
    assert!(
        refused.stderr().contains("notes.txt") && refused.stderr().contains("one"),
        "{}",
        refused.stderr()
    );
    assert!(refused.stderr().contains("--force"), "{}", refused.stderr());
    assert_eq!(std::fs::read_to_string(main.join("notes.txt")).unwrap(), "my unsaved notes");
    assert!(repo.root.join(".git/spectacular/runs/cccccc/manifest.json").exists(), "nothing was removed");

    let forced: serde_json::Value =
        serde_json::from_str(&repo.wt(&["cleanup", "cccccc", "--force", "--json"]).ok()).unwrap();
    assert!(worktree_names(&repo).is_empty());
    assert_eq!(
        forced[0]["removed_worktrees"][0],
        main.to_str().unwrap(),
        "a dirty worktree is never recycled"
    );
    assert_eq!(forced[0]["parked_worktrees"], serde_json::json!([]));
    assert!(repo.branch_exists("cccccc-task-1-1-one"));
}

#[test]
fn delete_branches_deletes_merged_branches_only_unless_forced() {
    let repo = TestRepo::new();
    run_plan(&repo, "dddddd");
    let refused = repo.wt(&["cleanup", "dddddd", "--delete-branches"]);
    assert_eq!(refused.code(), 6, "{}", refused.stderr());
    assert!(refused.stderr().contains("not merged into main"), "{}", refused.stderr());
    assert!(repo.branch_exists("dddddd-task-2-2-three"));
    assert!(repo.root.join(".worktrees/dddddd-main").exists(), "a refused cleanup removes nothing");

    repo.git(&["merge", "--quiet", "--ff-only", "dddddd-task-2-2-three"]);
    let out = repo.wt(&["cleanup", "dddddd", "--delete-branches"]).ok();
    assert!(out.contains("deleted branch dddddd-task-1-1-one"), "{out}");
    assert!(repo.git(&["branch", "--list", "dddddd-*"]).trim().is_empty());
    assert!(!repo.spice_log().keys().any(|name| name.starts_with("dddddd")), "git-spice forgot them");

    run_plan(&repo, "eeeeee");
    repo.wt(&["cleanup", "eeeeee", "--delete-branches", "--force"]).ok();
    assert!(repo.git(&["branch", "--list", "eeeeee-*"]).trim().is_empty());
}

#[test]
fn an_active_run_is_not_cleaned_up() {
    let repo = TestRepo::new();
    let marker = repo.scratch.join("started");
    let slow = format!(
        "[run]\nid = \"ffffff\"\n{}[[phase]]\n[[phase.task]]\nname = \"slow\"\nrun = \"touch {} && sleep 2 && echo x > x\"\n",
        repo.scratch_writable(),
        marker.display()
    );
    let path = repo.plan("slow.toml", &slow);
    let mut cmd = repo.command(env!("CARGO_BIN_EXE_wt"), &repo.root);
    let child = cmd
        .args(["run", path.to_str().unwrap()])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = Instant::now();
    while !marker.exists() {
        assert!(start.elapsed() < Duration::from_secs(20));
        std::thread::sleep(Duration::from_millis(20));
    }
    let refused = repo.wt(&["cleanup", "ffffff", "--force"]);
    assert_eq!(refused.code(), 4, "{}", refused.stderr());
    assert!(refused.stderr().contains("run ffffff is active"), "{}", refused.stderr());
    assert!(repo.root.join(".worktrees/ffffff-main").exists());
    assert!(child.wait_with_output().unwrap().status.success());
}

#[test]
fn cleanup_all_takes_finished_runs_and_leaves_failed_ones() {
    let repo = TestRepo::new();
    run_plan(&repo, "111111");
    let failing = repo.plan(
        "fail.toml",
        "[run]\nid = \"222222\"\n[[phase]]\n[[phase.task]]\nname = \"bad\"\nrun = \"exit 1\"\n",
    );
    assert_eq!(repo.wt(&["run", failing.to_str().unwrap()]).code(), 1);
    let out = repo.wt(&["cleanup", "--all"]).ok();
    assert!(out.contains("run 111111: cleaned up"), "{out}");
    assert_eq!(worktree_names(&repo), ["222222-main"]);
}

#[test]
fn a_cleanup_killed_midway_finishes_when_run_again() {
    let repo = TestRepo::new();
    run_plan(&repo, "abcabc");
    let killed = repo.wt_with_env(&["cleanup", "abcabc"], &[("WT_CRASH_AT", "cleanup-state")]);
    assert_ne!(killed.code(), 0);
    repo.wt(&["cleanup", "abcabc"]).ok();
    assert!(worktree_names(&repo).is_empty());
    assert!(!repo.root.join(".git/spectacular/runs/abcabc").exists());
    assert!(repo.branch_exists("abcabc-task-2-2-three"));
}

#[test]
fn a_damaged_manifest_hides_no_other_run_and_cleanup_still_removes_its_run() {
    let repo = TestRepo::new();
    run_plan(&repo, "aaaa01");
    run_plan(&repo, "bbbb02");
    std::fs::write(repo.root.join(".git/spectacular/runs/aaaa01/manifest.json"), "{ torn").unwrap();

    let out = repo.wt(&["status"]);
    assert_eq!(out.code(), 5, "damaged state is reported: {}", out.stderr());
    assert!(out.stdout().contains("bbbb02"), "the other run is still listed: {}", out.stdout());
    assert!(
        out.stderr().contains("run aaaa01") && out.stderr().contains("wt cleanup aaaa01"),
        "{}",
        out.stderr()
    );
    let json: serde_json::Value = serde_json::from_str(&repo.wt(&["status", "--json"]).stdout()).unwrap();
    let statuses: Vec<(&str, &str)> = json
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["run_id"].as_str().unwrap(), r["status"].as_str().unwrap()))
        .collect();
    assert_eq!(statuses, [("bbbb02", "done"), ("aaaa01", "unreadable")]);

    repo.wt(&["cleanup", "aaaa01"]).ok();
    assert_eq!(worktree_names(&repo), ["bbbb02-main"]);
    assert_eq!(repo.wt(&["status"]).code(), 0);
}
