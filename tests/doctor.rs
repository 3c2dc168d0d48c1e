//! `wt doctor` with and without each dependency on PATH.

mod common;

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use common::TestRepo;
use serde_json::Value;

/// The folder holding `program` on the test's PATH.
fn dir_of(program: &str) -> PathBuf {
    let path = std::env::var_os("PATH").unwrap();
    std::env::split_paths(&path)
        .find(|dir| dir.join(program).is_file())
        .unwrap_or_else(|| panic!("{program} not on PATH"))
}

/// A folder with one executable `name` linking to `target`, or a script.
fn bin_dir(repo: &TestRepo, name: &str, target: Option<&Path>, script: &str) -> PathBuf {
    let dir = repo.scratch.join(format!("bin-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    match target {
        Some(target) => std::os::unix::fs::symlink(target, dir.join(name)).unwrap(),
        None => {
            std::fs::write(dir.join(name), format!("#!/bin/sh\n{script}\n")).unwrap();
            std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }
    dir
}

fn doctor(repo: &TestRepo, dirs: &[PathBuf]) -> (i32, Value) {
    let path = std::env::join_paths(dirs).unwrap();
    let out = repo.wt_with_env(&["doctor", "--json"], &[("PATH", path.to_str().unwrap())]);
    (out.code(), serde_json::from_str(&out.stdout()).unwrap_or_else(|e| panic!("{e}: {}", out.stdout())))
}

fn check<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["checks"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap()
}

#[test]
fn a_machine_with_everything_passes_and_one_without_git_spice_fails_with_the_fix() {
    let repo = TestRepo::new();
    let claude = bin_dir(&repo, "claude", Some(&common::claude_client()), "");
    let (git, go, gs) = (dir_of("git"), dir_of("go"), dir_of("gs"));

    let (code, report) = doctor(&repo, &[git.clone(), go.clone(), gs.clone(), claude.clone()]);
    assert_eq!(code, 0, "{report:#}");
    for name in ["git", "git-spice", "go", "claude"] {
        assert_eq!(check(&report, name)["status"], "ok", "{name}: {report:#}");
    }
    assert!(check(&report, "claude")["detail"].as_str().unwrap().contains("2.1.330"));
    assert_eq!(check(&report, "plugin")["status"], "warn", "the plugin is not installed in this HOME");

    let (code, report) = doctor(&repo, &[git.clone(), go.clone(), claude.clone()]);
    assert_eq!(code, 3);
    let spice = check(&report, "git-spice");
    assert_eq!(spice["status"], "missing");
    assert!(
        spice["fix"].as_str().unwrap().contains("spectacular-tools/git-spice-v0.31.2/bin on PATH"),
        "{spice}"
    );

    let (code, report) = doctor(&repo, &[git.clone(), gs.clone(), claude.clone()]);
    assert_eq!(
        (code, check(&report, "go")["status"].as_str()),
        (0, Some("warn")),
        "Go is only needed to install"
    );
    let (code, report) = doctor(&repo, &[git.clone(), claude]);
    assert_eq!(
        (code, check(&report, "go")["status"].as_str()),
        (3, Some("missing")),
        "no git-spice and no Go"
    );
    let (code, report) = doctor(&repo, &[git, go, gs]);
    assert_eq!((code, check(&report, "claude")["status"].as_str()), (0, Some("warn")));
}

#[test]
fn ghostscript_on_path_is_reported_as_not_git_spice() {
    let repo = TestRepo::new();
    let ghostscript = bin_dir(&repo, "gs", None, "echo 10.02.1");
    let (code, report) = doctor(&repo, &[dir_of("git"), dir_of("go"), ghostscript]);
    assert_eq!(code, 3);
    let spice = check(&report, "git-spice");
    assert_eq!(spice["status"], "missing");
    assert!(spice["detail"].as_str().unwrap().contains("Ghostscript"), "{spice}");
}

#[test]
fn interrupted_runs_and_leftover_worktrees_are_listed_with_their_size_and_fix() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        "[run]\nid = \"d0c70a\"\n[[phase]]\n[[phase.task]]\nname = \"t\"\nrun = \"echo > t\"\n",
    );
    repo.wt_with_env(&["run", plan.to_str().unwrap()], &[("WT_CRASH_AT", "agent@1.1")]);
    std::fs::write(repo.root.join(".worktrees/d0c70a-main/big.bin"), vec![0u8; 100_000]).unwrap();
    let out = repo.wt(&["doctor", "--json"]);
    let report: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert_eq!(report["interrupted_runs"], serde_json::json!(["d0c70a"]));
    let worktree = &report["worktrees"][0];
    assert_eq!(worktree["run_status"], "interrupted");
    assert!(worktree["bytes"].as_u64().unwrap() >= 100_000, "{worktree}");
    assert_eq!(worktree["fix"], "wt resume d0c70a, or wt cleanup d0c70a");
    let text = repo.wt(&["doctor"]).stdout();
    assert!(text.contains("interrupted run    d0c70a"), "{text}");
    assert!(text.contains("KiB, interrupted)"), "{text}");
}

