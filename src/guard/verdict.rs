//! What the Bash policy made of a command, before the hook turns it into a decision for the way
//! the agent is contained (see `hook::Containment`).

/// The Bash policy's answer. A deny is always a deny; what `Unclear` means depends on whether
/// something else (the kernel sandbox) contains the agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Every command was followed and nothing acts outside the worktree or on what the engine owns.
    Understood,
    /// Ordinary syntax or values the guard cannot follow (a function, `$(( ))`, a variable whose
    /// value is not known, an unknown option of a command that writes…), and nothing to deny.
    Unclear(String),
    Deny(String),
}

impl Verdict {
    pub fn is_deny(&self) -> bool {
        matches!(self, Verdict::Deny(_))
    }
}
