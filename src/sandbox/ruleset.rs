//! Turning a `Policy` into a Landlock ruleset, enforced on the command's process as it starts.
//! From then on the restriction holds for it and everything it starts, and cannot be lifted.

use landlock::{
    ABI, AccessFs, AccessNet, BitFlags, PathBeneath, PathFd, Ruleset, RulesetAttr, RulesetCreated,
    RulesetCreatedAttr, RulesetStatus, Scope,
};

use super::SandboxError;
use super::policy::{Access, Policy};

/// The newest ABI whose rights are requested: write_file, remove_*, make_*, refer (2), truncate
/// (3), ioctl_dev (5). ABIs 6–8 add no file right; 9's resolve_unix (connecting to a named
/// socket) is left out until its effect on ordinary tools has been checked.
const REQUESTED_ABI: ABI = ABI::V5;

/// The rights that apply to a single file (a rule on a file may name no other).
fn file_rights() -> BitFlags<AccessFs> {
    AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Execute | AccessFs::Truncate | AccessFs::IoctlDev
}

/// How the restriction came out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Enforcement {
    /// The ABI the rights were chosen for.
    pub abi: u32,
    /// The rights handled, by name.
    pub handled: Vec<String>,
}

/// The first ABI with TCP rules.
const NETWORK_ABI: u32 = 4;

/// The first ABI that scopes signals and abstract Unix sockets to the sandbox.
const SCOPE_ABI: u32 = 6;

/// Rights never granted, even where writing is: making device nodes (a block device is the raw
/// disk beneath every file).
fn never_granted() -> BitFlags<AccessFs> {
    AccessFs::MakeBlock | AccessFs::MakeChar
}

/// A ruleset built for `policy`, to be enforced on the command's process between fork and exec
/// (`enforce`): wt itself stays outside, so it can take the task's objects in and kill what the
/// command leaves behind, and the command cannot signal it.
pub struct Prepared {
    ruleset: Option<RulesetCreated>,
    pub enforcement: Enforcement,
}

/// Builds the ruleset of `policy` on a kernel with `abi`.
pub fn prepare(policy: &Policy, abi: u32) -> Result<Prepared, SandboxError> {
    let target = requested_abi(abi);
    let write = AccessFs::from_write(target);
    let read = AccessFs::from_read(target);
    let handled = if policy.deny_reads { write | read } else { write };
    let mut ruleset = Ruleset::default().handle_access(handled)?;
    let mut names: Vec<String> = handled.iter().map(|right| format!("{right:?}")).collect();
    if abi >= SCOPE_ABI {
        // No signal to a process outside the sandbox (wt, your programs, other tasks), and no
        // connection to an abstract Unix socket outside it (X11, some session buses).
        ruleset = ruleset.scope(Scope::Signal | Scope::AbstractUnixSocket)?;
        names.extend(["Signal".to_owned(), "AbstractUnixSocket".to_owned()]);
    }
    if policy.deny_network {
        if abi < NETWORK_ABI {
            return Err(SandboxError::NoNetworkRules { abi });
        }
        // Handled with no rule that allows a port: every TCP connect and bind is refused.
        ruleset = ruleset.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp)?;
        names.extend(["BindTcp".to_owned(), "ConnectTcp".to_owned()]);
    }
    let mut ruleset = ruleset.create()?;
    for grant in &policy.grants {
        let mut rights = match grant.access {
            Access::Write => handled & !never_granted(),
            Access::Read => read & handled,
        };
        if !grant.is_dir {
            rights &= file_rights();
        }
        if rights.is_empty() {
            continue;
        }
        let fd = PathFd::new(&grant.path)
            .map_err(|source| SandboxError::OpenRulePath { path: grant.path.clone(), source })?;
        ruleset = ruleset.add_rule(PathBeneath::new(fd, rights))?;
    }
    let enforcement = Enforcement { abi, handled: names };
    Ok(Prepared { ruleset: Some(ruleset), enforcement })
}

impl Prepared {
    /// Restricts the calling process to the ruleset, once. Runs in the command's process between
    /// fork and exec, where wt has no other thread: the landlock calls are system calls on a
    /// ruleset made before the fork.
    pub fn enforce(&mut self) -> std::io::Result<()> {
        let Some(ruleset) = self.ruleset.take() else { return Ok(()) };
        match ruleset.restrict_self() {
            Ok(status) if status.ruleset != RulesetStatus::NotEnforced => Ok(()),
            Ok(_) => Err(std::io::Error::other("the kernel enforced none of the Landlock restriction")),
            Err(err) => Err(std::io::Error::other(err.to_string())),
        }
    }
}

/// The rights of the kernel's ABI, no newer than `REQUESTED_ABI`. On a real kernel the
/// landlock crate would narrow `REQUESTED_ABI` itself; choosing from `abi` also honours the
/// test-only `WT_SANDBOX_ABI` cap, which stands in for an older kernel.
fn requested_abi(abi: u32) -> ABI {
    let capped = abi.min(REQUESTED_ABI as u32);
    ABI::from(i32::try_from(capped).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rights_follow_the_kernel_abi_up_to_ioctl_dev() {
        assert!(!AccessFs::from_write(requested_abi(1)).contains(AccessFs::Refer));
        assert!(AccessFs::from_write(requested_abi(2)).contains(AccessFs::Refer));
        assert!(!AccessFs::from_write(requested_abi(2)).contains(AccessFs::Truncate));
        assert!(AccessFs::from_write(requested_abi(3)).contains(AccessFs::Truncate));
        assert!(AccessFs::from_write(requested_abi(7)).contains(AccessFs::IoctlDev));
        assert_eq!(AccessFs::from_write(requested_abi(9)), AccessFs::from_write(ABI::V5));
    }

    #[test]
    fn write_rights_leave_reading_and_execution_free() {
        let write = AccessFs::from_write(requested_abi(7));
        for right in [AccessFs::ReadFile, AccessFs::ReadDir, AccessFs::Execute] {
            assert!(!write.contains(right), "{right:?}");
        }
    }
}
