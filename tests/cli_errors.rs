//! Bad input and missing pieces: each gets a message naming the object, the problem and the fix,
//! a documented exit code, and changes nothing.

mod common;

use std::path::Path;

use common::TestRepo;

const PLAN: &str = "[run]\nid = \"abcdef\"\n[[phase]]\n[[phase.task]]\nname = \"t\"\nrun = \"echo > t\"\n";

fn assert_nothing_created(repo: &TestRepo) {
    assert!(!repo.root.join(".worktrees").exists(), "a .worktrees folder was created");
    assert!(!repo.root.join(".git/spectacular").exists(), "run state was created");
    assert!(repo.git(&["branch", "--list"]).trim() == "* main", "a branch was created");
}

#[test]
fn a_missing_base_branch_is_located_in_the_plan() {
    let repo = TestRepo::new();
    let plan =
        repo.plan("plan.toml", &PLAN.replace("id = \"abcdef\"", "id = \"abcdef\"\nbase = \"develop\""));
    let out = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(out.code(), 2);
    let expected = format!("error: {}:3:8: base branch `develop` does not exist", plan.display());
    assert!(out.stderr().starts_with(&expected), "{}", out.stderr());
    assert!(out.stderr().contains("hint: name an existing branch"), "{}", out.stderr());
    assert_nothing_created(&repo);
}

#[test]
fn a_bad_plan_is_refused_with_its_location_before_anything_is_created() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", &PLAN.replace("name = \"t\"", "nmae = \"t\""));
    let out = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(out.code(), 2);
    assert!(out.stderr().contains("plan.toml:5:1: unknown field `nmae`"), "{}", out.stderr());
    assert_nothing_created(&repo);
}

#[test]
fn a_bad_project_file_is_named_once_with_its_line_and_column_before_anything_is_created() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let dir = repo.root.join(".spectacular");
    std::fs::create_dir_all(&dir).unwrap();
    for (file, text, expected) in [
        ("worktree.toml", "recycle = true\nrecyle = true\n", "2:1: unknown field `recyle`"),
        ("guard.toml", "deny = [\n", "1:9: unclosed array"),
    ] {
        let path = dir.join(file);
        std::fs::write(&path, text).unwrap();
        let out = repo.wt(&["run", plan.to_str().unwrap()]);
        assert_eq!(out.code(), 2, "{}", out.stderr());
        let named = format!("error: {}:{expected}", path.display());
        assert!(out.stderr().starts_with(&named), "{}", out.stderr());
        assert_eq!(out.stderr().matches(file).count(), 2, "named once, and in the hint: {}", out.stderr());
        std::fs::remove_file(&path).unwrap();
        assert_nothing_created(&repo);
    }
}

#[test]
fn outside_a_repository_the_message_says_so() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let out = repo.wt(&["-C", repo.scratch.to_str().unwrap(), "run", plan.to_str().unwrap()]);
    assert_eq!(out.code(), 3);
    assert!(out.stderr().contains("is not inside a git repository"), "{}", out.stderr());
}

#[test]
fn a_missing_git_spice_is_named_with_the_install_command() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", PLAN);
    let git_dir = which_dir("git");
    let out = repo.wt_with_env(&["run", plan.to_str().unwrap()], &[("PATH", git_dir.to_str().unwrap())]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(out.stderr().contains("git-spice is not installed"), "{}", out.stderr());
    assert!(out.stderr().contains("spectacular-tools/git-spice-v0.31.2/bin"), "{}", out.stderr());
    assert_nothing_created(&repo);
}

