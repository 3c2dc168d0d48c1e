//! The one place that spawns processes (git, git-spice, agents, verify commands).
//!
//! Every child gets a null stdin, a C locale, no terminal prompts and no editor, and runs without
//! the caller's `GIT_DIR`/`GIT_WORK_TREE` so it operates on the directory it is given — except
//! under `Cmd::run_supervised` (`supervisor.rs`), which makes wt a transparent wrapper and changes
//! nothing the caller did not set. Captured
//! stderr goes into the error. With `WT_DEBUG=1` each call is logged to stderr with its working
//! directory, duration and exit status.
//!
//! Children die with wt (`PR_SET_PDEATHSIG`), so a killed run leaves no git or git-spice process
//! behind to race the resume; only agents, whose work is worth finishing, may outlive it
//! (`Cmd::outlive_wt`), and a resume waits for them.

mod supervisor;

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Variables that would point a child git at another repository than the one we chose.
const SCRUBBED_ENV: &[&str] = &["GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_PREFIX", "GIT_COMMON_DIR"];

#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("could not start `{command}`: {source}")]
    Spawn { command: String, source: std::io::Error },
    #[error("`{command}` {status}{}", stderr_suffix(.stderr))]
    Failed { command: String, status: ExitDescription, stderr: String },
}

fn stderr_suffix(stderr: &str) -> String {
    let trimmed = stderr.trim();
    if trimmed.is_empty() { String::new() } else { format!(": {trimmed}") }
}

/// How a child ended, for messages: "exited with status 3" or "was killed by signal 9".
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitDescription {
    Code(i32),
    Signal(i32),
}

impl fmt::Display for ExitDescription {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExitDescription::Code(code) => write!(f, "exited with status {code}"),
            ExitDescription::Signal(signal) => write!(f, "was killed by signal {signal}"),
        }
    }
}

impl From<std::process::ExitStatus> for ExitDescription {
    fn from(status: std::process::ExitStatus) -> Self {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(code), _) => ExitDescription::Code(code),
            (None, Some(signal)) => ExitDescription::Signal(signal),
            (None, None) => ExitDescription::Code(-1),
        }
    }
}

/// The captured result of a finished child.
#[derive(Debug)]
pub struct Output {
    pub success: bool,
    pub status: ExitDescription,
    pub stdout: String,
    pub stderr: String,
}

/// A command to run: program, arguments, directory and extra environment.
#[derive(Debug, Clone)]
pub struct Cmd {
    program: OsString,
    args: Vec<OsString>,
    dir: Option<PathBuf>,
    env: Vec<(OsString, OsString)>,
    /// Variables of wt's own environment the child does not get.
    env_removed: Vec<OsString>,
    outlives_wt: bool,
}

impl Cmd {
    pub fn new(program: impl AsRef<OsStr>) -> Self {
        Cmd {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            dir: None,
            env: Vec::new(),
            env_removed: Vec::new(),
            outlives_wt: false,
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Self {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_owned()));
        self
    }

