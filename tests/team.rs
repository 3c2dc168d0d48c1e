//! Worktree teams against real git and git-spice (and shamhub, git-spice's offline forge):
//! `wt create` stacks worktrees and is idempotent, refuses a taken name changing nothing, writes
//! an ignored agent per worktree that the plugin's guard routes to it; `wt list`/`stack`/`info`
//! read the live graph; `wt diff` shows a branch's own changes; `wt cleanup <name>` moves what
//! sits on a worktree onto its base.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::TestRepo;
use common::shamhub::{Shamhub, forge_repo};
use serde_json::{Value, json};

fn json_of(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|err| panic!("not JSON ({err}): {text}"))
}

fn create(repo: &TestRepo, name: &str, base: &str) -> Value {
    json_of(&repo.wt(&["create", name, "--base", base, "--json"]).ok())
}

/// Everything a refused command must leave as it was: refs (git-spice's state included),
/// worktrees, the main checkout's status (ignored files too), the ignore rules, wt's team state
/// and the agent files.
fn fingerprint(repo: &TestRepo) -> Vec<String> {
    let list = |dir: PathBuf| -> String {
        let mut names: Vec<String> = std::fs::read_dir(dir)
            .map(|entries| entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.sort();
        names.join(",")
    };
    vec![
        repo.git(&["for-each-ref", "--format=%(refname) %(objectname)"]),
        repo.git(&["worktree", "list", "--porcelain"]),
        repo.git(&["status", "--porcelain", "--ignored", "--untracked-files=all"]),
        std::fs::read_to_string(repo.root.join(".git/info/exclude")).unwrap_or_default(),
        list(repo.root.join(".git/spectacular/team")),
        list(repo.root.join(".claude/agents")),
    ]
}

fn stack_of(repo: &TestRepo) -> Value {
    json_of(&repo.wt(&["stack", "--json"]).ok())
}

fn field<'a>(entries: &'a Value, key: &str) -> Vec<&'a Value> {
    entries.as_array().unwrap().iter().map(|e| &e[key]).collect()
}

#[test]
fn three_creates_make_a_stack_shown_in_topological_order_with_bases() {
    let repo = TestRepo::new();
    let head = repo.git(&["rev-parse", "HEAD"]);
    // Made out of order on purpose: the stack's order comes from the bases, not from when.
    let a = create(&repo, "a", "main");
    assert_eq!((a["created"].as_bool(), a["base"].as_str()), (Some(true), Some("main")));
    create(&repo, "b", "a");
    create(&repo, "c", "b");
    create(&repo, "a2", "a");
    repo.team_commit("b", "b.txt");

    let stack = stack_of(&repo);
    assert_eq!(stack["trunk"], "main");
    let entries = &stack["entries"];
    let names: Vec<&str> = field(entries, "name").iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(names, ["a", "a2", "b", "c"], "each after its base, siblings by name: {stack:#}");
    assert_eq!(field(entries, "base"), [&json!("main"), &json!("a"), &json!("a"), &json!("b")]);
    assert_eq!(field(entries, "depth"), [&json!(1), &json!(2), &json!(2), &json!(3)]);
    assert!(field(entries, "kind").iter().all(|k| *k == "team"), "{stack:#}");
    let b = &entries[2];
    assert_eq!(b["worktree"], json!(repo.team_worktree("b")));
    assert_eq!(
        (b["ahead"].as_u64(), b["behind"].as_u64(), b["dirty"].as_bool()),
        (Some(1), Some(0), Some(false))
    );
    assert_eq!(b["dependents"], json!(["c"]));
    assert_eq!(entries[3]["needs_restack"], true, "c's base moved: {stack:#}");
    assert_eq!(entries[0]["dependents"], json!(["a2", "b"]));

    repo.assert_linear_stack("main", &["a", "b"]);
    assert_eq!(repo.spice_log()["c"]["down"]["name"], "b", "git-spice tracks c on b");
    assert_eq!(repo.git(&["rev-parse", "HEAD"]), head, "the main checkout did not move");
    assert_eq!(repo.git(&["status", "--porcelain"]), "", "nothing shows in the main checkout's status");

    let text = repo.wt(&["stack"]).ok();
    assert!(text.starts_with("main\n  a  team  a on main"), "{text}");
    assert!(text.contains("\n      c  team  c on b (needs a rebase)"), "{text}");
    let list = json_of(&repo.wt(&["list", "--json"]).ok());
    let listed: Vec<&str> = field(&list["entries"], "name").iter().map(|v| v.as_str().unwrap()).collect();
    assert_eq!(listed, ["a", "a2", "b", "c"]);
    assert_eq!(json_of(&repo.wt(&["list", "--stack", "--json"]).ok())["entries"], stack["entries"]);
}

