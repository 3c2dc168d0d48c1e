//! `[sandbox] unix_sockets = "deny"` (the default): a seccomp filter on the command's process
//! that makes `socket(AF_UNIX, …)` fail with EACCES.
//!
//! Landlock up to ABI 8 does not govern connecting to a Unix socket by its path, and such a
//! socket is a door to a program outside the sandbox that acts with your rights: a tmux or
//! screen server runs any command in a new window, the D-Bus session bus starts
//! `systemd-run --user` units, docker.sock starts containers with your files mounted, ssh-agent
//! signs with your keys, an ssh ControlMaster, emacsclient or VS Code runs what it is told. The
//! filter shuts them all without knowing where they listen. (Abstract sockets are Landlock's:
//! scoped from ABI 6.)
//!
//! Still allowed: `socketpair` (node's and libuv's child processes, Python multiprocessing's
//! pipes), whose two ends reach only each other; sockets of other families (TCP is `network`'s
//! to refuse); Unix sockets the command inherits open.
//!
//! Also refused, with EPERM as on a kernel with io_uring turned off (programs fall back to plain
//! system calls): io_uring, whose `IORING_OP_SOCKET` makes a socket without the system call the
//! filter sees.
//!
//! Other system call tables: a process on x86_64 can also make i386 system calls (`int 0x80`),
//! whose `socketcall` carries every socket operation behind a pointer seccomp cannot read, and
//! a process on aarch64 can run AArch32 code. The filter (seccompiler's) kills the process with
//! SIGSYS at its first system call from a foreign table: refusing the one call is not possible,
//! and a 32-bit program under a task is rare. x32 calls carry x86_64's tag with bit 30 set in the
//! number; the filter names x32's `socket` and io_uring numbers as well.
//!
//! On other architectures wt has no filter: Unix sockets stay open, and `wt doctor` and
//! `WT_DEBUG=1 wt sandbox` say so.

use std::collections::BTreeMap;
use std::fmt;

use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::SandboxError;

/// The architecture of this build when wt has a filter for it.
const FILTER_ARCH: Option<TargetArch> = if cfg!(target_arch = "x86_64") {
    Some(TargetArch::x86_64)
} else if cfg!(target_arch = "aarch64") {
    Some(TargetArch::aarch64)
} else {
    None
};

/// The bit that marks an x32 system call on x86_64 (`__X32_SYSCALL_BIT`).
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// What `unix_sockets` comes to on this machine, for reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnixSocketPolicy {
    /// `deny` with a filter: new Unix sockets are refused.
    Denied,
    /// `unix_sockets = "allow"`.
    Allowed,
    /// `deny`, but wt has no filter for this architecture.
    Unfiltered,
}

impl UnixSocketPolicy {
    /// What `deny` (or not) comes to in this build.
    pub fn of(deny: bool) -> UnixSocketPolicy {
        match (deny, FILTER_ARCH) {
            (false, _) => UnixSocketPolicy::Allowed,
            (true, Some(_)) => UnixSocketPolicy::Denied,
            (true, None) => UnixSocketPolicy::Unfiltered,
        }
    }
}

impl fmt::Display for UnixSocketPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnixSocketPolicy::Denied => write!(f, "new Unix sockets are refused (seccomp)"),
            UnixSocketPolicy::Allowed => write!(
                f,
                "Unix sockets are allowed ([sandbox] unix_sockets = \"allow\"): a command can ask daemons \
                 outside the sandbox (tmux, D-Bus, docker, ssh-agent) to act for it"
            ),
            UnixSocketPolicy::Unfiltered => write!(
                f,
                "Unix sockets stay open: wt has no seccomp filter for {} (only x86_64 and aarch64)",
                std::env::consts::ARCH
            ),
        }
    }
}

/// The filter, built before the fork and applied in the command's process (`apply`).
pub struct SocketFilter {
    /// Two programs, as a seccompiler filter has one answer: EACCES for AF_UNIX sockets, EPERM
    /// for io_uring.
    programs: [BpfProgram; 2],
}

