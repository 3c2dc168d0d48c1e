//! `wt sandbox`: the kernel as the boundary for files. A parser of shell commands (`wt guard`)
//! cannot be complete, so the command of a task runs under a Landlock ruleset that wt applies
//! to itself just before it becomes that command: whatever the command runs — a shell, a
//! script, a compiler, Claude Code and its tools — inherits the restriction and cannot lift it.
//!
//! # Writing
//! Only the write-type rights are handled (write_file, remove_dir, remove_file, make_* and,
//! as the kernel has them, refer (ABI 2), truncate (3), ioctl_dev (5)); reading and executing
//! stay free. Writing, creating, removing, renaming, linking and truncating are allowed only
//! beneath:
//! - the worktree;
//! - its git admin folder `<common>/worktrees/<id>` (index, HEAD, per-worktree logs), and the
//!   repository's `objects`, `refs/heads` and `logs/refs/heads`, which a commit writes;
//! - the task's temporary folder (`--tmp`, default `<common>/spectacular/tmp/<worktree folder
//!   name>`, created; TMPDIR, TMP and TEMP point to it);
//! - `/dev/null`, `/dev/zero`, `/dev/full`, `/dev/tty`, `/dev/pts`, `/dev/ptmx` and `/dev/shm`
//!   (`policy::DEVICES` says why each);
//! - the regular files stdout and stderr already write to (a run's log), so `> /dev/stderr`
//!   works;
//! - the caches of cargo (`registry`, `git`), npm, pip and Go (`caches::cache_folders`), the
//!   project's `[sandbox] allow_write` in guard.toml and `--allow-write`.
//!
//! A path that does not exist is skipped (`WT_DEBUG=1` says so): a Landlock rule attaches to an
//! existing file, and a cache created later by the command could not be created anyway.
//!
//! # Reading, with `reads = "deny-outside"` in guard.toml
//! The read rights (read_file, read_dir, execute) are handled too, and allowed only beneath the
//! write set above and: the system folders `/usr /bin /sbin /lib /lib32 /lib64 /libx32 /etc
//! /opt /proc /sys /dev /run /var/lib /var/cache /nix /snap`; the repository's git folder;
//! the toolchains and configuration in the home folder (`$RUSTUP_HOME` or `~/.rustup`,
//! `$CARGO_HOME` or `~/.cargo`, `$GOROOT`, `$GOPATH` or `~/go`, `$NVM_DIR` or `~/.nvm`,
//! `$VOLTA_HOME` or `~/.volta`, `$PYENV_ROOT` or `~/.pyenv`, `$VIRTUAL_ENV`, `~/.local`,
//! `~/.gitconfig`, `~/.config/git`, `$GIT_CONFIG_GLOBAL`); the program run and wt itself. The
//! main checkout, the other worktrees, `/tmp` and the rest of the home folder (keys, tokens)
//! are then unreadable. Committed content of the main checkout stays readable through the git
//! folder.
//!
//! # Network, with `[sandbox] network = "deny"`
//! TCP connect and bind are handled with no port allowed (Landlock ABI 4, Linux 6.7): no
//! connection out, no listening socket. UDP, and sockets already open, are not covered. An
//! older kernel refuses to start the command rather than run it with the network open.
//!
//! # Unix sockets, with `[sandbox] unix_sockets = "deny"` (the default)
//! A seccomp filter refuses `socket(AF_UNIX, …)` with EACCES (`unix_sockets.rs` says what else
//! and why): Landlock does not govern connecting to a socket by its path, and a daemon outside
//! (tmux, D-Bus, docker, ssh-agent) would act for the command. `socketpair` stays allowed. The
//! variables that point at such daemons are removed from the command's environment whatever the
//! setting (`daemon_env.rs`).
//!
//! # What Landlock does not cover (policy, or a check after the task)
//! - Metadata: `chmod`, `chown`, `utime` outside are not write rights.
//! - Anything inside an allowed folder: the worktree's own `.git` file; other branches under
//!   `refs/heads` (`git branch -f main …` in the worktree moves `main`); existing objects (after
//!   a `chmod`); the admin folder's `config.worktree` (read by git only when the repository sets
//!   `extensions.worktreeConfig`, which the sandboxed command cannot set); a rename within one
//!   allowed folder.
//! - Files opened before the restriction (inherited descriptors); the network unless
//!   `network = "deny"`, and UDP even then; Unix datagrams sent from a `socketpair` end to a named
//!   datagram socket (journald, syslog); signals to other processes on a kernel older than ABI 6.
//!
//! # Claude Code under the sandbox (2.1.330, checked with a scripted model)
//! The session completes; the model's Bash and Write calls outside fail with EACCES ("Permission
//! denied"). The client honours TMPDIR (`claude-<uid>/`, `claude-*-cwd`, `cc-socks/` land in
//! the task's folder). The one Unix socket it asks for is its session's listening socket
//! (`cc-socks/<pid>.sock` in `$XDG_RUNTIME_DIR` or TMPDIR; "uds-messaging" in its code, how
//! other local processes message a running session); refused, the session goes on without it.
//! Its own state is saved only where it may write: `~/.claude/` (transcripts, sessions, plugins,
//! credentials) and `~/.claude.json`, which it replaces through temporary files
//! beside it in the home folder. `CLAUDE_CONFIG_DIR` moves both into one folder that can be
//! allowed; the user's own `~/.claude` should not be, or a task could leave hooks, agents or
//! memory there for later sessions that run outside any sandbox.
//!
//! # Without Landlock
//! `probe` reports what the kernel offers. Without Landlock `wt sandbox` refuses to start (exit
//! 3, with the fix) unless guard.toml says `[sandbox] required = false`: then the command runs
//! contained by policy only (the guard hook) and one line on stderr says so.