#[test]
fn ghostscript_named_gs_is_not_mistaken_for_git_spice() {
    let repo = TestRepo::new();
    let path = path_with_fake(&repo, "gs", "echo 10.05.1");
    let out = repo.wt_with_env(&["run", repo.plan("plan.toml", PLAN).to_str().unwrap()], &[("PATH", &path)]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(out.stderr().contains("probably Ghostscript"), "{}", out.stderr());
    assert_nothing_created(&repo);
}

#[test]
fn an_invalid_run_id_flag_is_refused() {
    let repo = TestRepo::new();
    let out = repo.wt(&["run", repo.plan("plan.toml", PLAN).to_str().unwrap(), "--run-id", "XYZ"]);
    assert_eq!(out.code(), 2);
    assert!(out.stderr().contains("run id XYZ: not 6 lowercase hex characters"), "{}", out.stderr());
    assert_nothing_created(&repo);
}

#[test]
fn a_detached_main_checkout_without_a_base_says_how_to_choose_one() {
    let repo = TestRepo::new();
    repo.git(&["checkout", "--quiet", "--detach"]);
    let out = repo.wt(&["run", repo.plan("plan.toml", PLAN).to_str().unwrap()]);
    assert_eq!(out.code(), 3);
    assert!(out.stderr().contains("detached HEAD"), "{}", out.stderr());
    assert!(out.stderr().contains("--base"), "{}", out.stderr());
}

#[test]
fn a_foreign_folder_in_the_main_worktree_path_is_refused() {
    let repo = TestRepo::new();
    std::fs::create_dir_all(repo.root.join(".worktrees/abcdef-main")).unwrap();
    let out = repo.wt(&["run", repo.plan("plan.toml", PLAN).to_str().unwrap()]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(
        out.stderr().contains(".worktrees/abcdef-main exists but is not a git worktree"),
        "{}",
        out.stderr()
    );
}

#[test]
fn wt_plan_json_prints_the_normalized_plan() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        r#"
[run]
id = "a1b2c3"
feature = "auth"
[agent]
max_parallel = 2
timeout = "90s"
[worktree]
recycle = false
sparse = ["src"]
[[phase]]
name = "P"
strategy = "parallel"
[[phase.task]]
name = "Crème brûlée: the «best» one!"
prompt = "do it"
files = ["a.rs"]
acceptance = ["works"]
verify = "true"
[[phase.task]]
name = "Crème brûlée: the «best» one!"
run = "x"
allow_empty = true
"#,
    );
    let json: serde_json::Value =
        serde_json::from_str(&repo.wt(&["plan", plan.to_str().unwrap(), "--json"]).ok()).unwrap();
    assert_eq!(json["run_id"], "a1b2c3");
    assert_eq!(json["feature"], "auth");
    assert_eq!(json["base"], "main", "the base resolves to the checked-out branch");
    let task = &json["phases"][0]["tasks"][0];
    assert_eq!(task["number"], "1.1");
    assert_eq!(task["slug"], "creme-brulee-the-best-one");
    assert_eq!(task["branch"], "a1b2c3-task-1-1-creme-brulee-the-best-one");
    assert_eq!(task["files"][0], "a.rs");
    assert_eq!(task["verify"], "true");
    assert_eq!(task["run"], serde_json::Value::Null);
    assert_eq!(json["phases"][0]["tasks"][1]["branch"], "a1b2c3-task-1-2-creme-brulee-the-best-one");
    assert_eq!(json["phases"][0]["strategy"], "parallel");
    assert_eq!(json["phases"][0]["tasks"][1]["allow_empty"], true);
    assert_eq!(json["agent"]["max_parallel"], 2);
    assert_eq!(json["agent"]["timeout_secs"], 90);
    assert_eq!(json["worktree"]["recycle"], false);
    assert_eq!(json["worktree"]["sparse"][0], "src");
}

