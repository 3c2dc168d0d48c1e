//! `wt poll` and the team gates against real git, git-spice and shamhub (git-spice's offline
//! forge): a poll started before a change returns with that change as one event — the base's
//! change request squash-merged, a review comment, a failing or passing check — or exits 7 when
//! nothing happens; it holds its lock while it runs, also inside `wt sandbox` as a worker's
//! guard runs it. The TeammateIdle and TaskCompleted gates take the payloads Claude Code really
//! sends (tests/fixtures/hooks). GitHub has no offline forge: its CI path runs against a stand-in
//! `gh` on PATH, and says so.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use common::shamhub::{Shamhub, forge_repo};
use common::{TestRepo, with_stdin};
use serde_json::{Value, json};

/// A repository on shamhub with git-spice logged in, and the environment wt needs to reach it.
struct Hub {
    repo: TestRepo,
    hub: Shamhub,
    env: Vec<(String, String)>,
}

impl Hub {
    fn new() -> Hub {
        let repo = TestRepo::new();
        let hub = Shamhub::start(&repo);
        forge_repo(&repo, &hub);
        hub.run(&repo, "gs", &["--no-prompt", "auth", "login"]);
        let env = hub.env().iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        Hub { repo, hub, env }
    }

    fn env(&self) -> Vec<(&str, &str)> {
        self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
    }

    fn wt(&self, args: &[&str]) -> common::WtOutput {
        self.repo.wt_with_env(args, &self.env())
    }

    /// The team worktree `name` on `base` with one commit, its change request opened by
    /// git-spice (with its navigation comment, which a poll must not report).
    fn submitted(&self, name: &str, base: &str) {
        self.wt(&["create", name, "--base", base]).ok();
        self.repo.team_commit(name, &format!("{name}.txt"));
        let dir = self.repo.team_worktree(name);
        self.hub.run_in(&self.repo, &dir, "gs", &["--no-prompt", "branch", "submit", "--fill", "--no-web"]);
    }

    fn shamhub(&self, args: &[&str]) {
        self.hub.run(&self.repo, "shamhub", args);
    }

    /// `wt poll <args>`, started and past its first look.
    fn poll(&self, args: &[&str]) -> Poll {
        let mut cmd = self.repo.command(env!("CARGO_BIN_EXE_wt"), &self.repo.root);
        cmd.arg("poll").args(args).envs(self.env());
        Poll::start(cmd)
    }
}

/// A `wt poll` running in the background, as a worker runs it.
struct Poll {
    child: Child,
    stderr: Receiver<String>,
    seen: Vec<String>,
}

impl Poll {
    /// Starts `cmd` and waits for its first look (the line saying what it watches): what changes
    /// after that is news to it.
    fn start(mut cmd: Command) -> Poll {
        let mut child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let (send, stderr) = channel();
        let pipe = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(pipe).lines().map_while(Result::ok) {
                let _ = send.send(line);
            }
        });
        let mut poll = Poll { child, stderr, seen: Vec::new() };
        let started = Instant::now();
        while !poll.seen.iter().any(|line| line.contains(": watching ")) {
            match poll.stderr.recv_timeout(Duration::from_secs(60).saturating_sub(started.elapsed())) {
                Ok(line) => poll.seen.push(line),
                Err(_) => {
                    let _ = poll.child.kill();
                    panic!("wt poll did not start watching: {:#?}", poll.seen);
                }
            }
        }
        poll
    }

    /// Waits for the poll to return: (exit code, stdout, stderr).
    fn finish(mut self) -> (i32, String, String) {
        let started = Instant::now();
        while self.child.try_wait().unwrap().is_none() {
            if started.elapsed() > Duration::from_secs(90) {
                let _ = self.child.kill();
                panic!("wt poll did not return: {:#?}", self.seen);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let out = self.child.wait_with_output().unwrap();
        // The reader thread ends with the pipe.
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(5)) {
            self.seen.push(line);
        }
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            self.seen.join("\n"),
        )
    }

    /// The one JSON event of a poll run with `--json` that returned with one.
    fn event(self) -> (Value, String) {
        let (code, stdout, stderr) = self.finish();
        assert_eq!(code, 0, "stdout: {stdout}\nstderr: {stderr}");
        let lines: Vec<&str> = stdout.lines().collect();
        assert_eq!(lines.len(), 1, "one event, one line: {stdout}");
        (serde_json::from_str(lines[0]).unwrap(), stderr)
    }
}