    pub fn dir(mut self, dir: impl AsRef<Path>) -> Self {
        self.dir = Some(dir.as_ref().to_owned());
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Self {
        self.env.push((key.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// Leaves `key` of wt's environment out of the child's (unless `env` sets it).
    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Self {
        self.env_removed.push(key.as_ref().to_owned());
        self
    }

    /// This command run through `wrapper`, a program that execs the words after its own
    /// arguments (`wt sandbox … --`): in this command's folder, with both environments.
    pub fn inside(self, wrapper: Cmd) -> Cmd {
        let mut args = wrapper.args;
        args.push(self.program);
        args.extend(self.args);
        let mut env = wrapper.env;
        env.extend(self.env);
        let mut env_removed = wrapper.env_removed;
        env_removed.extend(self.env_removed);
        Cmd { program: wrapper.program, args, dir: self.dir, env, env_removed, outlives_wt: self.outlives_wt }
    }

    /// Lets the child go on if wt dies (for agents: a resume waits for them instead).
    pub fn outlive_wt(mut self) -> Self {
        self.outlives_wt = true;
        self
    }

    /// Runs to completion with stdout and stderr captured; a non-zero exit is an error.
    pub fn read(&self) -> Result<Output, ProcessError> {
        let output = self.read_unchecked()?;
        if output.success {
            Ok(output)
        } else {
            Err(ProcessError::Failed {
                command: self.display(),
                status: output.status,
                stderr: output.stderr,
            })
        }
    }

    /// Runs to completion with stdout and stderr captured; the caller interprets the exit status.
    pub fn read_unchecked(&self) -> Result<Output, ProcessError> {
        let started = Instant::now();
        let result = self.expression().stdout_capture().stderr_capture().run();
        let output = result.map_err(|source| ProcessError::Spawn { command: self.display(), source })?;
        let status = ExitDescription::from(output.status);
        self.trace(started, status);
        Ok(Output {
            success: output.status.success(),
            status,
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        })
    }

    /// Runs to completion with stdout and stderr appended to `log`; returns how it ended.
    pub fn run_logged(&self, log: &Path) -> Result<ExitDescription, ProcessError> {
        self.start_logged(log)?.wait()
    }

    /// Starts the command with stdout and stderr appended to `log`, without waiting.
    pub fn start_logged(&self, log: &Path) -> Result<Started, ProcessError> {
        self.start_to_files(log, log)
    }

    /// Starts the command with stdout appended to `stdout` and stderr to `stderr`.
    pub fn start_to_files(&self, stdout: &Path, stderr: &Path) -> Result<Started, ProcessError> {
        let spawn_error = |source| ProcessError::Spawn { command: self.display(), source };
        let append = |path: &Path| std::fs::OpenOptions::new().create(true).append(true).open(path);
        let (out, err) = (append(stdout).map_err(spawn_error)?, append(stderr).map_err(spawn_error)?);
        let handle = self.expression().stdout_file(out).stderr_file(err).start().map_err(spawn_error)?;
        Ok(Started { handle, cmd: self.clone(), started: Instant::now() })
    }

    fn expression(&self) -> duct::Expression {
        let mut expression = duct::cmd(&self.program, &self.args)
            .stdin_null()
            .unchecked()
            .env("LC_ALL", "C")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_EDITOR", "true")
            .env("GIT_SEQUENCE_EDITOR", "true")
            .env("NO_COLOR", "1");
        let scrubbed =
            SCRUBBED_ENV.iter().map(OsStr::new).chain(self.env_removed.iter().map(OsString::as_os_str));
        for key in scrubbed.filter(|key| !self.env.iter().any(|(k, _)| k == key)) {
            expression = expression.env_remove(key);
        }
        for (key, value) in &self.env {
            expression = expression.env(key, value);
        }
        if let Some(dir) = &self.dir {
            expression = expression.dir(dir);
        }
        if !self.outlives_wt {
            expression = expression.before_spawn(|command| {
                die_with_parent(command);
                Ok(())
            });
        }
        expression
    }

    /// The command line as a user would type it, for messages and logs.
    pub fn display(&self) -> String {
        let mut words = vec![self.program.to_string_lossy().into_owned()];
        words.extend(self.args.iter().map(|a| shell_word(&a.to_string_lossy())));
        words.join(" ")
    }

    fn trace(&self, started: Instant, status: ExitDescription) {
        if std::env::var_os("WT_DEBUG").is_some_and(|v| v == "1") {
            let dir = self.dir.as_deref().map(Path::display);
            let dir = dir.map(|d| d.to_string()).unwrap_or_else(|| ".".into());
            eprintln!("wt debug: {} (in {dir}) {status} after {:?}", self.display(), started.elapsed());
        }
    }
}

/// This program's binary, for hooks and wrappers that call back into it.
pub fn own_exe() -> Result<PathBuf, String> {
    std::env::current_exe().map_err(|err| format!("cannot find the wt binary: {err}"))
}

/// The binary a hook written into a file calls back: `spectacular-wt` next to this one when it is
/// there (the name only this project installs, so no other `wt` can answer for it), else this
/// binary, by absolute path either way.
pub fn hook_exe() -> Result<PathBuf, String> {
    let exe = own_exe()?;
    let sibling = exe.with_file_name("spectacular-wt");
    Ok(if sibling.is_file() { sibling } else { exe })
}

/// The name this program was started as (`wt`, or `spectacular-wt` from the plugin), for the
/// commands it tells its caller to run next.
pub fn own_name() -> String {
    let started_as = std::env::args_os().next().map(std::path::PathBuf::from);
    let name = started_as.as_deref().and_then(Path::file_name).map(|n| n.to_string_lossy().into_owned());
    name.filter(|name| name == "spectacular-wt").unwrap_or_else(|| "wt".to_owned())
}

fn die_with_parent(command: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    let parent = std::process::id() as libc::pid_t;
    // SAFETY: the closure runs between fork and exec and calls only prctl and getppid, which are
    // async-signal-safe; it allocates nothing and touches no lock.
    unsafe {
        command.pre_exec(move || {
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // wt may have died before prctl took effect.
            if libc::getppid() != parent {
                return Err(std::io::Error::other("wt exited before its child started"));
            }
            Ok(())
        });
    }
}

/// A child started by `start_logged`.
pub struct Started {
    handle: duct::Handle,
    cmd: Cmd,
    started: Instant,
}

impl Started {
    pub fn pid(&self) -> Option<u32> {
        self.handle.pids().first().copied()
    }

    pub fn wait(self) -> Result<ExitDescription, ProcessError> {
        let output = self
            .handle
            .wait()
            .map_err(|source| ProcessError::Spawn { command: self.cmd.display(), source })?;
        let status = ExitDescription::from(output.status);
        self.cmd.trace(self.started, status);
        Ok(status)
    }

    /// Waits, calling `tick` at least ten times a second (to follow the child's output); kills
    /// the child after `timeout` and returns None. Polls often at first and less as the child
    /// runs on, so a short agent's end is seen within milliseconds.
    pub fn wait_watching(
        self,
        timeout: Option<std::time::Duration>,
        tick: &mut dyn FnMut(),
    ) -> Result<Option<ExitDescription>, ProcessError> {
        let error = |source| ProcessError::Spawn { command: self.cmd.display(), source };
        let mut pause = std::time::Duration::from_millis(2);
        loop {
            if let Some(output) = self.handle.try_wait().map_err(error)? {
                tick();
                let status = ExitDescription::from(output.status);
                self.cmd.trace(self.started, status);
                return Ok(Some(status));
            }
            if timeout.is_some_and(|limit| self.started.elapsed() >= limit) {
                self.stop().map_err(error)?;
                tick();
                return Ok(None);
            }
            tick();
            std::thread::sleep(pause);
            pause = (pause * 2).min(std::time::Duration::from_millis(100));
        }
    }
}

/// How long a child asked to stop (SIGTERM) has before it is killed.
const STOP_GRACE: std::time::Duration = std::time::Duration::from_secs(3);

impl Started {
    /// Asks the child to stop (SIGTERM: a `wt sandbox` then takes what it started with it), and
    /// kills it if it has not ended after `STOP_GRACE`.
    fn stop(&self) -> std::io::Result<()> {
        if let Some(pid) = self.pid() {
            // SAFETY: kill only sends a signal, to our own child.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGTERM) };
            let asked = Instant::now();
            while asked.elapsed() < STOP_GRACE {
                if self.handle.try_wait()?.is_some() {
                    return Ok(());
                }
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        self.handle.kill()
    }
}

fn shell_word(word: &str) -> String {
    let plain =
        !word.is_empty() && word.chars().all(|c| c.is_ascii_alphanumeric() || "-_./=:@%+,".contains(c));
    if plain { word.to_owned() } else { format!("'{}'", word.replace('\'', r"'\''")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failure_carries_stderr_and_status() {
        let err = Cmd::new("sh").args(["-c", "echo oops >&2; exit 3"]).read().unwrap_err();
        let text = err.to_string();
        assert!(text.contains("exited with status 3"), "{text}");
        assert!(text.ends_with(": oops"), "{text}");
    }

    #[test]
    fn stdin_is_null_and_locale_is_c() {
        let out = Cmd::new("sh").args(["-c", "cat; echo \"$LC_ALL\""]).read().unwrap();
        assert_eq!(out.stdout, "C\n");
    }

    #[test]
    fn git_dir_of_the_caller_does_not_leak() {
        let out = Cmd::new("sh").args(["-c", "echo \"${GIT_DIR-unset}\""]).env("GIT_DIR", "/elsewhere");
        // An explicit env() is the caller's choice and wins; only the inherited one is scrubbed.
        assert_eq!(out.read().unwrap().stdout, "/elsewhere\n");
        let out = Cmd::new("sh").args(["-c", "echo \"${GIT_DIR-unset}\""]).read().unwrap();
        assert_eq!(out.stdout, "unset\n");
    }

    /// The state letter of a process (R, S, Z, …), or None once it is gone.
    fn process_state(pid: u32) -> Option<char> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        stat.rsplit(')').next()?.trim().chars().next()
    }

    fn start_sleeper_from_a_thread_that_exits(cmd: Cmd) -> u32 {
        // The parent-death signal fires when the spawning thread ends, as it would when wt dies.
        std::thread::spawn(move || {
            let log = std::env::temp_dir().join(format!("wt-process-test-{}.log", std::process::id()));
            let started = cmd.start_logged(&log).unwrap();
            let pid = started.pid().unwrap();
            std::mem::forget(started);
            pid
        })
        .join()
        .unwrap()
    }

    #[test]
    fn children_die_with_wt_unless_they_may_outlive_it() {
        let dying = start_sleeper_from_a_thread_that_exits(Cmd::new("sleep").arg("30"));
        let surviving = start_sleeper_from_a_thread_that_exits(Cmd::new("sleep").arg("30").outlive_wt());
        std::thread::sleep(std::time::Duration::from_millis(200));
        assert!(matches!(process_state(dying), None | Some('Z')), "{:?}", process_state(dying));
        assert!(matches!(process_state(surviving), Some('S') | Some('R')), "{:?}", process_state(surviving));
        Cmd::new("kill").arg(surviving.to_string()).read().unwrap();
    }

    #[test]
    fn a_wrapped_command_keeps_its_folder_and_environment() {
        let cmd = Cmd::new("sh").args(["-c", "pwd; echo \"$A$B\""]).dir("/tmp").env("A", "a");
        let wrapped = cmd.inside(Cmd::new("env").env("B", "b").arg("--"));
        assert_eq!(wrapped.display(), "env -- sh -c 'pwd; echo \"$A$B\"'");
        assert_eq!(wrapped.read().unwrap().stdout, "/tmp\nab\n");
    }

    #[test]
    fn display_quotes_words_with_spaces() {
        let cmd = Cmd::new("git").args(["commit", "-m", "[Task 1.1] it's"]);
        assert_eq!(cmd.display(), r"git commit -m '[Task 1.1] it'\''s'");
    }
}
