//! `wt submit` and `wt run --submit`: pushing to a plain remote, and real change requests on
//! git-spice's offline forge (shamhub, started on loopback by the test).

mod common;

use std::collections::BTreeMap;

use common::TestRepo;
use common::shamhub::{Shamhub, forge_repo};
use serde_json::Value;

const PLAN: &str = "[run]\nid = \"5eb001\"\n[[phase]]\n[[phase.task]]\nname = \"one\"\nrun = \"echo 1 > one\"\n\
                    [[phase]]\nstrategy = \"parallel\"\n[[phase.task]]\nname = \"two\"\nrun = \"echo 2 > two\"\n\
                    [[phase.task]]\nname = \"three\"\nrun = \"echo 3 > three\"\n";
const BRANCHES: [&str; 3] = ["5eb001-task-1-1-one", "5eb001-task-2-1-two", "5eb001-task-2-2-three"];

fn repo_with_bare_remote() -> TestRepo {
    let repo = TestRepo::new();
    let remote = repo.scratch.join("remote.git");
    repo.git(&["init", "--quiet", "--bare", "--initial-branch=main", remote.to_str().unwrap()]);
    repo.git(&["remote", "add", "origin", remote.to_str().unwrap()]);
    repo.git(&["push", "--quiet", "origin", "main"]);
    repo
}

#[test]
fn no_publish_pushes_every_branch_of_the_stack_to_its_commit() {
    let repo = repo_with_bare_remote();
    repo.wt(&["run", repo.plan("plan.toml", PLAN).to_str().unwrap()]).ok();
    let out = repo.wt(&["submit", "5eb001", "--no-publish"]).ok();
    assert!(out.contains("3 branch(es) pushed"), "{out}");
    let remote: BTreeMap<String, String> = repo
        .git(&["ls-remote", "--heads", "origin"])
        .lines()
        .filter_map(|line| line.split_once('\t'))
        .map(|(sha, name)| (name.trim_start_matches("refs/heads/").to_owned(), sha.to_owned()))
        .collect();
    for branch in BRANCHES {
        assert_eq!(
            remote.get(branch).map(String::as_str),
            Some(repo.git(&["rev-parse", branch]).trim()),
            "{branch}"
        );
    }
}

#[test]
fn a_remote_that_is_not_a_forge_gets_the_no_publish_hint() {
    let repo = repo_with_bare_remote();
    repo.wt(&["run", repo.plan("plan.toml", PLAN).to_str().unwrap()]).ok();
    let out = repo.wt(&["submit", "5eb001"]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(out.stderr().contains("not a forge"), "{}", out.stderr());
    assert!(out.stderr().contains("--no-publish"), "{}", out.stderr());
}

#[test]
fn a_run_that_is_not_done_is_not_submitted() {
    let repo = repo_with_bare_remote();
    let failing = PLAN.replace("echo 3 > three", "exit 1");
    assert_eq!(repo.wt(&["run", repo.plan("plan.toml", &failing).to_str().unwrap()]).code(), 1);
    let out = repo.wt(&["submit", "5eb001", "--no-publish"]);
    assert_eq!(out.code(), 3);
    assert!(
        out.stderr().contains("is not done") && out.stderr().contains("wt resume 5eb001"),
        "{}",
        out.stderr()
    );
}

#[test]
fn submit_opens_one_draft_change_request_per_branch_based_on_the_branch_below() {
    let repo = TestRepo::new();
    let hub = Shamhub::start(&repo);
    forge_repo(&repo, &hub);
    hub.run(&repo, "gs", &["--no-prompt", "auth", "login"]);
    let plan = repo.plan("plan.toml", PLAN);
    let out = repo.wt_with_env(&["run", plan.to_str().unwrap(), "--submit"], &hub.env());
    let stdout = out.ok();
    assert!(stdout.contains("3 branch(es) submitted as drafts"), "{stdout}");

    let changes: Vec<Value> = serde_json::from_str(&hub.run(&repo, "shamhub", &["dump", "changes"])).unwrap();
    assert_eq!(changes.len(), 3, "{changes:?}");
    let mut below = "main";
    for branch in BRANCHES {
        let change = changes
            .iter()
            .find(|c| c["head"]["ref"] == branch)
            .unwrap_or_else(|| panic!("no CR for {branch}"));
        assert_eq!(change["draft"], true, "{change}");
        assert_eq!(change["base"]["ref"], below, "{branch}'s change request is based on the branch below it");
        assert!(stdout.contains(change["html_url"].as_str().unwrap()), "the URL is reported: {stdout}");
        below = branch;
    }
}

#[test]
fn submit_without_credentials_says_how_to_log_in() {
    let repo = TestRepo::new();
    let hub = Shamhub::start(&repo);
    forge_repo(&repo, &hub);
    repo.wt_with_env(&["run", repo.plan("plan.toml", PLAN).to_str().unwrap()], &hub.env()).ok();
    let out = repo.wt_with_env(&["submit", "5eb001"], &hub.env());
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(out.stderr().contains("git-spice auth login"), "{}", out.stderr());
}
