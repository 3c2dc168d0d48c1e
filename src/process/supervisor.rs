//! A transparent child that takes everything it started with it, for `wt sandbox`.
//!
//! wt becomes the command's parent and the subreaper of everything below it: a background job
//! (`cmd &`), a daemon that double-forks or calls `setsid` — all are reparented to wt when their
//! own parent ends. When the command ends, wt kills whatever it left and exits with the command's
//! status, so nothing a task started can act after the check that follows it. The command sees
//! wt's stdin, stdout, stderr and environment with only this `Cmd`'s folder and variables
//! (set and removed) applied; SIGTERM, SIGINT and SIGHUP sent to wt are passed on to it, and it
//! dies with wt.

use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::sync::atomic::{AtomicI32, Ordering};

use super::{Cmd, ExitDescription, ProcessError};

/// The last signal wt received that the command should get too.
static PASS_ON: AtomicI32 = AtomicI32::new(0);

extern "C" fn remember(signal: libc::c_int) {
    PASS_ON.store(signal, Ordering::SeqCst);
}

/// How many rounds of killing what is left wt does before it gives up and fails the command
/// (each round catches what was forked while the round before was killing).
const KILL_ROUNDS: usize = 50;

impl Cmd {
    /// Runs the command as described above and returns how it ended. `confine` runs in the
    /// command's process between fork and exec (the sandbox's restriction), where it may only make
    /// system calls: wt has no other thread then.
    pub fn run_supervised(
        &self,
        mut confine: impl FnMut() -> std::io::Result<()> + Send + Sync + 'static,
    ) -> Result<ExitDescription, ProcessError> {
        let spawn_error = |source| ProcessError::Spawn { command: self.display(), source };
        // SAFETY: prctl with these arguments only changes this process's own attribute.
        if unsafe { libc::prctl(libc::PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) } != 0 {
            return Err(spawn_error(std::io::Error::last_os_error()));
        }
        pass_on_signals();
        let mut command = std::process::Command::new(&self.program);
        for key in &self.env_removed {
            command.env_remove(key);
        }
        command.args(&self.args).envs(self.env.iter().map(|(key, value)| (key, value)));
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        // SAFETY: between fork and exec the closure only calls prctl and setsid, which are
        // async-signal-safe. A session of its own leaves the command without a controlling
        // terminal: it cannot type into yours.
        unsafe {
            command.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 || libc::setsid() < 0 {
                    return Err(std::io::Error::last_os_error());
                }
                confine()
            });
        }
        let started = std::time::Instant::now();
        let child = command.spawn().map_err(spawn_error)?;
        let status = wait_for(child.id() as libc::pid_t);
        let all_gone = kill_what_is_left();
        let status = ExitDescription::from(std::process::ExitStatus::from_raw(status));
        self.trace(started, status);
        if !all_gone {
            return Err(ProcessError::Failed {
                command: self.display(),
                status,
                stderr: format!("it left processes wt could not end in {KILL_ROUNDS} rounds of killing"),
            });
        }
        Ok(status)
    }
}

/// SIGTERM, SIGINT and SIGHUP are remembered instead of ending wt, so they can be passed on.
fn pass_on_signals() {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        // SAFETY: a zeroed sigaction with a handler that only stores to an atomic, and no
        // SA_RESTART so that waitpid returns EINTR and the signal is passed on at once.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = remember as *const () as libc::sighandler_t;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

/// Waits for the command, reaping orphans that end meanwhile; returns its raw wait status.
fn wait_for(pid: libc::pid_t) -> libc::c_int {
    loop {
        let mut status = 0;
        // SAFETY: waitpid writes only to `status`.
        let reaped = unsafe { libc::waitpid(-1, &mut status, 0) };
        if reaped == pid {
            return status;
        }
        if reaped < 0 {
            let signal = PASS_ON.swap(0, Ordering::SeqCst);
            if signal != 0 {
                // SAFETY: kill only sends a signal.
                unsafe { libc::kill(pid, signal) };
            } else if std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
                // Reaped elsewhere: cannot happen, as nothing else waits; report it as killed.
                return libc::SIGKILL;
            }
        }
    }
}

/// Kills every process still below wt, at any depth, round after round, and reaps them; returns
/// whether none is left. Each round stops them all before killing any (a stopped process cannot
/// fork); one forked between the listing and the stop is reparented to wt when its parent dies
/// and found in the next round. Reaping never blocks, so no process can hold wt up.
fn kill_what_is_left() -> bool {
    // SAFETY: getpid cannot fail.
    let me = unsafe { libc::getpid() };
    for _ in 0..KILL_ROUNDS {
        // SAFETY: waitpid writes only to `status` and does not block with WNOHANG.
        let reaped = loop {
            let reaped = unsafe { libc::waitpid(-1, &mut 0, libc::WNOHANG) };
            if reaped <= 0 {
                break reaped;
            }
        };
        // No child at all (the usual end): as a subreaper wt would have inherited any process
        // left below it, so there is nothing to look for in /proc.
        if reaped < 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ECHILD) {
            return true;
        }
        let left = descendants_of(me);
        if left.is_empty() {
            return true;
        }
        for signal in [libc::SIGSTOP, libc::SIGKILL] {
            for &pid in &left {
                // SAFETY: kill only sends a signal, to a process below wt.
                unsafe { libc::kill(pid, signal) };
            }
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    descendants_of(me).is_empty()
}

/// Every process below `root` (children, their children, …), from `/proc/<pid>/stat`.
fn descendants_of(root: libc::pid_t) -> Vec<libc::pid_t> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    let parents: Vec<(libc::pid_t, libc::pid_t)> = entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<libc::pid_t>().ok())
        .filter_map(|pid| Some((pid, parent_of(pid)?)))
        .collect();
    let mut found = vec![root];
    let mut next = 0;
    while next < found.len() {
        let parent = found[next];
        found.extend(parents.iter().filter(|(_, of)| *of == parent).map(|(pid, _)| *pid));
        next += 1;
    }
    found.split_off(1)
}

fn parent_of(pid: libc::pid_t) -> Option<libc::pid_t> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name in parentheses may hold spaces; the parent follows the state letter.
    let rest = &stat[stat.rfind(')')? + 1..];
    rest.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parent_is_read_past_a_command_name_with_spaces() {
        // SAFETY: getpid and getppid cannot fail.
        let (me, parent) = unsafe { (libc::getpid(), libc::getppid()) };
        assert_eq!(parent_of(me), Some(parent));
        assert_eq!(parent_of(-1), None);
    }
}
