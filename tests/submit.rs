//! `wt submit` and `wt run --submit`: pushing to a plain remote, and real change requests on
//! git-spice's offline forge (shamhub, started on loopback by the test).

mod common;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use common::TestRepo;
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

/// A shamhub server on loopback, stopped when dropped.
struct Shamhub {
    child: Child,
    bin: PathBuf,
    /// The git-spice built with the shamhub forge.
    gs: PathBuf,
    env: Vec<(String, String)>,
}

impl Shamhub {
    fn start(repo: &TestRepo) -> Shamhub {
        let bin = PathBuf::from(
            std::env::var_os("WT_TEST_SHAMHUB")
                .expect("WT_TEST_SHAMHUB is not set: run the tests with scripts/test"),
        );
        let env_file = repo.scratch.join("shamhub.env");
        let child = Command::new(bin.join("shamhub-serve"))
            .args(["--env-file", env_file.to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !env_file.exists() {
            assert!(start.elapsed() < Duration::from_secs(20), "shamhub-serve did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(50));
        let env = std::fs::read_to_string(&env_file)
            .unwrap()
            .lines()
            .filter_map(|line| line.strip_prefix("export "))
            .filter_map(|line| line.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
            .collect();
        let gs = bin.join("gs");
        Shamhub { child, bin, gs, env }
    }

    fn env(&self) -> Vec<(&str, &str)> {
        let mut env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        env.push(("WT_GIT_SPICE", self.gs.to_str().unwrap()));
        env.push(("SHAMHUB_USERNAME", "alice"));
        env
    }

    fn run(&self, repo: &TestRepo, program: &str, args: &[&str]) -> String {
        let mut cmd = repo.command(self.bin.join(program).to_str().unwrap(), &repo.root);
        cmd.args(args).envs(self.env());
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }
}

impl Drop for Shamhub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn forge_repo(repo: &TestRepo, hub: &Shamhub) {
    hub.run(repo, "shamhub", &["register", "alice"]);
    hub.run(repo, "shamhub", &["new", "origin", "alice/app.git"]);
    repo.git(&["push", "--quiet", "origin", "main"]);
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
