//! Test harness: temporary repositories with a hermetic git environment, and the built `wt`
//! binary run against real git and real git-spice (scripts/test puts git-spice on PATH).

#![allow(dead_code)]

pub mod shamhub;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use serde_json::Value;

pub struct TestRepo {
    _temp: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub scratch: PathBuf,
}

/// The variables every git, git-spice and wt process gets in tests.
fn hermetic(cmd: &mut Command, home: &Path) {
    cmd.env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", home)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_AUTHOR_NAME", "Test Author")
        .env("GIT_AUTHOR_EMAIL", "author@example.com")
        .env("GIT_COMMITTER_NAME", "Test Committer")
        .env("GIT_COMMITTER_EMAIL", "committer@example.com")
        .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
        .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
        .env("TZ", "UTC")
        .env("LC_ALL", "C")
        .stdin(Stdio::null());
}

impl TestRepo {
    /// A repository on `main` with one commit.
    pub fn new() -> TestRepo {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let (root, home, scratch) = (base.join("repo"), base.join("home"), base.join("scratch"));
        for dir in [&root, &home, &scratch] {
            std::fs::create_dir_all(dir).unwrap();
        }
        let repo = TestRepo { _temp: temp, root, home, scratch };
        repo.git(&["init", "--quiet", "--initial-branch=main"]);
        repo.write("README.md", "# project\n");
        repo.git(&["add", "README.md"]);
        repo.git(&["commit", "--quiet", "-m", "initial commit"]);
        repo
    }

    /// The plan table that lets task commands write the test's scratch folder, where tests keep
    /// the marks and logs they read (under `wt sandbox` nothing else outside the worktree is
    /// writable).
    pub fn scratch_writable(&self) -> String {
        format!("[sandbox]\nallow_write = [\"{}\"]\n", self.scratch.display())
    }

