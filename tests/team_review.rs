//! A team's stack through review, against real git, git-spice and shamhub (git-spice's offline
//! forge): `wt pr` opens drafts based on each worktree's base and refuses a base not yet
//! opened; after the bottom is squash-merged, `wt sync` moves the middle onto the trunk,
//! restacks the top in its own worktree, retargets both change requests and removes the merged
//! worktree; `wt push` and `wt pr` never overwrite a commit someone else pushed; `wt rebase` is a
//! no-op when current, moves onto the trunk when the base merged, and leaves a conflict in the
//! worktree with the commands to continue or abort; a team agent's own wt commands pass the
//! guard unwrapped. The user's checkout never changes.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use common::shamhub::{Shamhub, forge_repo};
use common::{TestRepo, WtOutput};
use serde_json::{Value, json};

/// A repository whose `origin` is `alice/app` on shamhub, git-spice logged in.
struct Forge {
    repo: TestRepo,
    hub: Shamhub,
}

impl Forge {
    fn new() -> Forge {
        let repo = TestRepo::new();
        let hub = Shamhub::start(&repo);
        forge_repo(&repo, &hub);
        hub.run(&repo, "gs", &["--no-prompt", "auth", "login"]);
        Forge { repo, hub }
    }

    fn wt(&self, args: &[&str]) -> WtOutput {
        self.repo.wt_with_env(args, &self.hub.env())
    }

    fn json(&self, args: &[&str]) -> Value {
        let text = self.wt(args).ok();
        serde_json::from_str(&text).unwrap_or_else(|err| panic!("not JSON ({err}): {text}"))
    }

    fn worktree(&self, name: &str) -> PathBuf {
        self.repo.team_worktree(name)
    }

    fn commit(&self, name: &str, file: &str, content: &str) {
        self.repo.team_commit_with(name, file, content);
    }

    /// shamhub's record of change request `number` (its base, head, draft state).
    fn change(&self, number: u64) -> Value {
        let text = self.hub.run(&self.repo, "shamhub", &["dump", "change", &number.to_string()]);
        serde_json::from_str(&text).unwrap()
    }

    fn changes(&self) -> Vec<Value> {
        let text = self.hub.run(&self.repo, "shamhub", &["dump", "changes"]);
        serde_json::from_str::<Value>(&text).unwrap().as_array().cloned().unwrap_or_default()
    }

    /// Where `origin` has `branch` now (None: nowhere).
    fn remote_tip(&self, branch: &str) -> Option<String> {
        let out = self.repo.git(&["ls-remote", "origin", &format!("refs/heads/{branch}")]);
        out.split_whitespace().next().map(str::to_owned)
    }

    fn tip(&self, branch: &str) -> String {
        self.repo.git(&["rev-parse", branch]).trim().to_owned()
    }

    /// A second clone of `origin` (someone else's), with `branch` checked out.
    fn other_clone(&self, branch: &str) -> PathBuf {
        let url = self.repo.git(&["remote", "get-url", "origin"]);
        let dir = self.repo.scratch.join("other");
        self.repo.git_in(&self.repo.scratch, &["clone", "--quiet", "--branch", branch, url.trim(), "other"]);
        dir
    }
}

fn create_stack(forge: &Forge, names: &[(&str, &str)]) {
    for (name, base) in names {
        forge.wt(&["create", name, "--base", base]).ok();
        forge.commit(name, &format!("{name}.txt"), &format!("{name}\n"));
    }
}

