//! Runs one command with a time limit in its own process group, and waits for what it leaves
//! running in the background (`nohup git push &`): a change made after the comparison would be
//! missed. At the limit the whole group is killed.

use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How a command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ending {
    /// Its exit code (128 + the signal when a signal ended it), and nothing of it left running.
    Exited(i32),
    /// Still running at the limit: killed.
    Hung,
    /// It exited, but a process it started in the background was still running at the limit:
    /// killed.
    Lingered(i32),
}

#[derive(Debug, Clone)]
pub struct Ran {
    pub ending: Ending,
    pub stdout: String,
    pub stderr: String,
}

/// Makes this process the parent of its descendants' orphans (a case's background jobs once the
/// shell that started them exits), so `run_limited` can wait for them.
pub fn become_subreaper() {
    // SAFETY: prctl with an integer argument; no memory is shared with the kernel.
    let done = unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1) };
    assert_eq!(done, 0, "prctl(PR_SET_CHILD_SUBREAPER): {}", std::io::Error::last_os_error());
}

/// Runs `cmd` with stdin from /dev/null and its output in files under `out` named after `name`
/// (a pipe left full would look like a hang).
pub fn run_limited(mut cmd: Command, out: &Path, name: &str, limit: Duration) -> Ran {
    let (stdout, stderr) = (out.join(format!("{name}.out")), out.join(format!("{name}.err")));
    cmd.stdin(Stdio::null())
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .process_group(0);
    let child = cmd.spawn().unwrap();
    let group = child.id() as libc::pid_t;
    let started = Instant::now();
    let (mut code, mut killed) = (None, None);
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only `status`, a local.
        let pid = unsafe { libc::waitpid(-group, &mut status, libc::WNOHANG) };
        if pid == group {
            code = Some(exit_code(status));
        } else if pid < 0 {
            // ECHILD: nothing of the group is left (the subreaper gets every orphan of it).
            break;
        } else if pid == 0 {
            if killed.is_none() && started.elapsed() >= limit {
                // SAFETY: a signal to the group this function started.
                unsafe { libc::kill(-group, libc::SIGKILL) };
                killed = Some(code);
            }
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    drop(child);
    let ending = match (killed, code) {
        (None, Some(code)) => Ending::Exited(code),
        (Some(Some(code)), _) => Ending::Lingered(code),
        _ => Ending::Hung,
    };
    let read = |path: &Path| String::from_utf8_lossy(&std::fs::read(path).unwrap()).into_owned();
    Ran { ending, stdout: read(&stdout), stderr: read(&stderr) }
}

fn exit_code(status: libc::c_int) -> i32 {
    if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 + libc::WTERMSIG(status) }
}
