//! guard.toml rules and profiles, `--detect`, routing by the worker slot, and the orchestrator's
//! own calls.

mod common;

use std::path::Path;
use std::process::Command;

use common::TestRepo;
use serde_json::{Value, json};

/// Runs `wt guard <args>` on one call; returns (decision or "none", reason, exit code).
fn guard(
    args: &[&str],
    cwd: &Path,
    tool: &str,
    input: Value,
    agent_type: Option<&str>,
) -> (String, String, i32) {
    let mut hook =
        json!({"cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": input});
    if let Some(agent_type) = agent_type {
        hook["agent_type"] = json!(agent_type);
    }
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wt"));
    cmd.arg("guard").args(args);
    let out = common::with_stdin(cmd, &hook.to_string());
    let code = out.status.code().unwrap_or(-1);
    let stdout = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if stdout.is_empty() {
        return ("none".into(), String::from_utf8_lossy(&out.stderr).into_owned(), code);
    }
    let value: Value = serde_json::from_str(&stdout).unwrap();
    let specific = &value["hookSpecificOutput"];
    (
        specific["permissionDecision"].as_str().unwrap().to_owned(),
        specific["permissionDecisionReason"].as_str().unwrap().to_owned(),
        code,
    )
}

fn bash(command: &str) -> Value {
    json!({ "command": command })
}

fn file(path: &Path) -> Value {
    json!({ "file_path": path, "content": "x" })
}

const RULES: &str = r#"
reads = "deny-outside"

[[always_deny]]
rule = "Bash(npm publish:*)"
reason = "publishing happens in CI"

[[always_allow]]
rule = "Bash(git push:*)"

[profiles.docs]
deny = [{ rule = "Edit(src/**)", reason = "docs branches change only docs" }]

[profiles.default]
ask = [{ rule = "Bash(make deploy:*)", reason = "deploys need a person" }]
"#;

fn repo_with_rules() -> TestRepo {
    let repo = TestRepo::new();
    repo.write(".spectacular/guard.toml", RULES);
    repo.git(&["add", ".spectacular"]);
    repo.git(&["commit", "--quiet", "-m", "guard rules"]);
    for (dir, branch) in [("docs-wt", "docs/readme"), ("feat-wt", "feat/login")] {
        repo.git(&["worktree", "add", "--quiet", "-b", branch, repo.scratch.join(dir).to_str().unwrap()]);
    }
    repo
}

#[test]
fn detect_applies_the_project_rules_and_the_branch_type_profile() {
    let repo = repo_with_rules();
    let docs = repo.scratch.join("docs-wt");
    let feat = repo.scratch.join("feat-wt");
    let detect = ["--detect"];

    let (d, reason, code) = guard(&detect, &docs, "Bash", bash("npm publish --tag next"), None);
    assert_eq!((d.as_str(), code), ("deny", 0));
    assert!(
        reason.contains("publishing happens in CI") && reason.contains(docs.to_str().unwrap()),
        "{reason}"
    );
    let (d, reason, _) = guard(&detect, &docs, "Edit", file(&docs.join("src/lib.rs")), None);
    assert_eq!(d, "deny", "{reason}");
    assert!(reason.contains("docs branches change only docs"), "{reason}");
    assert_eq!(guard(&detect, &docs, "Edit", file(&docs.join("docs/guide.md")), None).0, "allow");
    assert_eq!(
        guard(&detect, &feat, "Edit", file(&feat.join("src/lib.rs")), None).0,
        "allow",
        "feat has no docs profile"
    );
    assert_eq!(guard(&detect, &feat, "Bash", bash("make deploy ENV=prod"), None).0, "ask", "default profile");
    assert_eq!(
        guard(&detect, &docs, "Bash", bash("git push"), None).0,
        "deny",
        "always_allow cannot undo a built-in deny"
    );
    assert_eq!(
        guard(&detect, &docs, "Read", file(Path::new("/etc/hosts")), None).0,
        "deny",
        "reads = deny-outside"
    );
    assert_eq!(guard(&detect, &docs, "Read", file(&docs.join("README.md")), None).0, "none");
    assert_eq!(
        guard(&detect, &docs.join("src"), "Write", file(&repo.root.join("x")), None).0,
        "deny",
        "longest match"
    );
    assert_eq!(
        guard(&detect, &repo.root, "Write", file(Path::new("/tmp/x")), None).0,
        "none",
        "the main checkout is not guarded"
    );
    assert_eq!(
        guard(&["--detect", "--include-main"], &repo.root, "Write", file(Path::new("/tmp/x")), None).0,
        "deny"
    );
}