#[test]
fn a_squash_merged_bottom_is_synced_away_and_the_stack_above_moves_onto_the_trunk() {
    let forge = Forge::new();
    let repo = &forge.repo;
    create_stack(&forge, &[("a", "main"), ("b", "a")]);
    forge.commit("b", "b2.txt", "more b\n");
    create_stack(&forge, &[("c", "b")]);
    let checkout = repo.checkout_snapshot();

    let refused = forge.wt(&["pr", "b"]);
    assert_eq!(refused.code(), 6, "{}", refused.stderr());
    assert!(refused.stderr().contains("base a has no change request yet"), "{}", refused.stderr());
    assert!(refused.stderr().contains("`wt pr a`"), "the fix names the command: {}", refused.stderr());
    assert!(forge.changes().is_empty(), "nothing was opened");

    for (name, number) in [("a", 1), ("b", 2), ("c", 3)] {
        let pr = forge.json(&["pr", name, "--json"]);
        assert_eq!((pr["number"].as_u64(), pr["created"].as_bool()), (Some(number), Some(true)), "{pr}");
        assert!(pr["url"].as_str().unwrap().ends_with(&format!("/alice/app/change/{number}")), "{pr}");
        assert_eq!(pr["sha"], forge.tip(name));
        assert_eq!(forge.remote_tip(name).as_deref(), Some(forge.tip(name).as_str()));
    }
    let bases: Vec<String> = forge
        .changes()
        .iter()
        .map(|c| format!("{}<-{} draft={}", c["base"]["ref"], c["head"]["ref"], c["draft"]))
        .collect();
    assert_eq!(bases, [r#""main"<-"a" draft=true"#, r#""a"<-"b" draft=true"#, r#""b"<-"c" draft=true"#]);
    let text = forge.wt(&["pr", "b"]).ok();
    assert!(text.contains("b: change request #2 updated, based on a"), "again updates it: {text}");
    assert_eq!(forge.changes().len(), 3, "and opens no other");

    forge.hub.run(repo, "shamhub", &["merge", "-squash", "alice/app", "1"]);
    let a_tip = forge.tip("a");
    let agent_a = repo.root.join(".claude/agents/wt-a.md");
    let agent_a_text = std::fs::read(&agent_a).unwrap();
    let sync = forge.wt(&["sync", "--json"]);
    assert_eq!(sync.code(), 0, "{}\n{}", sync.stdout(), sync.stderr());
    let synced: Value = serde_json::from_str(&sync.stdout()).unwrap();
    assert_eq!(synced["merged"], json!(["a"]), "{synced:#}");
    assert_eq!(synced["moved"], json!([{"branch": "b", "from": "a", "onto": "main"}]));
    assert_eq!(synced["restacked"], json!(["c"]));
    assert_eq!(synced["resubmitted"], json!(["b", "c"]));
    assert_eq!(synced["removed"], json!([forge.worktree("a")]));
    assert_eq!(synced["deleted"], json!(["a"]));
    assert_eq!(synced["left"], json!([]));
    assert_eq!(synced["trunk"]["state"], "checked_out", "main is the user's checkout: {synced:#}");
    assert_eq!(synced["trunk"]["behind"], 1);
    let progress = sync.stderr();
    for step in ["a: #1 was merged", "b: moved off a onto main", "c: restacked", "a: deleted (was "] {
        assert!(progress.contains(&format!("wt sync: {step}")), "{step:?} reported: {progress}");
    }

    assert_eq!(forge.change(2)["base"]["ref"], "main", "#2 is retargeted onto the trunk");
    assert_eq!(forge.change(3)["base"]["ref"], "b", "#3 stays on b");
    assert_eq!(repo.subjects("main", "b"), ["b: b.txt", "b: b2.txt"], "b keeps only its own commits");
    assert_eq!(repo.subjects("main", "c"), ["b: b.txt", "b: b2.txt", "c: c.txt"]);
    repo.assert_linear_stack("main", &["b", "c"]);
    for branch in ["b", "c"] {
        assert_eq!(forge.remote_tip(branch).as_deref(), Some(forge.tip(branch).as_str()), "{branch} pushed");
        let dir = forge.worktree(branch);
        assert_eq!(repo.git_in(&dir, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(), branch);
        assert_eq!(repo.git_in(&dir, &["status", "--porcelain"]), "", "{branch}'s worktree is clean");
    }
    assert!(!forge.worktree("a").exists());
    assert!(!agent_a.exists(), "a's agent is removed");
    assert!(!repo.branch_exists("a"), "a was deleted (its commit {a_tip} is in #1)");
    assert!(!repo.spice_log().contains_key("a"));
    std::fs::write(&agent_a, agent_a_text).unwrap();
    assert_eq!(repo.checkout_snapshot(), checkout, "the user's checkout did not change but for a's agent");

    let again = forge.json(&["sync", "--json"]);
    assert_eq!(again["merged"], json!([]), "nothing left to do: {again:#}");
    let info = forge.json(&["info", "b", "--json"]);
    assert_eq!((info["base"].as_str(), info["change"]["state"].as_str()), (Some("main"), Some("open")));
}

#[test]
fn push_and_pr_never_overwrite_a_commit_someone_else_pushed() {
    let forge = Forge::new();
    let repo = &forge.repo;
    create_stack(&forge, &[("a", "main")]);
    let checkout = repo.checkout_snapshot();
    let pushed = forge.json(&["push", "a", "--json"]);
    assert_eq!((pushed["outcome"].as_str(), pushed["before"].as_str()), (Some("created"), None), "{pushed}");
    assert_eq!(repo.git(&["config", "branch.a.remote"]).trim(), "origin", "the first push sets the upstream");
    assert_eq!(repo.git(&["config", "branch.a.merge"]).trim(), "refs/heads/a");

    forge.commit("a", "more.txt", "more\n");
    assert_eq!(forge.json(&["push", "a", "--json"])["outcome"], "fast_forward");
    let dir = forge.worktree("a");
    repo.git_in(&dir, &["commit", "--quiet", "--amend", "-m", "a: more, reworded"]);
    let replaced = forge.json(&["push", "a", "--json"]);
    assert_eq!(
        replaced["outcome"], "replaced",
        "after a rewrite, wt's own last push is replaced: {replaced}"
    );
    assert_eq!(forge.remote_tip("a").as_deref(), Some(forge.tip("a").as_str()));
    assert_eq!(forge.json(&["push", "a", "--json"])["outcome"], "up_to_date");

    let other = forge.other_clone("a");
    std::fs::write(other.join("theirs.txt"), "theirs\n").unwrap();
    repo.git_in(&other, &["add", "theirs.txt"]);
    repo.git_in(&other, &["commit", "--quiet", "-m", "their commit on a"]);
    repo.git_in(&other, &["push", "--quiet", "origin", "a"]);
    let theirs = repo.git_in(&other, &["rev-parse", "HEAD"]).trim().to_owned();
    repo.git_in(&dir, &["commit", "--quiet", "--amend", "-m", "a: more, rewritten again"]);

    let refused = forge.wt(&["push", "a"]);
    assert_eq!(refused.code(), 6, "{}", refused.stderr());
    let stderr = refused.stderr();
    assert!(stderr.contains("someone else pushed a: origin has it at"), "{stderr}");
    assert!(
        stderr.contains("git fetch origin a && git log a..origin/a"),
        "with the commands to look: {stderr}"
    );
    assert_eq!(forge.remote_tip("a").as_deref(), Some(theirs.as_str()), "their commit is still there");

    // A broad fetch moves origin/a onto their commit: git-spice's own lease would now pass.
    repo.git(&["fetch", "--quiet", "origin"]);
    let refused = forge.wt(&["pr", "a"]);
    assert_eq!(refused.code(), 6, "{}", refused.stderr());
    assert!(refused.stderr().contains("someone else pushed a"), "{}", refused.stderr());
    assert_eq!(forge.remote_tip("a").as_deref(), Some(theirs.as_str()), "their commit is still there");
    assert!(forge.changes().is_empty(), "no change request was opened");

    let trunk = forge.wt(&["push", "main"]);
    assert_eq!(trunk.code(), 2, "the trunk is no team worktree: {}", trunk.stderr());
    let run_name = forge.wt(&["pr", "abc123-main"]);
    assert!(run_name.stderr().contains("`wt submit abc123`"), "{}", run_name.stderr());
    repo.git_in(&dir, &["switch", "--quiet", "-c", "elsewhere"]);
    let switched = forge.wt(&["push", "a"]);
    assert_eq!(switched.code(), 3, "{}", switched.stderr());
    assert!(
        switched.stderr().contains("has branch elsewhere checked out, not its own branch a"),
        "{}",
        switched.stderr()
    );
    assert_eq!(repo.checkout_snapshot(), checkout, "the user's checkout did not change");
}

#[test]
fn rebase_moves_onto_the_trunk_when_the_base_was_merged() {
    let forge = Forge::new();
    let repo = &forge.repo;
    create_stack(&forge, &[("a", "main"), ("b", "a")]);
    forge.wt(&["pr", "a"]).ok();
    forge.wt(&["pr", "b"]).ok();
    forge.hub.run(repo, "shamhub", &["merge", "-squash", "alice/app", "1"]);

    let refused = forge.wt(&["pr", "b"]);
    assert_eq!(refused.code(), 6, "{}", refused.stderr());
    assert!(refused.stderr().contains("base a was merged (#1)"), "{}", refused.stderr());
    assert!(refused.stderr().contains("`wt rebase b`"), "{}", refused.stderr());

    let rebased = forge.json(&["rebase", "b", "--json"]);
    assert_eq!(rebased["outcome"], "moved", "{rebased:#}");
    assert_eq!((rebased["base"].as_str(), rebased["from"].as_str()), (Some("main"), Some("a")));
    assert_eq!(rebased["passed"], json!(["a"]));
    assert_eq!(repo.subjects("main", "b"), ["b: b.txt"], "only b's own commit");
    let pr = forge.json(&["pr", "b", "--json"]);
    assert_eq!((pr["created"].as_bool(), pr["base"].as_str()), (Some(false), Some("main")), "{pr}");
    assert_eq!(forge.change(2)["base"]["ref"], "main", "the update retargets the base");
    assert_eq!(forge.json(&["rebase", "b", "--json"])["outcome"], "already_current");

    // The merged worktree holds a file nobody committed: sync keeps it, says why, and exits 6.
    std::fs::write(forge.worktree("a").join("notes.txt"), "unsaved\n").unwrap();
    let kept = forge.wt(&["sync", "a", "--json"]);
    assert_eq!(kept.code(), 6, "{}", kept.stderr());
    let synced: Value = serde_json::from_str(&kept.stdout()).unwrap();
    assert_eq!(synced["merged"], json!(["a"]));
    assert!(
        synced["left"][0]["reason"].as_str().unwrap().contains("has uncommitted files: notes.txt"),
        "{synced:#}"
    );
    assert!(forge.worktree("a").join("notes.txt").exists() && repo.branch_exists("a"));
    std::fs::remove_file(forge.worktree("a").join("notes.txt")).unwrap();
    let synced = forge.json(&["sync", "a", "--json"]);
    assert_eq!(
        (synced["removed"].clone(), synced["deleted"].clone()),
        (json!([forge.worktree("a")]), json!(["a"]))
    );
}

#[test]
fn a_rebase_conflict_is_left_in_the_worktree_with_the_commands_to_continue_or_abort() {
    let repo = TestRepo::new();
    let wt_json = |args: &[&str]| -> Value { serde_json::from_str(&repo.wt(args).ok()).unwrap() };
    let dir = |name: &str| repo.root.join(".worktrees").join(name);
    let commit = |name: &str, file: &str, content: &str| {
        std::fs::write(dir(name).join(file), content).unwrap();
        repo.git_in(&dir(name), &["add", file]);
        repo.git_in(&dir(name), &["commit", "--quiet", "-m", &format!("{name}: {file} {}", content.trim())]);
    };
    repo.wt(&["create", "a", "--base", "main"]).ok();
    commit("a", "f.txt", "a\n");
    repo.wt(&["create", "b", "--base", "a"]).ok();
    commit("b", "f.txt", "b\n");
    repo.wt(&["create", "c", "--base", "b"]).ok();
    commit("c", "c.txt", "c\n");
    let checkout = repo.checkout_snapshot();

    let current = wt_json(&["rebase", "b", "--json"]);
    assert_eq!(
        (current["outcome"].as_str(), current["restacked"].clone()),
        (Some("already_current"), json!([]))
    );
    let text = repo.wt(&["rebase", "c"]).ok();
    assert!(text.contains("c: already on b's tip, nothing to rebase"), "{text}");

    commit("a", "f.txt", "a2\n");
    let b_before = repo.git(&["rev-parse", "b"]);
    let stopped = repo.wt(&["rebase", "b"]);
    assert_eq!(stopped.code(), 6, "{}", stopped.stderr());
    let stderr = stopped.stderr();
    assert!(stderr.contains("rebasing b onto a stopped on a conflict in"), "{stderr}");
    assert!(stderr.contains(": f.txt; the rebase is left there"), "{stderr}");
    assert!(stderr.contains(&format!("git -C {} add <file>", dir("b").display())), "{stderr}");
    assert!(
        stderr.contains("then `wt rebase b` continues") && stderr.contains("`wt rebase b --abort`"),
        "{stderr}"
    );
    assert_eq!(repo.git_in(&dir("b"), &["status", "--porcelain"]), "UU f.txt\n", "left in b's worktree");

    let blocked = repo.wt(&["rebase", "a"]);
    assert_eq!(blocked.code(), 6, "b, on a, is mid-rebase: {}", blocked.stderr());
    assert!(blocked.stderr().contains("b: a rebase of it is under way in"), "{}", blocked.stderr());
    let unresolved = repo.wt(&["rebase", "b"]);
    assert_eq!(unresolved.code(), 6, "{}", unresolved.stderr());
    assert!(unresolved.stderr().contains("still has conflicts: f.txt"), "{}", unresolved.stderr());

    let aborted = wt_json(&["rebase", "b", "--abort", "--json"]);
    assert_eq!(aborted["outcome"], "aborted");
    assert_eq!(repo.git(&["rev-parse", "b"]), b_before, "b is as it was");
    assert_eq!(repo.git_in(&dir("b"), &["status", "--porcelain"]), "");
    let nothing = repo.wt(&["rebase", "b", "--abort"]);
    assert_eq!(nothing.code(), 2, "{}", nothing.stderr());

    assert_eq!(repo.wt(&["rebase", "b"]).code(), 6);
    std::fs::write(dir("b").join("f.txt"), "a2 and b\n").unwrap();
    repo.git_in(&dir("b"), &["add", "f.txt"]);
    let continued = wt_json(&["rebase", "b", "--json"]);
    assert_eq!(continued["outcome"], "continued", "{continued:#}");
    assert_eq!(continued["restacked"], json!(["c"]), "c restacked in its own worktree");
    assert_eq!(repo.subjects("main", "c"), ["a: f.txt a", "a: f.txt a2", "b: f.txt b", "c: c.txt c"]);
    repo.assert_linear_stack("main", &["a", "b", "c"]);
    assert_eq!(repo.git_in(&dir("c"), &["status", "--porcelain"]), "");
    assert_eq!(repo.checkout_snapshot(), checkout, "the user's checkout did not change");
}

/// `wt guard` as the plugin's hook (no `--root`) on one Bash call of the agent `wt-api`:
/// (decision, whether it was rewritten into `wt sandbox`).
fn guarded(repo: &TestRepo, command: &str, root: Option<&Path>) -> (String, bool) {
    guarded_input(repo, json!({"command": command}), root)
}

fn guarded_input(repo: &TestRepo, tool_input: Value, root: Option<&Path>) -> (String, bool) {
    let hook = json!({
        "cwd": repo.root, "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "agent_type": "wt-api", "tool_input": tool_input,
    });
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wt"));
    cmd.arg("guard");
    if let Some(root) = root {
        cmd.args(["--root", root.to_str().unwrap(), "--branch", "api", "--sandbox-wrap"]);
    }
    let out = common::with_stdin(cmd, &hook.to_string());
    let value: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let specific = &value["hookSpecificOutput"];
    let decision = specific["permissionDecision"].as_str().unwrap_or("none").to_owned();
    let wrapped =
        specific["updatedInput"]["command"].as_str().is_some_and(|c| c.contains(" sandbox --root "));
    (decision, wrapped)
}

#[test]
fn a_team_agents_own_wt_commands_pass_the_guard_unwrapped_and_nothing_else_does() {
    let repo = TestRepo::new();
    repo.wt(&["create", "api", "--base", "main"]).ok();
    repo.wt(&["create", "web", "--base", "main"]).ok();
    let dir = repo.root.join(".worktrees/api");
    let exe = Path::new(env!("CARGO_BIN_EXE_spectacular-wt"));
    let agent = std::fs::read_to_string(repo.root.join(".claude/agents/wt-api.md")).unwrap();
    let told = format!("'{}' push api", exe.display());
    assert!(agent.contains(&format!("`{told}`")), "the agent is told to run {told}: {agent}");
    let own = [
        told.clone(),
        format!("cd {} && '{}' pr api --json", dir.display(), exe.display()),
        "spectacular-wt rebase api".to_owned(),
        "wt rebase api --abort".to_owned(),
        "wt info api --json".to_owned(),
        "wt diff api --stat".to_owned(),
        "wt list --stack".to_owned(),
        "wt stack --json".to_owned(),
    ];
    for command in &own {
        for root in [None, Some(dir.as_path())] {
            assert_eq!(guarded(&repo, command, root), ("allow".to_owned(), false), "{command} ({root:?})");
        }
    }
    // Its own poll too, in the background; in the foreground it would hold the agent's turn.
    let poll = "wt poll api --timeout 30";
    for root in [None, Some(dir.as_path())] {
        let background = json!({"command": poll, "run_in_background": true});
        assert_eq!(guarded_input(&repo, background, root), ("allow".to_owned(), false), "{root:?}");
        assert_eq!(guarded(&repo, poll, root), ("deny".to_owned(), false), "{root:?}");
    }
    for command in [
        "wt push web",
        "wt push api; touch /tmp/x",
        "wt push api && git push origin main",
        "wt push api > out.txt",
        "wt push $(cat name)",
        "X=1 wt push api",
        "wt push api --force",
        "wt sync",
        "wt cleanup api",
        "/tmp/spectacular-wt push api",
    ] {
        let (decision, wrapped) = guarded(&repo, command, None);
        assert!(decision == "deny" || wrapped, "{command} goes the normal way: {decision}");
    }
}

#[test]
fn a_runs_stack_is_synced_by_its_id_with_the_top_restacked_in_the_runs_main_worktree() {
    let forge = Forge::new();
    let repo = &forge.repo;
    let plan = "[run]\nid = \"5eb002\"\n[[phase]]\n[[phase.task]]\nname = \"one\"\nrun = \"echo 1 > one\"\n\
                [[phase]]\n[[phase.task]]\nname = \"two\"\nrun = \"echo 2 > two\"\n";
    forge.wt(&["run", repo.plan("plan.toml", plan).to_str().unwrap()]).ok();
    forge.wt(&["submit", "5eb002"]).ok();
    let (one, two) = ("5eb002-task-1-1-one", "5eb002-task-2-1-two");
    assert_eq!(forge.change(2)["base"]["ref"], one);
    let checkout = repo.checkout_snapshot();
    forge.hub.run(repo, "shamhub", &["merge", "-squash", "alice/app", "1"]);

    let unknown = forge.wt(&["sync", "0ff1ce"]);
    assert_eq!(unknown.code(), 2, "{}", unknown.stderr());
    assert!(unknown.stderr().contains("git-spice tracks no branch of run 0ff1ce"), "{}", unknown.stderr());
    let synced = forge.json(&["sync", "5eb002", "--json"]);
    assert_eq!(synced["merged"], json!([one]), "{synced:#}");
    assert_eq!(synced["moved"], json!([{"branch": two, "from": one, "onto": "main"}]));
    assert_eq!(synced["resubmitted"], json!([two]));
    assert_eq!((synced["deleted"].clone(), synced["removed"].clone()), (json!([one]), json!([])));
    assert_eq!(forge.change(2)["base"]["ref"], "main");
    let main_worktree = repo.root.join(".worktrees/5eb002-main");
    assert_eq!(repo.git_in(&main_worktree, &["rev-parse", "--abbrev-ref", "HEAD"]).trim(), two);
    assert_eq!(repo.git_in(&main_worktree, &["status", "--porcelain"]), "");
    assert_eq!(
        repo.subjects("main", two).len(),
        1,
        "only the second task's commit: {:?}",
        repo.subjects("main", two)
    );
    assert_eq!(forge.remote_tip(two).as_deref(), Some(forge.tip(two).as_str()));
    assert!(!repo.branch_exists(one));
    assert_eq!(repo.checkout_snapshot(), checkout, "the user's checkout did not change");
}

#[test]
fn a_wt_planted_in_the_worktree_is_not_what_runs_for_the_agents_own_command() {
    let repo = TestRepo::new();
    repo.wt(&["create", "api", "--base", "main"]).ok();
    let dir = repo.root.join(".worktrees/api");
    // The agent writes a `wt` into its worktree; a PATH with `.` in it would find that one.
    let planted = dir.join("wt");
    std::fs::write(&planted, "#!/bin/sh\ntouch \"$(dirname \"$0\")/../../planted-ran\"\n").unwrap();
    std::fs::set_permissions(&planted, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let hook = json!({
        "cwd": repo.root, "hook_event_name": "PreToolUse", "tool_name": "Bash",
        "agent_type": "wt-api", "tool_input": {"command": format!("cd {} && wt info api --json", dir.display())},
    });
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wt"));
    cmd.arg("guard");
    let out = common::with_stdin(cmd, &hook.to_string());
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let command = value["hookSpecificOutput"]["updatedInput"]["command"].as_str().unwrap().to_owned();

    let path = format!(".:{}", std::env::var("PATH").unwrap());
    let mut bash = repo.command("bash", &repo.root);
    let ran = bash.args(["-c", &command]).env("PATH", path).output().unwrap();
    assert!(ran.status.success(), "{command}: {}", String::from_utf8_lossy(&ran.stderr));
    let info: Value =
        serde_json::from_slice(&ran.stdout).unwrap_or_else(|_| panic!("not wt's info: {command}"));
    assert_eq!(info["name"], "api", "{info:#}");
    assert!(!repo.root.join("planted-ran").exists(), "the planted wt ran outside the sandbox: {command}");
}

#[test]
fn an_agent_resolves_the_conflict_its_rebase_left_through_the_guard() {
    let repo = TestRepo::new();
    let dir = repo.team_worktree("b");
    repo.wt(&["create", "a", "--base", "main"]).ok();
    repo.team_commit_with("a", "f.txt", "a\n");
    repo.wt(&["create", "b", "--base", "a"]).ok();
    repo.team_commit_with("b", "f.txt", "b\n");
    repo.team_commit_with("a", "f.txt", "a2\n");
    assert_eq!(repo.wt(&["rebase", "b"]).code(), 6, "stopped on the conflict, left in b's worktree");

    // The agent wt-b, its HEAD detached by the rebase: still routed, its Bash still sandboxed.
    let hook = |tool: &str, input: Value| -> Value {
        let call = json!({"cwd": repo.root, "hook_event_name": "PreToolUse", "tool_name": tool,
                          "agent_type": "wt-b", "tool_input": input});
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wt"));
        cmd.arg("guard");
        let out = common::with_stdin(cmd, &call.to_string());
        serde_json::from_slice::<Value>(&out.stdout).unwrap()["hookSpecificOutput"].clone()
    };
    let run = |decision: &Value| {
        let command = decision["updatedInput"]["command"].as_str().unwrap_or_else(|| panic!("{decision:#}"));
        let out = repo.command("bash", &repo.root).args(["-c", command]).output().unwrap();
        assert!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
    };
    let write = hook("Write", json!({"file_path": dir.join("f.txt"), "content": "a2 and b\n"}));
    assert_eq!(write["permissionDecision"], "allow", "{write:#}");
    std::fs::write(dir.join("f.txt"), "a2 and b\n").unwrap();
    let add = hook("Bash", json!({"command": format!("cd {} && git add f.txt", dir.display())}));
    assert!(add["updatedInput"]["command"].as_str().unwrap().contains(" sandbox --root "), "{add:#}");
    run(&add);
    run(&hook("Bash", json!({"command": "wt rebase b"})));
    assert_eq!(repo.git_in(&dir, &["status", "--porcelain"]), "", "the rebase finished");
    assert_eq!(repo.subjects("main", "b"), ["a: f.txt", "a: f.txt", "b: f.txt"]);
}