#[test]
fn check_ignore_reports_and_fixes_missing_rules_through_info_exclude() {
    let repo = TestRepo::new();
    let out = repo.wt(&["check-ignore"]);
    assert_eq!(out.code(), 3);
    assert!(out.stdout().contains("NOT ignored /.worktrees/"), "{}", out.stdout());
    assert!(out.stdout().contains("NOT ignored /.claude/agents/wt-*.md"), "{}", out.stdout());
    assert!(out.stderr().contains("wt check-ignore --fix"), "{}", out.stderr());
    let report = |repo: &TestRepo| -> Value {
        serde_json::from_str(&repo.wt(&["doctor", "--json"]).stdout()).unwrap()
    };
    let unfixed = report(&repo);
    for name in ["worktrees ignored", "generated agents ignored"] {
        let found = check(&unfixed, name);
        assert_eq!(found["status"], "warn", "doctor says so too: {found}");
        assert_eq!(found["fix"], "wt check-ignore --fix", "{found}");
    }
    let before = repo.checkout_snapshot();
    let fixed = repo.wt(&["check-ignore", "--fix"]).ok();
    assert!(fixed.contains("ignored     /.worktrees/"), "{fixed}");
    assert!(fixed.contains("ignored     /.claude/agents/wt-*.md"), "generated agents too: {fixed}");
    assert_eq!(repo.checkout_snapshot(), before, "no tracked .gitignore was touched");
    let exclude = std::fs::read_to_string(repo.root.join(".git/info/exclude")).unwrap();
    repo.wt(&["check-ignore", "--fix"]).ok();
    assert_eq!(
        std::fs::read_to_string(repo.root.join(".git/info/exclude")).unwrap(),
        exclude,
        "fixing twice adds nothing"
    );
    let fixed = report(&repo);
    for name in ["worktrees ignored", "generated agents ignored"] {
        assert_eq!(check(&fixed, name)["status"], "ok", "{}", check(&fixed, name));
    }
}

#[test]
fn another_wt_first_on_path_is_named_and_the_plugin_name_still_reaches_this_one() {
    let repo = TestRepo::new();
    let ours = Path::new(env!("CARGO_BIN_EXE_spectacular-wt")).parent().unwrap().to_owned();
    let worktrunk = bin_dir(&repo, "wt", None, "echo 'wt 0.9.1'; exit 2");
    let (_, report) = doctor(&repo, &[worktrunk.clone(), ours.clone(), dir_of("git")]);
    let name = check(&report, "wt on PATH");
    assert_eq!(name["status"], "warn", "{name}");
    assert!(name["detail"].as_str().unwrap().contains("another program"), "{name}");
    assert!(name["detail"].as_str().unwrap().contains(worktrunk.to_str().unwrap()), "{name}");
    assert!(name["fix"].as_str().unwrap().contains("spectacular-wt"), "{name}");

    let (_, report) = doctor(&repo, &[ours.clone(), worktrunk, dir_of("git")]);
    assert_eq!(check(&report, "wt on PATH")["status"], "ok", "{report:#}");
    let (_, report) = doctor(&repo, &[dir_of("git")]);
    let missing = check(&report, "wt on PATH");
    assert!(missing["detail"].as_str().unwrap().contains("spectacular-wt is not on PATH"), "{missing}");
}