    pub fn write(&self, relative: &str, content: &str) {
        let path = self.root.join(relative);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, content).unwrap();
    }

    /// Writes a plan outside the repository (so it is not part of the checkout) and returns its path.
    pub fn plan(&self, name: &str, content: &str) -> PathBuf {
        let path = self.scratch.join(name);
        std::fs::write(&path, content).unwrap();
        path
    }

    pub fn command(&self, program: &str, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        hermetic(&mut cmd, &self.home);
        cmd.current_dir(dir);
        cmd
    }

    /// Runs git in `dir` and returns stdout; panics with stderr on failure.
    pub fn git_in(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.command("git", dir).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }

    pub fn git(&self, args: &[&str]) -> String {
        self.git_in(&self.root, args)
    }

    pub fn wt(&self, args: &[&str]) -> WtOutput {
        self.wt_with_env(args, &[])
    }

    pub fn wt_with_env(&self, args: &[&str], env: &[(&str, &str)]) -> WtOutput {
        let mut cmd = self.command(env!("CARGO_BIN_EXE_wt"), &self.root);
        cmd.args(args);
        for (key, value) in env {
            cmd.env(key, value);
        }
        WtOutput(cmd.output().unwrap())
    }

    /// The worktree of the team worktree `name` (`wt create <name>`).
    pub fn team_worktree(&self, name: &str) -> PathBuf {
        self.root.join(".worktrees").join(name)
    }

    /// Commits `file` (holding its own name) in the team worktree `name`, as its agent would.
    pub fn team_commit(&self, name: &str, file: &str) {
        self.team_commit_with(name, file, &format!("{file}\n"));
    }

    /// Commits `file` with `content` in the team worktree `name`, as its agent would.
    pub fn team_commit_with(&self, name: &str, file: &str, content: &str) {
        let dir = self.team_worktree(name);
        std::fs::write(dir.join(file), content).unwrap();
        self.git_in(&dir, &["add", file]);
        self.git_in(&dir, &["commit", "--quiet", "-m", &format!("{name}: {file}")]);
    }

    pub fn branch_exists(&self, branch: &str) -> bool {
        self.command("git", &self.root)
            .args(["rev-parse", "--verify", "--quiet", &format!("refs/heads/{branch}")])
            .output()
            .unwrap()
            .status
            .success()
    }

    /// Subjects of the commits in `from..to`, oldest first.
    pub fn subjects(&self, from: &str, to: &str) -> Vec<String> {
        self.git(&["log", "--reverse", "--format=%s", &format!("{from}..{to}")])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// `git-spice log short --all --json`, by branch name.
    pub fn spice_log(&self) -> BTreeMap<String, Value> {
        let out = self
            .command("gs", &self.root)
            .args(["--no-prompt", "log", "short", "--all", "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "gs log failed: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout)
            .unwrap()
            .lines()
            .map(|line| serde_json::from_str::<Value>(line).unwrap())
            .map(|value| (value["name"].as_str().unwrap().to_owned(), value))
            .collect()
    }

    /// Asserts that `branches` form one linear stack on `base` in this order: each branch's
    /// parent in git is the previous branch's tip, git-spice tracks it on the previous branch,
    /// and nothing needs a restack.
    pub fn assert_linear_stack(&self, base: &str, branches: &[&str]) {
        let log = self.spice_log();
        let mut below = base.to_owned();
        for branch in branches {
            let entry = log.get(*branch).unwrap_or_else(|| panic!("git-spice does not track {branch}"));
            assert_eq!(entry["down"]["name"], below.as_str(), "{branch} should sit on {below}");
            assert!(entry["down"].get("needsRestack").is_none(), "{branch} needs a restack: {entry}");
            let merge_base = self.git(&["merge-base", &below, branch]);
            assert_eq!(
                merge_base.trim(),
                self.git(&["rev-parse", &below]).trim(),
                "{branch} is not on {below}"
            );
            below = branch.to_string();
        }
    }

    /// Everything a user could see of the main checkout: HEAD, the index file, status, and every
    /// file's content (run artifacts under .worktrees/ aside).
    pub fn checkout_snapshot(&self) -> CheckoutSnapshot {
        let status = self.git(&["status", "--porcelain=v1", "--untracked-files=all", "--ignored"]);
        let head = self.git(&["rev-parse", "HEAD"]);
        let symbolic = self.command("git", &self.root).args(["symbolic-ref", "-q", "HEAD"]).output().unwrap();
        let index = std::fs::read(self.root.join(".git/index")).unwrap_or_default();
        let mut files = BTreeMap::new();
        collect_files(&self.root, &self.root, &mut files);
        CheckoutSnapshot {
            head,
            symbolic: String::from_utf8_lossy(&symbolic.stdout).into_owned(),
            index,
            status: status.lines().filter(|l| !is_run_artifact(l)).map(str::to_owned).collect(),
            files,
        }
    }
}

impl TestRepo {
    /// The folders under `.worktrees/` but the pool of recycled worktrees, sorted.
    pub fn worktree_folders(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(self.root.join(".worktrees"))
            .map(|entries| entries.map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.retain(|name| name != ".pool");
        names.sort();
        names
    }

    /// `wt status --pool --json`: the pool of recycled worktrees.
    pub fn pool(&self) -> Value {
        serde_json::from_str(&self.wt(&["status", "--pool", "--json"]).ok()).unwrap()
    }

    /// The worktrees parked in the pool, after checking that each is one git records, detached,
    /// with nothing uncommitted (ignored build output aside).
    pub fn parked(&self) -> Vec<PathBuf> {
        let pool = self.pool();
        assert_eq!(pool["problems"], serde_json::json!([]), "the pool has something to finish: {pool}");
        let registered = self.git(&["worktree", "list", "--porcelain"]);
        let parked: Vec<PathBuf> = pool["worktrees"]
            .as_array()
            .unwrap()
            .iter()
            .map(|w| PathBuf::from(w["path"].as_str().unwrap()))
            .collect();
        for path in &parked {
            assert!(
                registered.contains(&format!("worktree {}\n", path.display())),
                "{} unregistered",
                path.display()
            );
            assert_eq!(self.git_in(path, &["status", "--porcelain"]), "", "{} is not clean", path.display());
            assert_eq!(
                self.git_in(path, &["branch", "--show-current"]).trim(),
                "",
                "{} is on a branch",
                path.display()
            );
        }
        parked
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct CheckoutSnapshot {
    head: String,
    symbolic: String,
    index: Vec<u8>,
    status: Vec<String>,
    files: BTreeMap<PathBuf, Vec<u8>>,
}

/// What a run adds to the main checkout by design, ignored through info/exclude: its worktrees.
fn is_run_artifact(path: &str) -> bool {
    path.contains(".worktrees/")
}

fn collect_files(root: &Path, dir: &Path, files: &mut BTreeMap<PathBuf, Vec<u8>>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap();
        if name == ".git" || name == ".worktrees" {
            continue;
        }
        if path.is_dir() {
            collect_files(root, &path, files);
        } else if !is_run_artifact(&path.to_string_lossy()) {
            files.insert(path.strip_prefix(root).unwrap().to_owned(), std::fs::read(&path).unwrap());
        }
    }
}

pub struct WtOutput(pub Output);

impl WtOutput {
    pub fn code(&self) -> i32 {
        self.0.status.code().unwrap_or(-1)
    }

    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.0.stdout).into_owned()
    }

    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.0.stderr).into_owned()
    }

    /// Asserts success and returns stdout.
    pub fn ok(&self) -> String {
        assert_eq!(self.code(), 0, "wt failed\nstdout:\n{}\nstderr:\n{}", self.stdout(), self.stderr());
        self.stdout()
    }

    /// The JSON lines of stdout (`--json`).
    pub fn events(&self) -> Vec<Value> {
        self.stdout().lines().map(|line| serde_json::from_str(line).unwrap()).collect()
    }
}