impl SocketFilter {
    /// The filter for this architecture; none where wt has no filter. Fails when the kernel has
    /// no seccomp (the command must not run believing it has one).
    pub fn build() -> Result<Option<SocketFilter>, SandboxError> {
        let Some(arch) = FILTER_ARCH else { return Ok(None) };
        check_kernel()?;
        let unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, libc::AF_UNIX as u64);
        let unix = SeccompRule::new(vec![unix.map_err(filter_error)?]).map_err(filter_error)?;
        let sockets = refuse(with_x32(&[libc::SYS_socket], arch), vec![unix], libc::EACCES as u32, arch)?;
        let io_uring = [libc::SYS_io_uring_setup, libc::SYS_io_uring_enter, libc::SYS_io_uring_register];
        let io_uring = refuse(with_x32(&io_uring, arch), Vec::new(), libc::EPERM as u32, arch)?;
        Ok(Some(SocketFilter { programs: [sockets, io_uring] }))
    }

    /// Installs the filter on the calling thread, after `no_new_privs` (which seccomp requires of
    /// a process without CAP_SYS_ADMIN). Runs between fork and exec, where the command's process
    /// has one thread: what it starts inherits the filter, which cannot be removed.
    pub fn apply(&self) -> std::io::Result<()> {
        for program in &self.programs {
            // Between fork and exec only an errno reaches wt (std passes no message on).
            seccompiler::apply_filter(program).map_err(|err| match err {
                seccompiler::Error::Prctl(err) | seccompiler::Error::Seccomp(err) => err,
                _ => std::io::Error::from_raw_os_error(libc::EINVAL),
            })?;
        }
        Ok(())
    }
}

/// `calls` and, on x86_64, their x32 numbers.
fn with_x32(calls: &[i64], arch: TargetArch) -> Vec<i64> {
    let x32 = calls.iter().map(|call| call | X32_SYSCALL_BIT);
    calls.iter().copied().chain(x32.filter(|_| arch == TargetArch::x86_64)).collect()
}

/// A program that fails `calls` with `errno` when one of `rules` matches (always, with none), and
/// lets every other call through.
fn refuse(
    calls: Vec<i64>,
    rules: Vec<SeccompRule>,
    errno: u32,
    arch: TargetArch,
) -> Result<BpfProgram, SandboxError> {
    let rules: BTreeMap<i64, Vec<SeccompRule>> =
        calls.into_iter().map(|call| (call, rules.clone())).collect();
    let filter = SeccompFilter::new(rules, SeccompAction::Allow, SeccompAction::Errno(errno), arch)
        .map_err(filter_error)?;
    BpfProgram::try_from(filter).map_err(filter_error)
}

fn filter_error(err: impl fmt::Display) -> SandboxError {
    SandboxError::SocketFilter { reason: err.to_string() }
}

/// Whether this kernel has seccomp: `PR_GET_SECCOMP` answers EINVAL without it.
fn check_kernel() -> Result<(), SandboxError> {
    // SAFETY: PR_GET_SECCOMP only reads this process's own seccomp mode.
    if unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) } < 0 {
        let reason = std::io::Error::last_os_error().to_string();
        return Err(SandboxError::SocketFilter { reason: format!("this kernel has no seccomp ({reason})") });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn x32_numbers_are_added_on_x86_64_only() {
        assert_eq!(with_x32(&[41], TargetArch::x86_64), [41, 0x4000_0029]);
        assert_eq!(with_x32(&[198], TargetArch::aarch64), [198]);
    }

    #[test]
    fn the_filter_builds_where_wt_has_one() {
        let filter = SocketFilter::build().unwrap();
        assert_eq!(filter.is_some(), FILTER_ARCH.is_some());
        assert_eq!(UnixSocketPolicy::of(true) == UnixSocketPolicy::Denied, FILTER_ARCH.is_some());
        assert_eq!(UnixSocketPolicy::of(false), UnixSocketPolicy::Allowed);
    }
}