#[test]
fn a_broken_guard_toml_blocks_rather_than_lets_calls_through() {
    let repo = TestRepo::new();
    repo.write(".spectacular/guard.toml", "[[always_deny]]\nrule = \"Bash(npm\"\n");
    let (d, stderr, code) = guard(&["--detect", "--include-main"], &repo.root, "Bash", bash("ls"), None);
    assert_eq!((d.as_str(), code), ("none", 2), "{stderr}");
    assert!(
        stderr.contains("guard.toml:2:8: rule `Bash(npm` has no closing `)`"),
        "the rule's place: {stderr}"
    );
}

#[test]
fn a_worker_is_routed_by_its_slot_with_the_plans_guard_rules() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        "[run]\nid = \"90a7d1\"\n[guard]\nalways_deny = [{ rule = \"Bash(cargo publish:*)\", reason = \"not from a task\" }]\n\
         [[phase]]\n[[phase.task]]\nname = \"t\"\nprompt = \"x\"\n",
    );
    let step: Value =
        serde_json::from_str(&repo.wt(&["step", plan.to_str().unwrap(), "--json"]).ok()).unwrap();
    let worker = step["dispatch"][0]["subagent_type"].as_str().unwrap().to_owned();
    assert_eq!(worker, "spectacular:wt-worker-1");
    let main = repo.root.join(".worktrees/90a7d1-main");
    let agent = Some(worker.as_str());
    // A subagent's cwd is the session's folder: the user's checkout.
    assert_eq!(guard(&[], &repo.root, "Write", file(&repo.root.join("README.md")), agent).0, "deny");
    assert_eq!(guard(&[], &repo.root, "Write", file(&main.join("new.rs")), agent).0, "allow");
    let (d, reason, _) =
        guard(&[], &repo.root, "Bash", bash(&format!("cd {} && cargo publish", main.display())), agent);
    assert_eq!(d, "deny");
    assert!(reason.contains("not from a task"), "{reason}");
    assert_eq!(guard(&[], &repo.root, "Write", file(Path::new("/tmp/x")), Some("general-purpose")).0, "none");
    assert_eq!(guard(&[], &repo.root, "Write", file(Path::new("/tmp/x")), None).0, "none");
    let (d, stderr, code) =
        guard(&[], &repo.root, "Write", file(Path::new("/tmp/x")), Some("spectacular:wt-worker-2"));
    assert_eq!((d.as_str(), code), ("none", 2), "a worker slot with no task blocks: {stderr}");
    assert!(stderr.contains("holds no task"), "{stderr}");
}

#[test]
fn the_plugin_approves_only_the_orchestrators_own_plain_wt_step() {
    let repo = TestRepo::new();
    let approve = ["--approve-orchestrator"];
    assert_eq!(guard(&approve, &repo.root, "Bash", bash("wt step c0e0e0 --json"), None).0, "allow");
    assert_eq!(guard(&approve, &repo.root, "Bash", bash("wt step x && git push"), None).0, "none");
    assert_eq!(
        guard(&[], &repo.root, "Bash", bash("wt step c0e0e0 --json"), None).0,
        "none",
        "only when asked"
    );
    let (d, _, code) =
        guard(&approve, &repo.root, "Bash", bash("wt step c0e0e0 --json"), Some("spectacular:wt-worker-1"));
    assert_eq!((d.as_str(), code), ("none", 2), "a worker is judged as a worker, and this one holds no task");
}

#[test]
fn a_bad_guard_rule_in_a_plan_is_located() {
    let repo = TestRepo::new();
    let plan = repo.plan(
        "plan.toml",
        "[guard]\nalways_deny = [{ rule = \"Edit(src\" }]\n[[phase]]\n[[phase.task]]\nname = \"t\"\n",
    );
    let out = repo.wt(&["plan", plan.to_str().unwrap()]);
    assert_eq!(out.code(), 2);
    assert!(
        out.stderr().contains("plan.toml:2:25:") && out.stderr().contains("closing `)`"),
        "{}",
        out.stderr()
    );
}

