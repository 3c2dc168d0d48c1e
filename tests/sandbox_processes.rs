//! `wt sandbox` around processes: what a command leaves running ends with it, it cannot signal
//! or reach a terminal outside, a background command holds the guard's file writes, daemons
//! outside cannot be reached through Unix sockets (unless allowed), variables that lead to them
//! are not passed on, and package caches can be kept read-only. Each is run for real.

mod common;
#[path = "common/sandbox_task.rs"]
mod sandbox_task;
#[path = "common/tree_snapshot.rs"]
mod tree_snapshot;

use std::path::{Path, PathBuf};

use sandbox_task::{DENIED, Task};

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
fn a_chain_of_processes_deeper_than_the_kill_rounds_ends_with_the_command_too() {
    let task = Task::new();
    // 80 nested subshells, each waiting on the next; the deepest writes after the command ended.
    // Killed one level per round, the deepest outlived the check (found by the pool's red team:
    // it then wrote into the recycled worktree of the next task).
    let script = r#"chain() { if [ "$1" -gt 0 ]; then (chain $(($1 - 1))) & wait; else sleep 1; touch "$WT/late-deep"; fi; }
                    (chain 80) >/dev/null 2>&1 &
                    sleep 0.5; echo started"#;
    let out = task.run(&[], &["bash", "-c", script], &[]);
    assert_eq!(out.code(), 0, "{}", out.stderr());
    std::thread::sleep(std::time::Duration::from_millis(1500));
    assert!(!task.worktree.join("late-deep").exists(), "the deepest process outlived the command");
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