#[test]
fn the_sandbox_check_names_the_landlock_abi_or_what_to_do_without_it() {
    let repo = TestRepo::new();
    let out = repo.wt(&["doctor", "--json"]);
    let report: Value = serde_json::from_str(&out.stdout()).unwrap();
    let sandbox = check(&report, "sandbox");
    assert_eq!(sandbox["status"], "ok", "this machine has Landlock: {sandbox}");
    assert!(sandbox["detail"].as_str().unwrap().contains("Landlock ABI"), "{sandbox}");
    let out = repo.wt_with_env(&["doctor", "--json"], &[("WT_SANDBOX_ABI", "0")]);
    let report: Value = serde_json::from_str(&out.stdout()).unwrap();
    let sandbox = check(&report, "sandbox");
    assert_eq!(sandbox["status"], "warn", "{sandbox}");
    assert!(sandbox["detail"].as_str().unwrap().contains("required = false"), "{sandbox}");
    assert!(sandbox["fix"].as_str().unwrap().contains("WT_SANDBOX_ABI"), "{sandbox}");
}

#[test]
fn without_landlock_doctor_says_how_this_repositorys_runs_are_contained() {
    let repo = TestRepo::new();
    let containment = |repo: &TestRepo| {
        let out = repo.wt_with_env(&["doctor", "--json"], &[("WT_SANDBOX_ABI", "0")]);
        let report: Value = serde_json::from_str(&out.stdout()).unwrap();
        (out.code(), check(&report, "containment").clone())
    };
    let (code, refused) = containment(&repo);
    assert_eq!((code, refused["status"].as_str()), (3, Some("missing")), "{refused}");
    assert!(refused["detail"].as_str().unwrap().contains("refused"), "{refused}");
    repo.write(".spectacular/guard.toml", "[sandbox]\nrequired = false\n");
    let (_, policy) = containment(&repo);
    assert_eq!(policy["status"], "warn", "{policy}");
    assert!(policy["detail"].as_str().unwrap().contains("contained by policy only"), "{policy}");
    let out = repo.wt(&["doctor", "--json"]);
    let report: Value = serde_json::from_str(&out.stdout()).unwrap();
    assert!(
        report["checks"].as_array().unwrap().iter().all(|c| c["name"] != "containment"),
        "with Landlock: no such line"
    );
}

#[test]
fn doctor_says_unix_sockets_are_refused_and_warns_when_a_project_allows_them() {
    let repo = TestRepo::new();
    let out = repo.wt(&["doctor", "--json"]);
    let report: Value = serde_json::from_str(&out.stdout()).unwrap();
    let sandbox = check(&report, "sandbox");
    assert!(sandbox["detail"].as_str().unwrap().contains("new Unix sockets are refused"), "{sandbox}");
    repo.write(".spectacular/guard.toml", "[sandbox]\nunix_sockets = \"allow\"\n");
    let out = repo.wt(&["doctor", "--json"]);
    let report: Value = serde_json::from_str(&out.stdout()).unwrap();
    let containment = check(&report, "containment");
    assert_eq!(containment["status"], "warn", "{containment}");
    assert!(containment["detail"].as_str().unwrap().contains("Unix sockets are allowed"), "{containment}");
    assert!(containment["fix"].as_str().unwrap().contains("unix_sockets"), "{containment}");
}
