//! Everything the command's process applies to itself between fork and exec, built before the
//! fork, and the order it goes in.

use super::ruleset::Prepared;
use super::unix_sockets::SocketFilter;

/// The Landlock ruleset (none on a kernel without Landlock, when the project allows that) and the
/// Unix socket filter (none with `unix_sockets = "allow"` or on an architecture without one).
pub struct Confinement {
    pub landlock: Option<Prepared>,
    pub sockets: Option<SocketFilter>,
}

impl Confinement {
    /// Applies both, once, in the command's process: `no_new_privs` first (both need it, and
    /// either may be absent), then Landlock, then the filter last, so that nothing wt still does
    /// before exec is refused by it. The filter leaves the Landlock calls alone and Landlock no
    /// system call, so the order changes nothing for the command.
    pub fn enforce(&mut self) -> std::io::Result<()> {
        // SAFETY: prctl with these arguments only sets an attribute of this process, one that
        // exec keeps and nothing can unset: setuid programs no longer raise privileges.
        if unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        if let Some(landlock) = self.landlock.as_mut() {
            landlock.enforce()?;
        }
        if let Some(sockets) = &self.sockets {
            sockets.apply()?;
        }
        Ok(())
    }
}
