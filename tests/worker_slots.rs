//! The plugin's worker slots: `wt step` leases one to each task it hands out, across every run of
//! the repository, and takes it back when the task is checked or its run is cleaned up.

mod common;

use common::TestRepo;
use serde_json::Value;

fn plan(repo: &TestRepo, id: &str, parallel: usize) -> String {
    let mut text =
        format!("[run]\nid = \"{id}\"\n[agent]\nmax_parallel = 8\n[[phase]]\nstrategy = \"parallel\"\n");
    for n in 1..=parallel {
        text.push_str(&format!("[[phase.task]]\nname = \"t{n}\"\nprompt = \"x\"\n"));
    }
    repo.plan(&format!("{id}.toml"), &text).to_str().unwrap().to_owned()
}

fn workers(repo: &TestRepo, target: &str) -> Vec<String> {
    let out = repo.wt(&["step", target, "--json"]);
    let step: Value = serde_json::from_str(&out.ok()).unwrap();
    step["dispatch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["subagent_type"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn two_runs_at_once_get_different_workers_and_cleanup_frees_them() {
    let repo = TestRepo::new();
    assert_eq!(
        workers(&repo, &plan(&repo, "a11111", 2)),
        ["spectacular:wt-worker-1", "spectacular:wt-worker-2"]
    );
    assert_eq!(workers(&repo, &plan(&repo, "b22222", 1)), ["spectacular:wt-worker-3"]);
    let leases = repo.root.join(".git/spectacular/slots");
    assert!(leases.join("wt-worker-1.json").exists());

    let cleaned = repo.wt(&["cleanup", "a11111"]).ok();
    assert!(cleaned.contains("wt-worker-1.json") && cleaned.contains("wt-worker-2.json"), "{cleaned}");
    assert!(leases.join("wt-worker-3.json").exists(), "the other run keeps its worker");
    assert_eq!(workers(&repo, &plan(&repo, "c33333", 1)), ["spectacular:wt-worker-1"]);
}

#[test]
fn when_every_worker_is_out_wt_step_says_who_holds_them_and_hands_nothing_out() {
    let repo = TestRepo::new();
    assert_eq!(workers(&repo, &plan(&repo, "a11111", 8)).len(), 8);
    let out = repo.wt(&["step", &plan(&repo, "b22222", 1), "--json"]);
    assert_eq!(out.code(), 4, "{}", out.stderr());
    let stderr = out.stderr();
    assert!(
        stderr.contains("all 8 wt worker slots are out") && stderr.contains("run a11111 task 1.1"),
        "{stderr}"
    );
    assert!(stderr.contains("wt step b22222 --json"), "{stderr}");

    let status: Value = serde_json::from_str(&repo.wt(&["status", "b22222", "--json"]).ok()).unwrap();
    assert_ne!(status[0]["phases"][0]["tasks"][0]["state"], "dispatched", "nothing was handed out");
    repo.wt(&["cleanup", "a11111"]).ok();
    assert_eq!(
        workers(&repo, "b22222"),
        ["spectacular:wt-worker-1"],
        "the run goes on once a worker is free"
    );
}

#[test]
fn each_run_waits_only_for_its_own_workers_and_releases_only_them() {
    let repo = TestRepo::new();
    let a = workers(&repo, &plan(&repo, "a11111", 2));
    let b = workers(&repo, &plan(&repo, "b22222", 1));
    assert_eq!(b, ["spectacular:wt-worker-3"]);
    for (worker, id) in a.iter().chain(&b).zip(["a1", "a2", "b1"]) {
        repo.subagent_starts(worker, id);
    }
    repo.subagent_returns(&b[0], "b1");
    let step = |run: &str, release: &[&str]| -> Value {
        let out = repo.wt(&[&["step", run, "--json"], release].concat());
        serde_json::from_str(&out.ok()).unwrap()
    };
    let waiting = |outcome: &Value| -> Vec<String> {
        let out = outcome["waiting"].as_array().cloned().unwrap_or_default();
        out.iter().map(|w| w["subagent_type"].as_str().unwrap().to_owned()).collect()
    };

    let a_out = step("a11111", &[]);
    assert_eq!(a_out["status"], "wait");
    assert_eq!(waiting(&a_out), a, "only its own workers");
    // b's worker came back with nothing done: b's step takes it back and hands it out again.
    let b_next = step("b22222", &["--release", "all"]);
    assert_eq!(b_next["status"], "dispatch", "{b_next}");
    assert!(b_next.get("released").is_none(), "its worker had returned: {b_next}");
    assert_eq!(waiting(&step("a11111", &[])), a, "b's release left a's workers out");
}
