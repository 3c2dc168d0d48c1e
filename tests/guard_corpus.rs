//! The guard corpus: escape attempts that must be denied and ordinary work that must not be,
//! each through the real `wt guard` binary with the hook JSON Claude Code sends.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};

/// A worktree at `<tmp>/repo/.worktrees/abc123-task-1-1` with a sibling whose name extends it,
/// a symlink that leads out, and a file to restore.
struct Layout {
    _temp: tempfile::TempDir,
    repo: PathBuf,
    root: PathBuf,
}

fn layout() -> Layout {
    let temp = tempfile::tempdir().unwrap();
    let repo = temp.path().canonicalize().unwrap().join("repo");
    let root = repo.join(".worktrees/abc123-task-1-1");
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::create_dir_all(repo.join(".worktrees/abc123-task-1-10")).unwrap();
    std::fs::write(root.join("src/lib.rs"), "").unwrap();
    std::fs::write(root.join(".git"), "gitdir: ../../.git/worktrees/abc123-task-1-1\n").unwrap();
    std::os::unix::fs::symlink("/etc", root.join("etc-link")).unwrap();
    Layout { _temp: temp, repo, root }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Expect {
    Deny,
    Allow,
    NoDecision,
}
use Expect::*;

fn run_guard(layout: &Layout, tool: &str, input: Value, cwd: &Path) -> (Option<String>, String) {
    let hook = json!({
        "session_id": "s", "transcript_path": "/tmp/t", "cwd": cwd, "hook_event_name": "PreToolUse",
        "permission_mode": "default", "tool_name": tool, "tool_input": input, "tool_use_id": "t1",
        "agent_id": "a", "agent_type": "wt-abc123-task-1-1", "future_field": {"ignored": true}
    });
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_wt"));
    cmd.args(["guard", "--root", layout.root.to_str().unwrap(), "--branch", "abc123-task-1-1-feature"]);
    let out = common::with_stdin(cmd, &hook.to_string());
    assert_eq!(out.status.code(), Some(0), "guard failed: {}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    if stdout.trim().is_empty() {
        return (None, String::new());
    }
    let value: Value = serde_json::from_str(&stdout).unwrap();
    let specific = &value["hookSpecificOutput"];
    assert_eq!(specific["hookEventName"], "PreToolUse");
    (
        specific["permissionDecision"].as_str().map(str::to_owned),
        specific["permissionDecisionReason"].as_str().unwrap_or_default().to_owned(),
    )
}

fn check(layout: &Layout, cases: &[(Expect, &str, &str)], cwd: &Path) -> Vec<String> {
    let root = layout.root.to_str().unwrap();
    let repo = layout.repo.to_str().unwrap();
    let mut failures = Vec::new();
    for (expect, tool, text) in cases {
        let text = text.replace("$ROOT", root).replace("$REPO", repo);
        let input = match *tool {
            "Bash" => json!({ "command": text, "description": "d" }),
            "NotebookEdit" => json!({ "notebook_path": text, "new_source": "x" }),
            "Read" | "Write" | "Edit" | "MultiEdit" => {
                json!({ "file_path": text, "content": "x", "old_string": "a", "new_string": "b" })
            }
            _ => json!({ "pattern": text }),
        };
        let (decision, reason) = run_guard(layout, tool, input, cwd);
        let got = match decision.as_deref() {
            Some("deny") => Deny,
            Some("allow") => Allow,
            None => NoDecision,
            Some(other) => panic!("unexpected decision {other}"),
        };
        if got != *expect {
            failures.push(format!("{tool} {text:?}: expected {expect:?}, got {got:?} ({reason})"));
        } else if got == Deny && !reason.contains(root) {
            failures.push(format!("{tool} {text:?}: the reason does not name the worktree: {reason}"));
        }
    }
    failures
}

/// Escape attempts: each must be denied.
const ESCAPES: &[(Expect, &str, &str)] = &[
    // git remote operations and force
    (Deny, "Bash", "git push"),
    (Deny, "Bash", "git push origin HEAD --force"),
    (Deny, "Bash", "git push -f"),
    (Deny, "Bash", "git fetch origin"),
    (Deny, "Bash", "git pull --rebase"),
    (Deny, "Bash", "cd $ROOT && git push"),
    (Deny, "Bash", "ls && git push"),
    (Deny, "Bash", "true || git push"),
    (Deny, "Bash", "echo ok; git push"),
    (Deny, "Bash", "echo ok\ngit push"),
    (Deny, "Bash", "git status | git push"),
    (Deny, "Bash", "(git push)"),
    (Deny, "Bash", "{ git push; }"),
    (Deny, "Bash", "echo $(git push)"),
    (Deny, "Bash", "echo `git push`"),
    (Deny, "Bash", "bash -c 'git push'"),
    (Deny, "Bash", "sh -c \"cd / && rm -rf tmp\""),
    (Deny, "Bash", "bash -lc 'git push origin main'"),
    (Deny, "Bash", "eval git push"),
    (Deny, "Bash", "eval 'git fetch'"),
    (Deny, "Bash", "env git push"),
    (Deny, "Bash", "env FOO=1 git push"),
    (Deny, "Bash", "command git push"),
    (Deny, "Bash", "sudo git push"),
    (Deny, "Bash", "nohup git push &"),
    (Deny, "Bash", "timeout 10 git push"),
    (Deny, "Bash", "nice -n 5 git push"),
    (Deny, "Bash", "echo main | xargs git push origin"),
    (Deny, "Bash", "/usr/bin/git push"),
    (Deny, "Bash", "if git push; then echo ok; fi"),
    (Deny, "Bash", "bash <<EOF\ngit push\nEOF"),
    (Deny, "Bash", "sh <<< 'git push'"),
    (Deny, "Bash", "find . -name x -exec git push \\;"),
    // git pointed elsewhere
    (Deny, "Bash", "git -C .. push"),
    (Deny, "Bash", "git -C $REPO status"),
    (Deny, "Bash", "git -C /tmp commit -m x"),
    (Deny, "Bash", "git --git-dir=$REPO/.git log"),
    (Deny, "Bash", "git --work-tree=/tmp add ."),
    (Deny, "Bash", "GIT_DIR=$REPO/.git git commit -m x"),
    (Deny, "Bash", "env GIT_WORK_TREE=/ git add ."),
    // branch and stack surgery
    (Deny, "Bash", "git checkout main"),
    (Deny, "Bash", "git checkout -b other"),
    (Deny, "Bash", "git checkout --detach"),
    (Deny, "Bash", "git switch main"),
    (Deny, "Bash", "git switch -c feature"),
    (Deny, "Bash", "git rebase main"),
    (Deny, "Bash", "git rebase -i HEAD~3"),
    (Deny, "Bash", "git reset --hard origin/main"),
    (Deny, "Bash", "git reset --hard main"),
    (Deny, "Bash", "git branch -D abc123-task-1-2-other"),
    (Deny, "Bash", "git branch -f main HEAD"),
    (Deny, "Bash", "git branch new-branch"),
    (Deny, "Bash", "git branch -m renamed"),
    (Deny, "Bash", "git update-ref refs/heads/main HEAD"),
    (Deny, "Bash", "git worktree add ../x"),
    (Deny, "Bash", "git worktree remove $REPO/.worktrees/abc123-task-1-10"),
    (Deny, "Bash", "git stash pop"),
    (Deny, "Bash", "git stash"),
    (Deny, "Bash", "git config user.email someone@else"),
    (Deny, "Bash", "git config --global core.editor vim"),
    (Deny, "Bash", "git tag v1.0"),
    (Deny, "Bash", "git remote add evil https://example.com/x.git"),
    (Deny, "Bash", "gs branch create x"),
    (Deny, "Bash", "gs upstack onto main"),
    (Deny, "Bash", "git-spice stack submit"),
    (Deny, "Bash", "gs repo sync"),
    (Deny, "Bash", "gs rs"),
    // gh writes
    (Deny, "Bash", "gh pr create --fill"),
    (Deny, "Bash", "gh pr merge 12"),
    (Deny, "Bash", "gh pr checkout 12"),
    (Deny, "Bash", "gh issue comment 3 -b hi"),
    (Deny, "Bash", "gh api -X POST repos/o/r/issues"),
    (Deny, "Bash", "gh api repos/o/r/issues -f title=x"),
    (Deny, "Bash", "gh release create v1"),
    // cd and writes outside
    (Deny, "Bash", "cd / && touch x"),
    (Deny, "Bash", "cd .."),
    (Deny, "Bash", "cd ../abc123-task-1-10"),
    (Deny, "Bash", "cd $REPO && echo x > file"),
    (Deny, "Bash", "cd"),
    (Deny, "Bash", "cd ~"),
    (Deny, "Bash", "cd $HOME/project"),
    (Deny, "Bash", "cd -"),
    (Deny, "Bash", "pushd /tmp"),
    (Deny, "Bash", "echo x > /tmp/out"),
    (Deny, "Bash", "echo x >> ../../README.md"),
    (Deny, "Bash", "echo x > $REPO/README.md"),
    (Deny, "Bash", "cat file &> /tmp/log"),
    (Deny, "Bash", "ls 2> /var/tmp/err"),
    (Deny, "Bash", "echo x | tee /tmp/t"),
    (Deny, "Bash", "echo x | tee -a ok.txt ../escape.txt"),
    (Deny, "Bash", "cp src/lib.rs /tmp/"),
    (Deny, "Bash", "cp -r src ../abc123-task-1-10/"),
    (Deny, "Bash", "cp -t /tmp src/lib.rs"),
    (Deny, "Bash", "mv src/lib.rs ../../lib.rs"),
    (Deny, "Bash", "mv /tmp/file ./file"),
    (Deny, "Bash", "rm -rf ../abc123-task-1-10"),
    (Deny, "Bash", "rm -rf /"),
    (Deny, "Bash", "rm $REPO/README.md"),
    (Deny, "Bash", "mkdir /tmp/newdir"),
    (Deny, "Bash", "touch ../../x"),
    (Deny, "Bash", "ln -s src/lib.rs /tmp/link"),
    (Deny, "Bash", "sed -i 's/a/b/' ../../README.md"),
    (Deny, "Bash", "sed -i.bak -e 's/a/b/' /etc/hosts"),
    (Deny, "Bash", "chmod 777 /tmp/x"),
    (Deny, "Bash", "truncate -s 0 /tmp/x"),
    (Deny, "Bash", "dd if=/dev/zero of=/tmp/disk bs=1 count=1"),
    (Deny, "Bash", "curl -o /tmp/payload https://example.com"),
    (Deny, "Bash", "tar czf /tmp/backup.tgz ."),
    (Deny, "Bash", "find .. -name '*.rs' -delete"),
    (Deny, "Bash", "cat > /tmp/x <<EOF\nhello\nEOF"),
    (Deny, "Bash", "(cd /tmp && rm -rf x)"),
    (Deny, "Bash", "cd src && rm ../../../x"),
    (Deny, "Bash", "echo x > etc-link/passwd"),
    (Deny, "Bash", "echo x > .git"),
    (Deny, "Bash", "echo x > ~/.bashrc"),
    (Deny, "Bash", "rm -rf $TARGET"),
    (Deny, "Bash", "D=/tmp; rm -rf $D/x"),
    (Deny, "Bash", "echo x > $(mktemp)"),
    (Deny, "Bash", "find . -name '*.o' | xargs rm"),
    (Deny, "Bash", "env -C /tmp touch x"),
    (Deny, "Bash", "$CMD push"),
    // unparseable
    (Deny, "Bash", "echo 'unbalanced"),
    (Deny, "Bash", "echo \"unbalanced"),
    (Deny, "Bash", "f() { git push; }; f"),
    // file tools
    (Deny, "Write", "/tmp/evil.txt"),
    (Deny, "Write", "$REPO/README.md"),
    (Deny, "Write", "$ROOT/../abc123-task-1-10/x.rs"),
    (Deny, "Write", "$REPO/.worktrees/abc123-task-1-10/x.rs"),
    (Deny, "Edit", "$ROOT/../../src/main.rs"),
    (Deny, "Edit", "$ROOT/etc-link/hosts"),
    (Deny, "Edit", "$ROOT/.git"),
    (Deny, "MultiEdit", "/etc/hosts"),
    (Deny, "Write", "../outside.txt"),
    (Deny, "NotebookEdit", "/tmp/n.ipynb"),
];

/// Ordinary work inside the worktree: none of it may be denied.
const ORDINARY: &[(Expect, &str, &str)] = &[
    (Allow, "Bash", "ls -la"),
    (Allow, "Bash", "cargo test"),
    (Allow, "Bash", "cd $ROOT && cargo build --release"),
    (Allow, "Bash", "cd $ROOT/src && ls && cd .."),
    (Allow, "Bash", "cd src; cd ..; ls"),
    (Allow, "Bash", "npm install && npm test"),
    (Allow, "Bash", "python3 -m pytest -q"),
    (Allow, "Bash", "git status"),
    (Allow, "Bash", "git diff HEAD~1 --stat"),
    (Allow, "Bash", "git log --oneline -5"),
    (Allow, "Bash", "git add -A && git commit -m 'feat: add x'"),
    (Allow, "Bash", "git commit --amend --no-edit"),
    (Allow, "Bash", "git checkout -- src/lib.rs"),
    (Allow, "Bash", "git checkout src/lib.rs"),
    (Allow, "Bash", "git checkout abc123-task-1-1-feature"),
    (Allow, "Bash", "git restore src/lib.rs"),
    (Allow, "Bash", "git restore --staged ."),
    (Allow, "Bash", "git reset"),
    (Allow, "Bash", "git reset HEAD~1"),
    (Allow, "Bash", "git reset --soft HEAD^"),
    (Allow, "Bash", "git reset src/lib.rs"),
    (Allow, "Bash", "git branch"),
    (Allow, "Bash", "git branch --show-current"),
    (Allow, "Bash", "git branch -a --contains HEAD"),
    (Allow, "Bash", "git stash list"),
    (Allow, "Bash", "git config --get user.name"),
    (Allow, "Bash", "git -C src status"),
    (Allow, "Bash", "git -c core.pager=cat log"),
    (Allow, "Bash", "git worktree list"),
    (Allow, "Bash", "git clean -fd"),
    (Allow, "Bash", "git rm -r --cached target"),
    (Allow, "Bash", "git grep -n TODO"),
    (Allow, "Bash", "git show HEAD:src/lib.rs"),
    (Allow, "Bash", "gs log short"),
    (Allow, "Bash", "gs ls"),
    (Allow, "Bash", "gh pr view 12"),
    (Allow, "Bash", "gh pr list --state open"),
    (Allow, "Bash", "gh api repos/o/r/pulls"),
    (Allow, "Bash", "cat /etc/hosts"),
    (Allow, "Bash", "ls ../"),
    (Allow, "Bash", "grep -rn foo $REPO/src"),
    (Allow, "Bash", "diff ../abc123-task-1-10/a src/lib.rs"),
    (Allow, "Bash", "cp /etc/hosts ./hosts-copy"),
    (Allow, "Bash", "cp ../abc123-task-1-10/file.txt src/"),
    (Allow, "Bash", "echo hi > /dev/null"),
    (Allow, "Bash", "cargo build 2>&1 | tail -20"),
    (Allow, "Bash", "make 2>/dev/null || true"),
    (Allow, "Bash", "echo ok > out.txt && cat out.txt"),
    (Allow, "Bash", "echo x >> src/notes.md"),
    (Allow, "Bash", "mkdir -p src/new/dir && touch src/new/dir/mod.rs"),
    (Allow, "Bash", "rm -rf target build"),
    (Allow, "Bash", "rm -f src/lib.rs.orig"),
    (Allow, "Bash", "mv src/a.rs src/b.rs"),
    (Allow, "Bash", "sed -i 's/foo/bar/g' src/lib.rs"),
    (Allow, "Bash", "sed -n '1,10p' /etc/hosts"),
    (Allow, "Bash", "tee out.log < input.txt"),
    (Allow, "Bash", "find . -name '*.tmp' -delete"),
    (Allow, "Bash", "find src -type f | wc -l"),
    (Allow, "Bash", "export RUST_LOG=debug && cargo run"),
    (Allow, "Bash", "X=src; ls $X && touch $X/new.rs"),
    (Allow, "Bash", "for f in src/*.rs; do wc -l \"$f\"; done"),
    (Allow, "Bash", "cat > src/gen.rs <<'EOF'\npub fn x() {}\nEOF"),
    (Allow, "Bash", "python3 - <<'EOF'\nprint('hi')\nEOF"),
    (Allow, "Bash", "bash -c 'cargo fmt && cargo clippy'"),
    (Allow, "Bash", "sh scripts/check.sh"),
    (Allow, "Bash", "timeout 60 cargo test -- --nocapture"),
    (Allow, "Bash", "env RUST_BACKTRACE=1 cargo test"),
    (Allow, "Bash", "cd $PWD/src && ls"),
    (Allow, "Bash", "cd $WT_WORKTREE && git status"),
    (Allow, "Bash", "echo \"$(date) done\" >> build.log"),
    (Allow, "Bash", "test -f Cargo.toml && echo yes"),
    (Allow, "Bash", "curl -s https://example.com | head"),
    (Allow, "Bash", "curl -o vendor.tgz https://example.com/v.tgz"),
    (Allow, "Bash", "tar xzf vendor.tgz -C vendor"),
    (Allow, "Bash", "ln -s ../README.md docs-readme"),
    (Allow, "Bash", "chmod +x scripts/run.sh"),
    (Allow, "Bash", "# just a comment"),
    (Allow, "Write", "$ROOT/src/new.rs"),
    (Allow, "Write", "$ROOT/docs/guide.md"),
    (Allow, "Edit", "$ROOT/src/lib.rs"),
    (Allow, "Edit", "src/lib.rs"),
    (Allow, "MultiEdit", "$ROOT/src/../src/lib.rs"),
    (Allow, "NotebookEdit", "$ROOT/notebooks/a.ipynb"),
    (NoDecision, "Read", "/etc/hosts"),
    (NoDecision, "Read", "$REPO/README.md"),
    (NoDecision, "Glob", "**/*.rs"),
    (NoDecision, "Grep", "TODO"),
    (NoDecision, "WebFetch", "https://example.com"),
];

#[test]
fn every_escape_attempt_is_denied_with_the_worktree_named() {
    let layout = layout();
    let failures = check(&layout, ESCAPES, &layout.root);
    assert!(failures.is_empty(), "{} escapes:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn ordinary_work_inside_the_worktree_is_never_denied() {
    let layout = layout();
    let failures = check(&layout, ORDINARY, &layout.root);
    assert!(failures.is_empty(), "{} false denials:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn the_corpus_is_large_enough_to_mean_something() {
    assert!(ESCAPES.len() + ORDINARY.len() >= 120, "{}", ESCAPES.len() + ORDINARY.len());
}

#[test]
fn a_relative_path_is_judged_from_the_hooks_cwd() {
    // A subagent starts in the session's folder (the main checkout), not in its worktree.
    let layout = layout();
    let cases = [
        (Deny, "Bash", "touch notes.txt"),
        (Deny, "Write", "src/lib.rs"),
        (Allow, "Bash", "cd $ROOT && touch notes.txt"),
        (Allow, "Bash", "touch $ROOT/notes.txt"),
    ];
    let failures = check(&layout, &cases, &layout.repo);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn bad_hook_input_blocks_with_exit_2_never_1() {
    for input in ["", "not json", "[1,2", "{\"tool_name\": 3}"] {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_wt"));
        cmd.args(["guard", "--root", "/tmp"]);
        let out = common::with_stdin(cmd, input);
        assert_eq!(out.status.code(), Some(2), "input {input:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
}