/// Whether some process holds the flock on `path` now (`flock` from util-linux, a bystander).
fn locked(path: &Path) -> bool {
    let out = Command::new("flock").args(["--nonblock", "--shared"]).arg(path).arg("true").output().unwrap();
    !out.status.success()
}

fn poll_lock(repo: &TestRepo, branch: &str) -> PathBuf {
    repo.root.join(".git/spectacular/team/polls").join(format!("{branch}.lock"))
}

#[test]
fn poll_reports_base_updated_when_the_bases_change_request_is_squash_merged() {
    let hub = Hub::new();
    hub.submitted("a", "main");
    hub.submitted("b", "a");
    let poll = hub.poll(&["b", "--json", "--interval", "1", "--timeout", "2"]);
    assert!(locked(&poll_lock(&hub.repo, "b")), "the poll's lock is held while it runs");
    hub.shamhub(&["merge", "-squash", "alice/app", "1"]);

    let (event, _) = poll.event();
    assert_eq!(event["event"], "base_updated", "{event:#}");
    assert_eq!((event["reason"].as_str(), event["base"].as_str()), (Some("merged"), Some("a")), "{event:#}");
    assert_eq!((event["name"].as_str(), event["branch"].as_str()), (Some("b"), Some("b")));
    assert_eq!(event["change"]["number"], 2);
    assert!(event["change"]["url"].as_str().unwrap().ends_with("/alice/app/change/2"), "{event:#}");
    assert!(event["next"].as_str().unwrap().contains("wt rebase b"), "{event:#}");
    assert!(!locked(&poll_lock(&hub.repo, "b")), "and released when it returns");

    // What already calls for action is said at once, not after a wait.
    let started = Instant::now();
    let merged = hub.wt(&["poll", "a", "--json", "--interval", "30"]);
    assert_eq!(merged.events()[0]["event"], "merged", "{}", merged.stderr());
    let again = hub.wt(&["poll", "b", "--json", "--interval", "30"]);
    assert_eq!(again.events()[0]["reason"], "merged", "{}", again.stderr());
    assert!(started.elapsed() < Duration::from_secs(25), "neither waited for a look");
}

/// `wt guard`'s decision on a Bash call of the team agent `wt-<name>` (the plugin's hook, which
/// routes by `agent_type`).
fn guard(repo: &TestRepo, agent: &str, tool_input: Value) -> Value {
    let hook = json!({"cwd": repo.root, "hook_event_name": "PreToolUse", "tool_name": "Bash",
                      "agent_type": agent, "tool_input": tool_input});
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wt"));
    cmd.arg("guard");
    let out = with_stdin(cmd, &hook.to_string());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice::<Value>(&out.stdout).unwrap()["hookSpecificOutput"].clone()
}