#[test]
fn creating_again_with_the_same_base_reports_the_worktree_and_changes_nothing() {
    let repo = TestRepo::new();
    create(&repo, "a", "main");
    repo.team_commit("a", "a.txt");
    let before = fingerprint(&repo);
    let again = create(&repo, "a", "main");
    assert_eq!(again["created"], false, "{again}");
    assert_eq!(again["worktree"], json!(repo.team_worktree("a")));
    assert_eq!(fingerprint(&repo), before, "the same create again changes nothing");
    let text = repo.wt(&["create", "a", "--base", "main"]).ok();
    assert!(text.contains("team worktree a: already there"), "{text}");

    let verified =
        json_of(&repo.wt(&["create", "a", "--base", "main", "--verify", "make test", "--json"]).ok());
    assert_eq!(verified["verify"], "make test", "a verify given again is kept");
    let record = std::fs::read_to_string(repo.root.join(".git/spectacular/team/a.toml")).unwrap();
    assert!(record.contains("format = 1") && record.contains("verify = \"make test\""), "{record}");
    assert_eq!(create(&repo, "a", "main")["verify"], "make test", "and not dropped by a create without one");
    assert_eq!(json_of(&repo.wt(&["info", "a", "--json"]).ok())["verify"], "make test");
}

#[test]
fn a_create_cut_short_before_git_spice_tracked_the_branch_finishes_when_run_again() {
    let repo = TestRepo::new();
    create(&repo, "a", "main");
    // What a wt killed after `git worktree add` and before `git-spice branch track` leaves.
    let dir = repo.root.join(".worktrees/b");
    repo.git(&["worktree", "add", "--quiet", "-b", "b", dir.to_str().unwrap(), "a"]);
    assert!(!repo.spice_log().contains_key("b"));
    let finished = create(&repo, "b", "a");
    assert_eq!(finished["created"], true, "{finished}");
    assert_eq!(repo.spice_log()["b"]["down"]["name"], "a");
    assert!(repo.root.join(".claude/agents/wt-b.md").exists());
}