#[test]
fn sandbox_wrapping_keeps_the_rules_and_a_rule_still_denies_or_asks() {
    let repo = repo_with_rules();
    let docs = repo.scratch.join("docs-wt");
    let feat = repo.scratch.join("feat-wt");
    let wrap = ["--detect", "--sandbox-wrap"];
    let call = json!({ "command": "ls -la 'it''s'", "description": "list", "run_in_background": false });
    let (decision, updated) = guard_updated(&wrap, &docs, call);
    assert_eq!(decision, "allow");
    let command = updated["command"].as_str().unwrap();
    let rules = repo.root.join(".spectacular/guard.toml");
    let expected = format!(
        r#"' sandbox --root '{}' --branch 'docs/readme' --rules '{}' --check -- bash -c 'ls -la '\''it'\'''\''s'\'''"#,
        docs.canonicalize().unwrap().display(),
        rules.display()
    );
    assert!(command.starts_with('\'') && command.ends_with(&expected), "{command}\n{expected}");
    assert_eq!(updated["description"], "list");
    assert_eq!(updated["run_in_background"], false);
    let (d, reason, _) = guard(&wrap, &docs, "Bash", bash("npm publish"), None);
    assert_eq!(d, "deny", "a rule's deny wins over the rewrite: {reason}");
    let (decision, updated) = guard_updated(&wrap, &feat, bash("make deploy ENV=prod"));
    assert_eq!(decision, "ask", "a rule's ask keeps the rewrite, so the person approves the wrapped call");
    assert!(updated["command"].as_str().unwrap().contains(" sandbox --root "), "{updated}");
    assert_eq!(guard(&wrap, &docs, "Bash", bash("git push"), None).0, "deny");
    let (d, _, _) = guard(&wrap, &docs, "Edit", file(&docs.join("src/lib.rs")), None);
    assert_eq!(d, "deny", "file tools are still decided by path and rules (the docs profile)");
}

#[test]
fn contained_agents_get_what_wt_cannot_follow_allowed_and_denials_kept() {
    let repo = repo_with_rules();
    let feat = repo.scratch.join("feat-wt");
    for (flags, unclear) in [(&["--detect", "--contained"][..], "allow"), (&["--detect"][..], "none")] {
        assert_eq!(guard(flags, &feat, "Bash", bash("eval \"$CMD\""), None).0, unclear, "{flags:?}");
        assert_eq!(guard(flags, &feat, "Bash", bash("git push"), None).0, "deny", "{flags:?}");
        assert_eq!(guard(flags, &feat, "Bash", bash("cargo test"), None).0, "allow", "{flags:?}");
    }
}

/// Runs the guard on a Bash call; returns its decision and `updatedInput`.
fn guard_updated(args: &[&str], cwd: &Path, input: Value) -> (String, Value) {
    let hook = json!({"cwd": cwd, "hook_event_name": "PreToolUse", "tool_name": "Bash", "tool_input": input});
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wt"));
    cmd.arg("guard").args(args);
    let out = common::with_stdin(cmd, &hook.to_string());
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let value: Value = serde_json::from_slice(&out.stdout).unwrap();
    let specific = &value["hookSpecificOutput"];
    (specific["permissionDecision"].as_str().unwrap().to_owned(), specific["updatedInput"].clone())
}

#[test]
fn a_guard_toml_that_is_not_toml_names_its_line() {
    let repo = TestRepo::new();
    repo.write(".spectacular/guard.toml", "[[always_deny]]\nrule = \"Bash(rm:*)\"\nreson = \"typo\"\n");
    let (d, stderr, code) = guard(&["--detect", "--include-main"], &repo.root, "Bash", bash("ls"), None);
    assert_eq!((d.as_str(), code), ("none", 2), "{stderr}");
    assert!(stderr.contains("guard.toml:3:1: unknown field `reson`"), "{stderr}");
}