#[test]
fn the_guard_refuses_a_workers_foreground_poll_and_lets_a_background_one_run() {
    let repo = TestRepo::new();
    repo.wt(&["create", "api", "--base", "main"]).ok();
    let poll = format!("{} poll api --json", env!("CARGO_BIN_EXE_spectacular-wt"));
    for input in [json!({"command": poll}), json!({"command": poll, "run_in_background": false})] {
        let decision = guard(&repo, "wt-api", input);
        assert_eq!(decision["permissionDecision"], "deny", "{decision:#}");
        let reason = decision["permissionDecisionReason"].as_str().unwrap();
        assert!(reason.contains("poll api --json") && reason.contains("run_in_background: true"), "{reason}");
    }
    let wrapped = guard(&repo, "wt-api", json!({"command": format!("cd .worktrees/api && {poll}")}));
    assert_eq!(wrapped["permissionDecision"], "deny", "after a cd too: {wrapped:#}");

    // Its own poll runs outside `wt sandbox` (so its file writes are not held), as this wt.
    let decision = guard(&repo, "wt-api", json!({"command": poll, "run_in_background": true}));
    assert_eq!(decision["permissionDecision"], "allow", "{decision:#}");
    let command = decision["updatedInput"]["command"].as_str().unwrap();
    assert!(!command.contains(" sandbox "), "not wrapped: {command}");
    assert!(command.ends_with("spectacular-wt' 'poll' 'api' '--json'"), "{command}");
    assert_eq!(decision["updatedInput"]["run_in_background"], true);
    // Written any other way, it runs inside `wt sandbox`, still in the background.
    let piped =
        guard(&repo, "wt-api", json!({"command": format!("{poll} | tail -1"), "run_in_background": true}));
    assert_eq!(piped["permissionDecision"], "allow", "{piped:#}");
    let command = piped["updatedInput"]["command"].as_str().unwrap();
    assert!(command.contains(" sandbox --root ") && command.contains("poll api --json"), "{command}");
    assert_eq!(piped["updatedInput"]["run_in_background"], true);
    let piped_fg = guard(&repo, "wt-api", json!({"command": format!("{poll} | tail -1")}));
    assert_eq!(piped_fg["permissionDecision"], "deny", "{piped_fg:#}");
    let other = guard(&repo, "wt-api", json!({"command": "echo wt poll api"}));
    assert_eq!(other["permissionDecision"], "allow", "a mention is not a poll: {other:#}");
}

#[test]
fn a_background_poll_the_guard_wraps_holds_its_lock_in_the_sandbox_and_reports_new_comments() {
    let hub = Hub::new();
    hub.wt(&["create", "api", "--base", "main"]).ok();
    hub.repo.team_commit("api", "api.txt");
    let poll = format!("{} poll api --json --interval 1 --timeout 2", env!("CARGO_BIN_EXE_spectacular-wt"));
    // With a redirection it is not the agent's plain own command, so the guard wraps it.
    let command = format!("{poll} </dev/null");
    let decision = guard(&hub.repo, "wt-api", json!({"command": command, "run_in_background": true}));
    let rewritten = decision["updatedInput"]["command"].as_str().unwrap().to_owned();
    let mut cmd = hub.repo.command("bash", &hub.repo.root);
    cmd.args(["-c", &rewritten]).envs(hub.env());
    let poll = Poll::start(cmd);

    let lock = poll_lock(&hub.repo, "api");
    assert!(locked(&lock), "held from inside the sandbox, through the file wt create made");
    let second = hub.wt(&["poll", "api"]);
    assert_eq!(second.code(), 4, "one poll per branch: {}", second.stderr());
    assert!(second.stderr().contains("already watching api"), "{}", second.stderr());
    // Opened while the poll runs: git-spice's navigation comment comes first, and is no review.
    let dir = hub.repo.team_worktree("api");
    hub.hub.run_in(&hub.repo, &dir, "gs", &["--no-prompt", "branch", "submit", "--fill", "--no-web"]);
    hub.shamhub(&["comment", "post", "alice/app", "1", "please rename foo"]);
    hub.shamhub(&["comment", "post", "-resolvable", "alice/app", "1", "nit: typo in\napi.txt"]);

    let (event, stderr) = poll.event();
    assert_eq!(event["event"], "review_comments", "{event:#}\n{stderr}");
    let bodies: Vec<&str> =
        event["comments"].as_array().unwrap().iter().map(|c| c["body"].as_str().unwrap()).collect();
    assert_eq!(
        bodies,
        ["please rename foo", "nit: typo in\napi.txt"],
        "new ones only, no navigation comment"
    );
    assert_eq!(event["unresolved"], 1, "git-spice counts the review thread: {event:#}");
    assert!(
        stderr.contains("forge shamhub alice/app") && stderr.contains("api has no change request yet"),
        "{stderr}"
    );
    assert!(!locked(&lock));
}