#[test]
fn a_name_taken_another_way_is_refused_with_what_holds_it_and_nothing_changes() {
    let repo = TestRepo::new();
    let out = repo.wt(&["create", "first", "--base", "nope"]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert_eq!(
        repo.git(&["for-each-ref"]),
        repo.git(&["for-each-ref", "refs/heads"]),
        "git-spice was not set up"
    );
    let exclude = std::fs::read_to_string(repo.root.join(".git/info/exclude")).unwrap_or_default();
    assert!(!exclude.contains("/.worktrees/"), "nor the ignore rules: {exclude}");
    repo.write(".claude/agents/wt-mine.md", "---\nname: wt-mine\n---\nthe user's own agent\n");
    repo.git(&["add", ".claude/agents/wt-mine.md"]);
    repo.git(&["commit", "--quiet", "-m", "an agent of the project"]);
    create(&repo, "a", "main");
    create(&repo, "b", "a");
    repo.git(&["branch", "loose"]);
    repo.git(&["branch", "side"]);
    std::fs::create_dir_all(repo.root.join(".worktrees/folder")).unwrap();
    repo.git(&[
        "worktree",
        "add",
        "--quiet",
        repo.root.join(".worktrees/elsewhere").to_str().unwrap(),
        "side",
    ]);
    repo.write(".claude/agents/wt-theirs.md", "---\nname: wt-theirs\n---\nuntracked, not wt's\n");

    let cases: [(&[&str], i32, &[&str]); 11] = [
        (&["b", "--base", "main"], 3, &["team worktree b already exists on base a", "wt create b --base a"]),
        (&["loose", "--base", "main"], 3, &["branch loose already exists", "git worktree add"]),
        (
            &["folder", "--base", "main"],
            3,
            &["is in the way: it is not a worktree", "move it out of the way"],
        ),
        (&["elsewhere", "--base", "main"], 3, &["is in the way: it is a worktree on branch side"]),
        (&["d", "--base", "nope"], 3, &["base `nope` does not exist"]),
        (
            &["d", "--base", "side"],
            3,
            &["neither the trunk (main) nor a branch git-spice tracks", "branch track"],
        ),
        (&["mine", "--base", "main"], 3, &["wt-mine.md is not wt's: git tracks it"]),
        (&["theirs", "--base", "main"], 3, &["wt-theirs.md is not wt's: wt did not write it"]),
        (&["feat/x", "--base", "main"], 2, &["contains '/'", "use `feat-x`"]),
        (&["abc123-main", "--base", "main"], 2, &["run abc123"]),
        (&["d", "--base", "d"], 2, &["cannot be its own base"]),
    ];
    let before = fingerprint(&repo);
    for (args, code, expected) in cases {
        let out = repo.wt(&[&["create"], args].concat());
        assert_eq!(out.code(), code, "{args:?}: {}", out.stderr());
        for text in expected {
            assert!(out.stderr().contains(text), "{args:?}: {text:?} not in {}", out.stderr());
        }
        assert!(out.stderr().contains("hint: "), "{args:?} says how to fix it: {}", out.stderr());
        assert_eq!(fingerprint(&repo), before, "{args:?} changed something");
    }
}

#[test]
fn the_generated_agent_names_its_worktree_and_guard_and_git_ignores_it() {
    let repo = TestRepo::new();
    let created =
        json_of(&repo.wt(&["create", "api", "--base", "main", "--verify", "make test", "--json"]).ok());
    let path = repo.root.join(".claude/agents/wt-api.md");
    assert_eq!(created["agent_file"], json!(path));
    assert_eq!(created["agent"], "wt-api");
    let text = std::fs::read_to_string(&path).unwrap();
    let dir = repo.team_worktree("api");
    let (front, body) = text.trim_start_matches("---\n").split_once("\n---\n").unwrap();
    assert!(front.starts_with("name: \"wt-api\"\n"), "{front}");
    assert!(front.contains("skills:\n  - worktree-worker"), "{front}");
    let spectacular_wt = Path::new(env!("CARGO_BIN_EXE_spectacular-wt"));
    let guard = format!(
        "'{}' guard --root '{}' --branch 'api' --sandbox-wrap",
        spectacular_wt.display(),
        dir.display()
    );
    assert!(front.contains(&serde_json::to_string(&guard).unwrap()), "{front}");
    // The hook as Claude Code would run it (`sh -c`), on a write outside the worktree.
    let hook = json!({"cwd": dir, "hook_event_name": "PreToolUse", "tool_name": "Write",
                      "tool_input": {"file_path": repo.root.join("README.md"), "content": "x"}});
    let mut sh = Command::new("sh");
    sh.args(["-c", &guard]);
    let out = common::with_stdin(sh, &hook.to_string());
    let answer: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(answer["hookSpecificOutput"]["permissionDecision"], "deny", "{answer}");
    assert!(body.contains(&format!("{} on branch `api`", dir.display())), "{body}");
    assert!(body.contains(&format!("begin every Bash command with `cd {} && `", dir.display())), "{body}");
    assert!(body.contains("`make test` must pass"), "{body}");
    assert!(body.contains(&format!("'{}' push api`", spectacular_wt.display())), "{body}");

    assert_eq!(repo.git(&["status", "--porcelain"]), "", "the agent file stays out of git status");
    repo.git(&["check-ignore", "--quiet", ".claude/agents/wt-api.md"]);
    repo.wt(&["check-ignore"]).ok();
}

/// `wt guard` with no `--root` (the plugin's hook) on one call of the agent `agent_type`, made
/// from the main checkout (a subagent's cwd): (decision or "none", reason, updatedInput, exit).
fn routed(repo: &TestRepo, agent_type: &str, tool: &str, input: Value) -> (String, String, Value, i32) {
    let hook = json!({
        "cwd": repo.root, "hook_event_name": "PreToolUse", "tool_name": tool,
        "agent_type": agent_type, "tool_input": input,
    });
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wt"));
    cmd.arg("guard");
    let out = common::with_stdin(cmd, &hook.to_string());
    let value: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let specific = &value["hookSpecificOutput"];
    let reason = specific["permissionDecisionReason"].as_str().map(str::to_owned);
    (
        specific["permissionDecision"].as_str().unwrap_or("none").to_owned(),
        reason.unwrap_or_else(|| String::from_utf8_lossy(&out.stderr).into_owned()),
        specific["updatedInput"].clone(),
        out.status.code().unwrap_or(-1),
    )
}

#[test]
fn a_team_agent_is_routed_to_its_worktree_and_its_commands_run_in_the_sandbox() {
    let repo = TestRepo::new();
    create(&repo, "api", "main");
    let dir = repo.team_worktree("api");

    let (decision, _, updated, _) = routed(&repo, "wt-api", "Bash", json!({"command": "ls"}));
    assert_eq!(decision, "allow");
    let command = updated["command"].as_str().unwrap();
    assert!(
        command
            .contains(&format!(" sandbox --root '{}' --branch 'api' --check -- bash -c 'ls'", dir.display())),
        "{command}"
    );
    let write = |path: PathBuf| routed(&repo, "wt-api", "Write", json!({"file_path": path, "content": "x"}));
    assert_eq!(write(dir.join("src.rs")).0, "allow");
    let (decision, reason, _, _) = write(repo.root.join("README.md"));
    assert_eq!(decision, "deny", "the main checkout is outside its worktree: {reason}");
    let (decision, reason, _, _) = routed(&repo, "wt-api", "Bash", json!({"command": "git push origin api"}));
    assert_eq!(decision, "deny", "{reason}");

    let (decision, reason, _, code) = routed(&repo, "wt-web", "Bash", json!({"command": "ls"}));
    assert_eq!((decision.as_str(), code), ("none", 2), "an agent of a worktree that is not there is blocked");
    assert!(reason.contains("wt create web --base <branch>"), "{reason}");
    let (decision, _, _, code) = routed(&repo, "general-purpose", "Bash", json!({"command": "ls"}));
    assert_eq!((decision.as_str(), code), ("none", 0), "other agents are not wt's");
}

#[test]
fn diff_shows_the_branch_changes_from_its_merge_base_with_its_base() {
    let repo = TestRepo::new();
    create(&repo, "a", "main");
    repo.team_commit("a", "a.txt");
    create(&repo, "b", "a");
    repo.team_commit("b", "b.txt");
    // a moves on after b was made: b's diff still shows b's change only.
    repo.team_commit("a", "later.txt");

    let diff = repo.wt(&["diff", "b"]).ok();
    assert!(diff.contains("+++ b/b.txt") && diff.contains("+b.txt"), "{diff}");
    assert!(!diff.contains("a.txt") && !diff.contains("later.txt"), "only b's own change: {diff}");
    let stat = repo.wt(&["diff", "b", "--stat"]).ok();
    assert!(stat.contains("b.txt | 1 +") && stat.contains("1 file changed, 1 insertion(+)"), "{stat}");
    let diff_a = repo.wt(&["diff", "a", "--stat"]).ok();
    assert!(
        diff_a.contains("a.txt") && diff_a.contains("later.txt") && diff_a.contains("2 files changed"),
        "{diff_a}"
    );

    let missing = repo.wt(&["diff", "nope"]);
    assert_eq!(missing.code(), 2, "{}", missing.stderr());
    assert!(
        missing.stderr().contains("no wt worktree named nope") && missing.stderr().contains("a, b"),
        "{}",
        missing.stderr()
    );
}

#[test]
fn info_shows_the_change_request_number_url_and_state_from_the_forge_and_survives_without_it() {
    let repo = TestRepo::new();
    let hub = Shamhub::start(&repo);
    forge_repo(&repo, &hub);
    hub.run(&repo, "gs", &["--no-prompt", "auth", "login"]);
    let env: Vec<(String, String)> = hub.env().iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    let info = |name: &str| json_of(&repo.wt_with_env(&["info", name, "--json"], &env).ok());

    repo.wt_with_env(&["create", "a", "--base", "main"], &env).ok();
    repo.team_commit("a", "a.txt");
    assert_eq!(info("a")["change"], Value::Null, "not submitted yet");
    let submit = ["--no-prompt", "branch", "submit", "--draft", "--fill", "--no-web", "--nav-comment=false"];
    hub.run_in(&repo, &repo.team_worktree("a"), "gs", &submit);

    let change = &info("a")["change"];
    assert_eq!(change["id"], "#1", "{change}");
    assert_eq!(change["number"], 1);
    assert!(change["url"].as_str().unwrap().ends_with("/alice/app/change/1"), "{change}");
    assert_eq!(change["state"], "open");
    assert_eq!(change["unresolved_comments"], 0);
    let text = repo.wt_with_env(&["info", "a"], &env).ok();
    assert!(text.contains("change      #1 open http://"), "{text}");

    hub.run(&repo, "shamhub", &["merge", "alice/app", "1"]);
    assert_eq!(info("a")["change"]["state"], "merged");

    drop(hub);
    let offline = json_of(&repo.wt_with_env(&["list", "--json"], &env).ok());
    let change = &offline["entries"][0]["change"];
    assert_eq!(
        (change["number"].as_u64(), change["state"].as_str()),
        (Some(1), Some("unknown")),
        "{offline:#}"
    );
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn list_shows_run_worktrees_next_to_team_ones() {
    let repo = TestRepo::new();
    let plan = "[run]\nid = \"7ea300\"\n[[phase]]\n[[phase.task]]\nname = \"one\"\nrun = \"echo 1 > one\"\n";
    repo.wt(&["run", repo.plan("plan.toml", plan).to_str().unwrap()]).ok();
    let task_branch = "7ea300-task-1-1-one";
    create(&repo, "on-run", task_branch);
    let list = json_of(&repo.wt(&["list", "--json"]).ok());
    let entries = list["entries"].as_array().unwrap();
    let run = entries.iter().find(|e| e["name"] == "7ea300-main").unwrap_or_else(|| panic!("{list:#}"));
    assert_eq!((run["kind"].as_str(), run["run_id"].as_str()), (Some("run"), Some("7ea300")));
    assert_eq!((run["branch"].as_str(), run["base"].as_str()), (Some(task_branch), Some("main")));
    assert_eq!(run["dependents"], json!(["on-run"]));
    let team = entries.iter().find(|e| e["name"] == "on-run").unwrap();
    assert_eq!((team["kind"].as_str(), team["depth"].as_u64()), (Some("team"), Some(2)));
}

#[test]
fn cleanup_of_the_middle_moves_the_top_onto_the_bottom_and_keeps_its_commits() {
    let repo = TestRepo::new();
    for (name, base) in [("a", "main"), ("b", "a"), ("c", "b")] {
        create(&repo, name, base);
        repo.team_commit(name, &format!("{name}.txt"));
    }
    let b_tip = repo.git(&["rev-parse", "b"]);

    std::fs::write(repo.team_worktree("b").join("notes.txt"), "unsaved\n").unwrap();
    let before = fingerprint(&repo);
    let refused = repo.wt(&["cleanup", "b"]);
    assert_eq!(refused.code(), 6, "{}", refused.stderr());
    assert!(refused.stderr().contains("has uncommitted files: notes.txt"), "{}", refused.stderr());
    assert!(refused.stderr().contains("--force"), "{}", refused.stderr());
    assert_eq!(fingerprint(&repo), before, "a refused cleanup changes nothing");
    std::fs::remove_file(repo.team_worktree("b").join("notes.txt")).unwrap();

    let removed = json_of(&repo.wt(&["cleanup", "b", "--json"]).ok());
    assert_eq!(removed["moved"], json!(["c"]), "{removed:#}");
    assert_eq!(removed["base"], "a");
    assert_eq!(removed["branch"], "kept", "b has a commit a lacks: {removed:#}");
    let log = repo.spice_log();
    assert_eq!(log["c"]["down"]["name"], "a", "c now sits on a");
    assert!(log["c"]["down"].get("needsRestack").is_none(), "{}", log["c"]);
    assert!(!log.contains_key("b"), "b left git-spice's stack");
    assert_eq!(repo.subjects("main", "c"), ["a: a.txt", "c: c.txt"], "c keeps its own commit only");
    assert_eq!(repo.git(&["rev-parse", "b"]), b_tip, "b's commit is not lost");
    assert!(!repo.team_worktree("b").exists());
    assert!(!repo.root.join(".claude/agents/wt-b.md").exists());
    assert!(!repo.root.join(".git/spectacular/team/b.toml").exists());
    assert_eq!(repo.git_in(&repo.team_worktree("c"), &["status", "--porcelain"]), "");
    let names: Vec<String> =
        field(&stack_of(&repo)["entries"], "name").iter().map(|v| v.as_str().unwrap().to_owned()).collect();
    assert_eq!(names, ["a", "c"]);

    let again = repo.wt(&["cleanup", "b"]).ok();
    assert!(again.contains("nothing left to clean up"), "{again}");
    assert_eq!(repo.git(&["status", "--porcelain"]), "");
}

#[test]
fn cleanup_deletes_a_branch_its_base_holds_and_refuses_a_dependent_in_the_users_checkout() {
    let repo = TestRepo::new();
    create(&repo, "a", "main");
    create(&repo, "empty", "a");
    let removed = json_of(&repo.wt(&["cleanup", "empty", "--json"]).ok());
    assert_eq!(removed["branch"], "deleted", "nothing of it is lost: {removed:#}");
    assert!(!repo.branch_exists("empty"));

    create(&repo, "b", "a");
    repo.git(&["worktree", "remove", repo.team_worktree("b").to_str().unwrap()]);
    repo.git(&["checkout", "--quiet", "b"]);
    let before = fingerprint(&repo);
    let refused = repo.wt(&["cleanup", "a"]);
    assert_eq!(refused.code(), 6, "{}", refused.stderr());
    assert!(refused.stderr().contains("b: it is checked out in your checkout"), "{}", refused.stderr());
    assert_eq!(fingerprint(&repo), before);
}

#[test]
fn cleanup_refuses_to_move_the_branches_of_a_run_at_work() {
    let repo = TestRepo::new();
    create(&repo, "a", "main");
    repo.team_commit("a", "a.txt");
    let plan =
        "[run]\nid = \"5be700\"\nbase = \"a\"\n[[phase]]\n[[phase.task]]\nname = \"t\"\nprompt = \"x\"\n";
    let step = json_of(&repo.wt(&["step", repo.plan("plan.toml", plan).to_str().unwrap(), "--json"]).ok());
    assert_eq!(step["status"], "dispatch", "{step:#}");
    let before = fingerprint(&repo);
    let refused = repo.wt(&["cleanup", "a"]);
    assert_eq!(refused.code(), 6, "{}", refused.stderr());
    assert!(refused.stderr().contains("it is run 5be700's, which is dispatched now"), "{}", refused.stderr());
    assert!(refused.stderr().contains("status 5be700"), "{}", refused.stderr());
    assert_eq!(fingerprint(&repo), before, "nothing moved under the run's workers");
}
