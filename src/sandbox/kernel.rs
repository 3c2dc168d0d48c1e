//! Whether this kernel can contain a command, and with which Landlock ABI: one system call that
//! only reports the version (no ruleset is created, nothing is restricted). `wt doctor` and
//! `wt status` show it; `wt sandbox` refuses to start without it unless told otherwise.

use std::fmt;

/// Test-only: `0` makes `probe` report a kernel without Landlock; `N` caps the ABI at `N` (an
/// older kernel). Integration tests use it to reach the paths a real machine without Landlock
/// would take; nothing else should set it.
pub const ABI_OVERRIDE_ENV: &str = "WT_SANDBOX_ABI";

/// `landlock_create_ruleset` flag: return the highest supported ABI version.
const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelSupport {
    /// Landlock works; the kernel's ABI version (1 = Linux 5.13, 2 = 5.19, 3 = 6.2, 5 = 6.10, …).
    Available { abi: u32 },
    /// Built into the kernel but not enabled at boot (`EOPNOTSUPP`).
    Disabled,
    /// Not in this kernel (`ENOSYS`): older than 5.13, built without it, or the call is blocked
    /// by a seccomp filter (some container runtimes).
    Missing,
    /// `WT_SANDBOX_ABI=0`: a test stands in for a kernel without Landlock.
    Simulated,
}

impl KernelSupport {
    pub fn abi(self) -> Option<u32> {
        match self {
            KernelSupport::Available { abi } => Some(abi),
            _ => None,
        }
    }

    /// The command that makes Landlock available, when one exists.
    pub fn fix(self) -> Option<&'static str> {
        match self {
            KernelSupport::Available { .. } => None,
            KernelSupport::Disabled => Some(
                "add landlock to the kernel's lsm= boot parameter (e.g. lsm=landlock,lockdown,yama,integrity,apparmor,bpf) and reboot",
            ),
            KernelSupport::Missing => Some(
                "run on Linux >= 5.13 built with CONFIG_SECURITY_LANDLOCK=y; in a container, allow the landlock_* system calls in its seccomp profile",
            ),
            KernelSupport::Simulated => Some("unset WT_SANDBOX_ABI (it is for tests only)"),
        }
    }
}

impl fmt::Display for KernelSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            KernelSupport::Available { abi } => write!(f, "Landlock ABI {abi}"),
            KernelSupport::Disabled => {
                write!(f, "Landlock is built into this kernel but not enabled at boot")
            }
            KernelSupport::Missing => write!(f, "this kernel has no Landlock (or a seccomp filter hides it)"),
            KernelSupport::Simulated => {
                write!(f, "Landlock is turned off by {ABI_OVERRIDE_ENV}=0 (tests only)")
            }
        }
    }
}

/// What this kernel offers, after the test-only `WT_SANDBOX_ABI` override.
pub fn probe() -> KernelSupport {
    let kernel = kernel_support();
    let cap = std::env::var(ABI_OVERRIDE_ENV).ok().and_then(|value| value.trim().parse::<u32>().ok());
    apply_override(kernel, cap)
}

fn apply_override(kernel: KernelSupport, cap: Option<u32>) -> KernelSupport {
    match (kernel, cap) {
        (_, Some(0)) => KernelSupport::Simulated,
        (KernelSupport::Available { abi }, Some(cap)) => KernelSupport::Available { abi: abi.min(cap) },
        (kernel, _) => kernel,
    }
}

fn kernel_support() -> KernelSupport {
    // SAFETY: with a null attribute pointer, a size of 0 and the VERSION flag, the kernel reads no
    // memory and creates no file descriptor: it only returns the ABI version or an error.
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    if version > 0 {
        return KernelSupport::Available { abi: u32::try_from(version).unwrap_or(u32::MAX) };
    }
    match std::io::Error::last_os_error().raw_os_error() {
        Some(libc::EOPNOTSUPP) => KernelSupport::Disabled,
        _ => KernelSupport::Missing,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_override_turns_landlock_off_or_caps_the_abi() {
        let kernel = KernelSupport::Available { abi: 7 };
        assert_eq!(apply_override(kernel, None), kernel);
        assert_eq!(apply_override(kernel, Some(0)), KernelSupport::Simulated);
        assert_eq!(apply_override(kernel, Some(3)), KernelSupport::Available { abi: 3 });
        assert_eq!(apply_override(kernel, Some(9)), kernel);
        assert_eq!(apply_override(KernelSupport::Missing, Some(3)), KernelSupport::Missing);
    }

    #[test]
    fn every_unavailable_kernel_has_a_fix() {
        for support in [KernelSupport::Disabled, KernelSupport::Missing, KernelSupport::Simulated] {
            assert!(support.abi().is_none());
            assert!(support.fix().is_some(), "{support}");
        }
    }

    #[test]
    fn this_machine_reports_a_version_or_a_reason() {
        // Whatever the kernel, the probe answers without restricting the test process.
        let support = kernel_support();
        if let KernelSupport::Available { abi } = support {
            assert!(abi >= 1);
        }
        assert!(std::fs::write(std::env::temp_dir().join("wt-probe-check"), "x").is_ok());
    }
}