#[test]
fn poll_reports_a_failing_check_with_its_name_and_then_all_checks_passing() {
    let hub = Hub::new();
    hub.submitted("api", "main");
    let poll = hub.poll(&["api", "--json", "--interval", "1", "--timeout", "2"]);
    hub.shamhub(&["set-status", "--name", "lint", "alice/app", "1", "pending"]);
    hub.shamhub(&["set-status", "--name", "ci/test", "alice/app", "1", "failed"]);
    let (event, stderr) = poll.event();
    assert!(stderr.contains("#1 has no CI checks to read"), "no CI source yet, said once: {stderr}");
    assert_eq!(stderr.matches("no CI checks").count(), 1, "{stderr}");
    assert_eq!(event["event"], "ci_failure", "{event:#}");
    assert_eq!(
        event["checks"],
        json!([{"name": "ci/test", "state": "failed"}]),
        "the failing one: {event:#}"
    );

    let poll = hub.poll(&["api", "--json", "--interval", "1", "--timeout", "2"]);
    hub.shamhub(&["set-status", "--name", "ci/test", "alice/app", "1", "passed"]);
    std::thread::sleep(Duration::from_millis(1500));
    hub.shamhub(&["set-status", "--name", "lint", "alice/app", "1", "passed"]);
    let (event, _) = poll.event();
    assert_eq!(event["event"], "ci_passed", "only once every check ended: {event:#}");
    let states: Vec<&str> =
        event["checks"].as_array().unwrap().iter().map(|c| c["state"].as_str().unwrap()).collect();
    assert_eq!(states, ["passed", "passed"]);

    let text = {
        let poll = hub.poll(&["api", "--interval", "1", "--timeout", "2"]);
        hub.shamhub(&["set-status", "--name", "lint", "alice/app", "1", "failed"]);
        poll.finish().1
    };
    assert!(text.starts_with("api: ci_failure: 1 check(s) failed\n"), "{text}");
    assert!(text.contains("\n  - lint\n") && text.contains("\n  next    read the failing checks"), "{text}");
}

#[test]
fn a_poll_that_sees_nothing_exits_7_after_its_timeout() {
    let hub = Hub::new();
    hub.submitted("api", "main");
    let started = Instant::now();
    let out = hub.wt(&["poll", "api", "--json", "--interval", "1", "--timeout", "0.05"]);
    assert_eq!(out.code(), 7, "{}", out.stderr());
    assert!(started.elapsed() >= Duration::from_secs(3), "it waited its 3 s");
    assert_eq!(
        out.events(),
        [json!({"event": "timeout", "name": "api", "branch": "api", "timeout_minutes": 0.05})]
    );
    assert!(out.stderr().contains("nothing happened in 3 s"), "{}", out.stderr());
    assert!(!locked(&poll_lock(&hub.repo, "api")));

    let unknown = hub.wt(&["poll", "nope"]);
    assert_eq!(unknown.code(), 2, "{}", unknown.stderr());
    assert!(unknown.stderr().contains("no wt worktree named nope"), "{}", unknown.stderr());
}