/// The test's PATH with `dir` first.
pub fn path_with(dir: &Path) -> std::ffi::OsString {
    let rest = std::env::var_os("PATH").unwrap_or_default();
    std::env::join_paths(std::iter::once(dir.to_owned()).chain(std::env::split_paths(&rest))).unwrap()
}

/// The Claude Code client scripts/test installed (`WT_TEST_CLAUDE`).
pub fn claude_client() -> PathBuf {
    let path = std::env::var_os("WT_TEST_CLAUDE")
        .map(PathBuf::from)
        .expect("WT_TEST_CLAUDE is not set: run the tests with scripts/test, which installs Claude Code");
    assert!(path.is_file(), "WT_TEST_CLAUDE={} does not exist; run scripts/test", path.display());
    path
}

/// The headless Chromium scripts/test installed (`WT_TEST_CHROMIUM`).
pub fn chromium() -> PathBuf {
    let path = std::env::var_os("WT_TEST_CHROMIUM")
        .map(PathBuf::from)
        .expect("WT_TEST_CHROMIUM is not set: run the tests with scripts/test, which installs Chromium");
    assert!(path.is_file(), "WT_TEST_CHROMIUM={} does not exist; run scripts/test", path.display());
    path
}

/// Runs `cmd` with `input` on stdin and stdout and stderr captured (how hooks are called). A
/// hook may exit without reading its input, as Claude Code allows.
pub fn with_stdin(mut cmd: Command, input: &str) -> Output {
    use std::io::Write;
    let mut child = cmd.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    match child.stdin.take().unwrap().write_all(input.as_bytes()) {
        Err(err) if err.kind() != std::io::ErrorKind::BrokenPipe => panic!("writing the hook's input: {err}"),
        _ => {}
    }
    child.wait_with_output().unwrap()
}

/// Claude Code's SubagentStart or SubagentStop hook input for the subagent `agent_id` of type
/// `agent_type`, shaped like the ones the real client sends (`-p`, a plain subagent).
pub fn subagent_event(event: &str, agent_type: &str, agent_id: &str, cwd: &Path) -> Value {
    let mut input = serde_json::json!({
        "session_id": "43a5f5be-3b56-4649-b465-686026ae2eee",
        "transcript_path": "/nonexistent/43a5f5be-3b56-4649-b465-686026ae2eee.jsonl",
        "cwd": cwd,
        "prompt_id": "3bfb79c4-678a-489a-afad-c32967461e8a",
        "agent_id": agent_id,
        "agent_type": agent_type,
        "hook_event_name": event,
    });
    if event == "SubagentStop" {
        let stop = serde_json::json!({
            "permission_mode": "default",
            "effort": {"level": "medium"},
            "stop_hook_active": false,
            "agent_transcript_path": format!("/nonexistent/subagents/agent-{agent_id}.jsonl"),
            "last_assistant_message": "agent done",
            "background_tasks": [],
            "session_crons": [],
        });
        input.as_object_mut().unwrap().extend(stop.as_object().unwrap().clone());
    }
    input
}

impl TestRepo {
    /// Runs `wt hook <subagent-start|subagent-stop>` as the plugin's hook does, with `input`;
    /// returns its exit code.
    pub fn subagent_hook(&self, input: &Value) -> i32 {
        let event = match input["hook_event_name"].as_str() {
            Some("SubagentStart") => "subagent-start",
            _ => "subagent-stop",
        };
        let mut cmd = self.command(env!("CARGO_BIN_EXE_wt"), &self.root);
        cmd.args(["hook", event]);
        let out = with_stdin(cmd, &input.to_string());
        assert!(out.stdout.is_empty(), "{}", String::from_utf8_lossy(&out.stdout));
        out.status.code().unwrap_or(-1)
    }

    /// A wt worker's subagent `agent_id` of type `agent_type` starts (SubagentStart).
    pub fn subagent_starts(&self, agent_type: &str, agent_id: &str) {
        let input = subagent_event("SubagentStart", agent_type, agent_id, &self.root);
        assert_eq!(self.subagent_hook(&input), 0);
    }

    /// ... and returns (SubagentStop).
    pub fn subagent_returns(&self, agent_type: &str, agent_id: &str) {
        let input = subagent_event("SubagentStop", agent_type, agent_id, &self.root);
        assert_eq!(self.subagent_hook(&input), 0);
    }
}