mod caches;
mod confinement;
mod daemon_env;
mod kernel;
mod policy;
mod ruleset;
mod unix_sockets;
mod worktree;

use std::path::{Path, PathBuf};

pub use caches::HostEnv;
pub use confinement::Confinement;
pub use daemon_env::DAEMON_VARIABLES;
pub use kernel::{KernelSupport, probe};
pub use policy::{Access, Policy, Request};
pub use ruleset::prepare;
pub use unix_sockets::{SocketFilter, UnixSocketPolicy};
pub use worktree::{Head, TaskWorktree};

use crate::guard::GuardConfig;

#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    #[error("{} is not a linked worktree: {reason}", root.display())]
    NotALinkedWorktree { root: PathBuf, reason: String },
    #[error("the worktree {} is on {actual}, not on branch {expected}", root.display())]
    WrongBranch { root: PathBuf, expected: String, actual: Head },
    #[error("cannot read {}: {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("bad guard rules: {message}")]
    Rules { message: String },
    #[error("cannot contain the command: {support}")]
    Unavailable { support: KernelSupport },
    #[error("cannot create the task's temporary folder {}: {source}", path.display())]
    Tmp { path: PathBuf, source: std::io::Error },
    #[error("cannot open {} for a Landlock rule: {source}", path.display())]
    OpenRulePath { path: PathBuf, source: landlock::PathFdError },
    #[error("the Landlock ruleset could not be applied: {0}")]
    Ruleset(#[from] landlock::RulesetError),
    #[error(
        "network = \"deny\" needs Landlock ABI 4 (Linux 6.7) or newer for TCP rules; this kernel has ABI {abi}"
    )]
    NoNetworkRules { abi: u32 },
    #[error("cannot refuse Unix sockets: {reason}")]
    SocketFilter { reason: String },
}

/// The guard rules that apply: `explicit` (which must exist), else the project's
/// `.spectacular/guard.toml` in the main checkout (none: the defaults).
pub fn load_rules(explicit: Option<&Path>, worktree: &TaskWorktree) -> Result<GuardConfig, SandboxError> {
    let path = match explicit {
        Some(path) => path.to_owned(),
        None => match crate::guard::project_rules_path(worktree.common()) {
            Some(path) => path,
            None => return Ok(GuardConfig::default()),
        },
    };
    match (GuardConfig::load_toml(&path).map_err(|message| SandboxError::Rules { message })?, explicit) {
        (Some(config), _) => Ok(config),
        (None, None) => Ok(GuardConfig::default()),
        (None, Some(_)) => Err(SandboxError::Rules { message: format!("{}: no such file", path.display()) }),
    }
}