#[test]
fn a_runs_worktree_and_branch_are_polled_like_a_team_worktree() {
    let repo = TestRepo::new();
    let plan = "[run]\nid = \"7ea300\"\n[[phase]]\n[[phase.task]]\nname = \"one\"\nrun = \"echo 1 > one\"\n";
    repo.wt(&["run", repo.plan("plan.toml", plan).to_str().unwrap()]).ok();
    for name in ["7ea300-main", "7ea300-task-1-1-one"] {
        let out = repo.wt(&["poll", name, "--json", "--interval", "1", "--timeout", "0.02"]);
        assert_eq!(out.code(), 7, "{}", out.stderr());
        assert_eq!(out.events()[0]["branch"], "7ea300-task-1-1-one");
        assert!(out.stderr().contains("watching 7ea300-task-1-1-one (base main)"), "{}", out.stderr());
        assert!(out.stderr().contains("no forge wt can read"), "no remote here: {}", out.stderr());
    }
}

/// A captured payload (tests/fixtures/hooks) as the teammate of team worktree `name` in `repo`
/// would send it: the capture's folder and teammate name `worker1` replaced.
fn payload(file: &str, repo: &TestRepo, name: &str) -> Value {
    let mut value = captured(file);
    value["cwd"] = json!(repo.root);
    value["teammate_name"] = json!(format!("wt-{name}"));
    value["agent_type"] = json!(format!("wt-{name}"));
    value
}