/// A PATH with git and a fake `name` that runs `script`, and no real git-spice.
fn path_with_fake(repo: &TestRepo, name: &str, script: &str) -> String {
    use std::os::unix::fs::PermissionsExt;
    let dir = repo.scratch.join(format!("fake-{name}"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join(name), format!("#!/bin/sh\n{script}\n")).unwrap();
    std::fs::set_permissions(dir.join(name), std::fs::Permissions::from_mode(0o755)).unwrap();
    format!("{}:{}", dir.display(), which_dir("git").display())
}

fn which_dir(program: &str) -> std::path::PathBuf {
    let path = std::env::var_os("PATH").unwrap();
    std::env::split_paths(&path)
        .find(|dir| {
            dir.join(program).is_file() && !dir.join("gs").exists() && !dir.join("git-spice").exists()
        })
        .or_else(|| Some(Path::new("/usr/bin").to_owned()))
        .unwrap()
}

#[test]
fn a_branch_with_a_task_name_that_this_run_did_not_create_is_never_reused() {
    let repo = TestRepo::new();
    repo.git(&["branch", "abcdef-task-1-1-t"]);
    let before = repo.git(&["rev-parse", "abcdef-task-1-1-t"]);
    let out = repo.wt(&["run", repo.plan("plan.toml", PLAN).to_str().unwrap()]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(
        out.stderr().contains("branch abcdef-task-1-1-t already exists and was not created by run abcdef"),
        "{}",
        out.stderr()
    );
    assert!(out.stderr().contains("--run-id"), "{}", out.stderr());
    assert_eq!(repo.git(&["rev-parse", "abcdef-task-1-1-t"]), before, "the user's branch is untouched");
}

#[test]
fn a_bare_repository_is_refused() {
    let repo = TestRepo::new();
    let bare = repo.scratch.join("bare.git");
    repo.git(&["clone", "--quiet", "--bare", repo.root.to_str().unwrap(), bare.to_str().unwrap()]);
    let out = repo.wt(&["-C", bare.to_str().unwrap(), "run", repo.plan("plan.toml", PLAN).to_str().unwrap()]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(out.stderr().contains("is a bare repository"), "{}", out.stderr());
    assert!(out.stderr().contains("hint: clone it with a working tree"), "{}", out.stderr());
}

#[test]
fn a_git_spice_older_than_the_minimum_is_refused() {
    let repo = TestRepo::new();
    let path = path_with_fake(&repo, "git-spice", "echo 'git-spice 0.9.0'");
    let out = repo.wt_with_env(&["run", repo.plan("plan.toml", PLAN).to_str().unwrap()], &[("PATH", &path)]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(out.stderr().contains("is git-spice 0.9.0, older than the 0.31.0 wt needs"), "{}", out.stderr());
    assert_nothing_created(&repo);
}

#[test]
fn an_unreadable_plan_file_is_named() {
    let repo = TestRepo::new();
    let out = repo.wt(&["run", "missing-plan.toml"]);
    assert_eq!(out.code(), 2);
    assert!(out.stderr().contains("missing-plan.toml: cannot read the plan file"), "{}", out.stderr());
    assert_nothing_created(&repo);
}

/// A plan whose one task fails, so the run stops and can be resumed.
const FAILING: &str = "[run]\nid = \"fa11ed\"\n[[phase]]\n[[phase.task]]\nname = \"t\"\nrun = \"test -f /nonexistent && echo > t\"\n";

#[test]
fn resume_refuses_a_main_worktree_switched_to_a_foreign_branch() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", FAILING);
    assert_eq!(repo.wt(&["run", plan.to_str().unwrap()]).code(), 1);
    let main = repo.root.join(".worktrees/fa11ed-main");
    repo.git_in(&main, &["checkout", "--quiet", "-b", "my-experiment"]);
    let out = repo.wt(&["resume", "fa11ed"]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(
        out.stderr().contains("is on branch my-experiment, which is not one of this run's branches"),
        "{}",
        out.stderr()
    );
    assert!(out.stderr().contains("checkout fa11ed-task-1-1-t"), "{}", out.stderr());
    assert_eq!(
        repo.git_in(&main, &["branch", "--show-current"]).trim(),
        "my-experiment",
        "nothing was changed"
    );
}

#[test]
fn resume_refuses_a_main_worktree_with_changes_it_cannot_explain() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        "[run]\nid = \"d1e7ed\"\n[[phase]]\n[[phase.task]]\nname = \"a\"\nrun = \"echo a > a\"\n[[phase.task]]\nname = \"b\"\nrun = \"exit 1\"\n",
    );
    assert_eq!(repo.wt(&["run", plan.to_str().unwrap()]).code(), 1);
    let main = repo.root.join(".worktrees/d1e7ed-main");
    // Verified task 1.1's branch checked out again and edited by hand: not the run's work.
    repo.git_in(&main, &["checkout", "--quiet", "d1e7ed-task-1-1-a"]);
    std::fs::write(main.join("a"), "hand edit").unwrap();
    let out = repo.wt(&["resume", "d1e7ed"]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(out.stderr().contains("has changes the run cannot explain: a"), "{}", out.stderr());
    assert!(out.stderr().contains("stash"), "{}", out.stderr());
    assert_eq!(std::fs::read_to_string(main.join("a")).unwrap(), "hand edit");
}

#[test]
fn resume_of_an_unknown_run_says_how_to_list_runs() {
    let repo = TestRepo::new();
    let out = repo.wt(&["resume", "abcdef"]);
    assert_eq!(out.code(), 2);
    assert!(out.stderr().contains("no run abcdef in"), "{}", out.stderr());
    assert!(out.stderr().contains("wt status"), "{}", out.stderr());
}

#[test]
fn a_changed_plan_is_refused_with_what_changed_unless_forced() {
    let repo = TestRepo::new();
    let plan = repo.plan("plan.toml", FAILING);
    assert_eq!(repo.wt(&["run", plan.to_str().unwrap()]).code(), 1);
    std::fs::write(&plan, FAILING.replace("test -f /nonexistent && echo > t", "echo fixed > t")).unwrap();
    let out = repo.wt(&["run", plan.to_str().unwrap()]);
    assert_eq!(out.code(), 2, "{}", out.stderr());
    assert!(out.stderr().contains("the plan of run fa11ed changed since it started"), "{}", out.stderr());
    assert!(out.stderr().contains("task 1.1 (t): run changed"), "{}", out.stderr());
    assert!(out.stderr().contains("--force-plan"), "{}", out.stderr());
    repo.wt(&["run", plan.to_str().unwrap(), "--force-plan"]).ok();
    assert_eq!(repo.subjects("main", "fa11ed-task-1-1-t"), ["[Task 1.1] t"]);
}

#[test]
fn claude_agents_are_refused_a_sandbox_without_network() {
    let repo = TestRepo::new();
    let path = path_with_fake(&repo, "claude", "exit 0");
    let plan = "[run]\nid = \"0e7000\"\n[agent]\nkind = \"claude\"\n[sandbox]\nnetwork = \"deny\"\n[[phase]]\n[[phase.task]]\nname = \"t\"\nprompt = \"p\"\n";
    let out = repo.wt_with_env(&["run", repo.plan("plan.toml", plan).to_str().unwrap()], &[("PATH", &path)]);
    assert_eq!(out.code(), 2, "{}", out.stderr());
    assert!(out.stderr().contains("would cut the agent off from its model's API"), "{}", out.stderr());
    assert_nothing_created(&repo);
}