fn captured(file: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hooks").join(file);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `wt hook <event>` with `input`: (exit code, stderr).
fn gate(repo: &TestRepo, env: &[(&str, &str)], event: &str, input: &Value) -> (i32, String) {
    let mut cmd = repo.command(env!("CARGO_BIN_EXE_wt"), &repo.root);
    cmd.args(["hook", event]).envs(env.iter().copied());
    let out = with_stdin(cmd, &input.to_string());
    (out.status.code().unwrap_or(-1), String::from_utf8_lossy(&out.stderr).into_owned())
}

#[test]
fn an_idle_teammate_with_an_open_change_request_is_sent_back_until_a_poll_runs() {
    let hub = Hub::new();
    let env = hub.env();
    hub.wt(&["create", "api", "--base", "main"]).ok();
    let idle = payload("TeammateIdle.interactive.json", &hub.repo, "api");
    assert_eq!(gate(&hub.repo, &env, "teammate-idle", &idle).0, 0, "no change request yet: nothing to watch");

    hub.repo.team_commit("api", "api.txt");
    let dir = hub.repo.team_worktree("api");
    hub.hub.run_in(&hub.repo, &dir, "gs", &["--no-prompt", "branch", "submit", "--fill", "--no-web"]);
    let (code, reason) = gate(&hub.repo, &env, "teammate-idle", &idle);
    assert_eq!(code, 2, "{reason}");
    assert!(
        reason.contains("change request #1") && reason.contains("of the team worktree api is open"),
        "{reason}"
    );
    assert!(reason.contains("run `wt poll api` with the Bash tool's run_in_background: true"), "{reason}");

    let poll = hub.poll(&["api", "--interval", "1", "--timeout", "0.1"]);
    assert_eq!(gate(&hub.repo, &env, "teammate-idle", &idle), (0, String::new()), "a poll watches it");
    let (code, _, _) = poll.finish();
    assert_eq!(code, 7);
    assert_eq!(gate(&hub.repo, &env, "teammate-idle", &idle).0, 2, "and once it ended, not any more");

    assert_eq!(gate(&hub.repo, &env, "teammate-idle", &captured("TeammateIdle.interactive.json")).0, 0);
    let stranger = payload("TeammateIdle.interactive.json", &hub.repo, "web");
    assert_eq!(
        gate(&hub.repo, &env, "teammate-idle", &stranger).0,
        0,
        "no team worktree web: not gated here"
    );
    hub.shamhub(&["merge", "alice/app", "1"]);
    assert_eq!(gate(&hub.repo, &env, "teammate-idle", &idle).0, 0, "merged: nothing left to watch");
}

#[test]
fn a_teammates_task_is_not_completed_while_its_worktree_is_dirty_or_its_verify_fails() {
    let repo = TestRepo::new();
    let broken = repo.scratch.join("broken");
    let verify = format!("test -f ok.txt && test ! -e {}", broken.display());
    repo.wt(&["create", "api", "--base", "main", "--verify", &verify]).ok();
    let dir = repo.team_worktree("api");
    let completed = payload("TaskCompleted.on-TaskUpdate-completed.interactive.json", &repo, "api");
    let at_end = payload("TaskCompleted.end-of-turn.interactive.json", &repo, "api");

    std::fs::write(dir.join("notes.txt"), "wip\n").unwrap();
    let (code, reason) = gate(&repo, &[], "task-completed", &completed);
    assert_eq!(code, 2, "{reason}");
    assert!(reason.starts_with("wt: task 1 (write hello) is not done:"), "{reason}");
    assert!(reason.contains("has uncommitted files (notes.txt)"), "{reason}");

    repo.git_in(&dir, &["add", "notes.txt"]);
    repo.git_in(&dir, &["commit", "--quiet", "-m", "notes"]);
    let (code, reason) = gate(&repo, &[], "task-completed", &at_end);
    assert_eq!(code, 2, "{reason}");
    assert!(reason.contains(&format!("the verify command `{verify}`")), "{reason}");
    assert!(reason.contains("exited with status 1"), "{reason}");

    repo.team_commit("api", "ok.txt");
    assert_eq!(gate(&repo, &[], "task-completed", &completed), (0, String::new()), "clean and verified");
    std::fs::write(&broken, "").unwrap();
    assert_eq!(
        gate(&repo, &[], "task-completed", &at_end).0,
        0,
        "the commit it passed on is not verified again"
    );
    repo.team_commit("api", "more.txt");
    let (code, reason) = gate(&repo, &[], "task-completed", &completed);
    assert_eq!(code, 2, "a new commit is: {reason}");

    let slow = "sleep 30";
    repo.wt(&["create", "api", "--base", "main", "--verify", slow]).ok();
    let started = Instant::now();
    let (code, reason) = gate(&repo, &[("WT_GATE_VERIFY_TIMEOUT", "1")], "task-completed", &completed);
    assert_eq!(code, 2, "{reason}");
    assert!(reason.contains("did not finish within 1 s"), "{reason}");
    assert!(started.elapsed() < Duration::from_secs(20), "stopped, not waited for");

    assert_eq!(
        gate(&repo, &[], "task-completed", &captured("TaskCompleted.end-of-turn.interactive.json")).0,
        0
    );
}

/// A stand-in for the GitHub CLI: GitHub has no offline forge, so this script answers the reads
/// wt makes (`gh api …` with no comments, `gh pr checks` from the files the test writes) as gh
/// v2.60 would.
const GH_STAND_IN: &str = r#"#!/bin/sh
dir=$(dirname "$0")
echo "$*" >> "$dir/calls"
case "$1" in
api) echo '[]' ;;
pr)
    if [ -e "$dir/logged-out" ]; then echo 'To get started with GitHub CLI, please run:  gh auth login' >&2; exit 4; fi
    if [ ! -e "$dir/checks.json" ]; then echo "no checks reported on the 'api' branch" >&2; exit 1; fi
    cat "$dir/checks.json"
    exit "$(cat "$dir/exit")" ;;
esac
"#;

#[test]
fn on_github_ci_is_read_with_gh_pr_checks_through_a_stand_in_gh() {
    use std::os::unix::fs::PermissionsExt;
    let repo = TestRepo::new();
    repo.git(&["remote", "add", "origin", "https://github.com/octo/app.git"]);
    let spice = repo
        .command("gs", &repo.root)
        .args(["--no-prompt", "repo", "init", "--trunk", "main", "--remote", "origin"])
        .output()
        .unwrap();
    assert!(spice.status.success(), "{}", String::from_utf8_lossy(&spice.stderr));
    repo.wt(&["create", "api", "--base", "main"]).ok();
    attach_github_pull_request(&repo, "api", 7);
    let bin = repo.scratch.join("gh-bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::fs::write(bin.join("gh"), GH_STAND_IN).unwrap();
    std::fs::set_permissions(bin.join("gh"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = common::path_with(&bin);
    let path = path.to_str().unwrap();
    let checks = |json: &str, exit: u8| {
        std::fs::write(bin.join("checks.json"), json).unwrap();
        std::fs::write(bin.join("exit"), exit.to_string()).unwrap();
    };

    let mut cmd = repo.command(env!("CARGO_BIN_EXE_wt"), &repo.root);
    cmd.args(["poll", "api", "--json", "--interval", "1", "--timeout", "2"]).env("PATH", path);
    let poll = Poll::start(cmd);
    let link = "https://github.com/octo/app/actions/runs/1/job/2";
    checks(
        &format!(
            r#"[{{"bucket":"pending","link":"{link}","name":"build","state":"IN_PROGRESS","workflow":"CI"}}]"#
        ),
        8,
    );
    std::thread::sleep(Duration::from_millis(1500));
    checks(
        &format!(r#"[{{"bucket":"fail","link":"{link}","name":"build","state":"FAILURE","workflow":"CI"}}]"#),
        1,
    );
    let (event, stderr) = poll.event();
    assert!(
        stderr.contains("forge github octo/app") && stderr.contains("#7 has no CI checks to read"),
        "{stderr}"
    );
    assert_eq!(event["event"], "ci_failure", "{event:#}");
    assert_eq!(event["checks"], json!([{"name": "CI / build", "state": "failed", "link": link}]));
    assert_eq!(event["change"], json!({"number": 7, "url": "https://github.com/octo/app/pull/7"}));
    let calls = std::fs::read_to_string(bin.join("calls")).unwrap();
    assert!(calls.contains("pr checks 7 --json name,state,bucket,link,workflow -R octo/app"), "{calls}");
    assert!(calls.contains("api --paginate repos/octo/app/issues/7/comments"), "{calls}");

    std::fs::write(bin.join("logged-out"), "").unwrap();
    let out = repo.wt_with_env(&["poll", "api", "--interval", "1", "--timeout", "0.05"], &[("PATH", path)]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(out.stderr().contains("gh is not logged in to github.com"), "{}", out.stderr());
    assert!(
        out.stderr().contains("hint: log in once with `gh auth login --hostname github.com`"),
        "{}",
        out.stderr()
    );
}

/// Records the pull request `number` on `branch` in git-spice's state, as `git-spice branch
/// submit` would after opening it on GitHub (`{"change": {"github": {"pr": {"number": N}}}}`).
fn attach_github_pull_request(repo: &TestRepo, branch: &str, number: u64) {
    let index = repo.scratch.join("spice-index");
    let git = |args: &[&str], stdin: Option<&str>| -> String {
        let mut cmd = repo.command("git", &repo.root);
        cmd.args(args).env("GIT_INDEX_FILE", &index);
        let out = match stdin {
            Some(input) => with_stdin(cmd, input),
            None => cmd.output().unwrap(),
        };
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    let mut state: Value =
        serde_json::from_str(&git(&["cat-file", "-p", &format!("refs/spice/data:branches/{branch}")], None))
            .unwrap();
    state["change"] = json!({"github": {"pr": {"number": number}}});
    git(&["read-tree", "refs/spice/data"], None);
    let blob = git(&["hash-object", "-w", "--stdin"], Some(&state.to_string()));
    git(&["update-index", "--cacheinfo", &format!("100644,{blob},branches/{branch}")], None);
    let tree = git(&["write-tree"], None);
    let commit =
        git(&["commit-tree", &tree, "-p", "refs/spice/data", "-m", "test: the pull request is open"], None);
    git(&["update-ref", "refs/spice/data", &commit], None);
}
