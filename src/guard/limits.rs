//! Bounds on the work one Bash check may do. Claude Code runs a call whose hook times out, so a
//! guard that hangs or runs out of memory fails open: past any of these caps the call is denied,
//! with a reason that says how to get the work done (split the command, or put it in a script
//! file inside the worktree). Every cap is far above what ordinary commands need.

use std::time::Duration;

/// Longest command read at all. Claude Code's longest ordinary commands (a commit message in a
/// heredoc, a generated file written with `cat <<EOF`) are a few KiB; every other cap follows
/// from this one, since parsing is linear in it.
pub const MAX_COMMAND_BYTES: usize = 64 * 1024;

/// Shells inside shells (`bash -c`, `eval`, `source`, a heredoc or pipe fed to `sh`).
pub const MAX_SHELL_DEPTH: usize = 8;

/// Longest value wt follows for one variable or word. A value can only outgrow the command that
/// holds it by expanding into itself (`a=$a$a`, doubled 29 times, asks for 512 MiB): that is
/// refused rather than followed, since no ordinary command builds such a value.
pub const MAX_VALUE_BYTES: usize = MAX_COMMAND_BYTES;

/// Bytes all expansions of one check may produce together (words, variable values, arguments).
pub const MAX_EXPANDED_BYTES: usize = 16 * MAX_COMMAND_BYTES;

/// Simple commands followed in one check, counting each time a loop body or a nested shell is
/// followed again.
pub const MAX_STEPS: u64 = 20_000;

/// Processor time for one check: far under Claude Code's hook timeout, far above the fraction
/// of a millisecond an ordinary command takes. Processor time, not wall-clock time, so a
/// machine busy with builds does not make an ordinary command run out of time.
pub const TIME_BUDGET: Duration = Duration::from_millis(300);

/// Wall-clock time for the whole hook, reading included: past it `wt guard` blocks the call
/// (exit 2). Half the 10 s timeout the plugin's hooks and the generated agents give it, since
/// Claude Code runs a call whose hook timed out; a read that waits (a fifo) uses no processor
/// time, so [`TIME_BUDGET`] cannot catch it.
pub const WALL_LIMIT: Duration = Duration::from_secs(5);

/// Which cap was reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    Steps,
    Time,
    Value,
    Expansion,
    Shells,
}

impl Limit {
    /// Why the command is refused and what to do instead.
    pub fn reason(self) -> String {
        let what = match self {
            Limit::Steps => format!("has more than {MAX_STEPS} commands for wt guard to follow"),
            Limit::Time => format!("took wt guard longer than {} ms to follow", TIME_BUDGET.as_millis()),
            Limit::Value => {
                format!(
                    "builds a value longer than {} KiB (a variable expanded into itself?)",
                    MAX_VALUE_BYTES / 1024
                )
            }
            Limit::Expansion => {
                format!("expands to more than {} KiB of words", MAX_EXPANDED_BYTES / 1024)
            }
            Limit::Shells => {
                format!("nests shells (`bash -c`, `eval`, `source`) more than {MAX_SHELL_DEPTH} deep")
            }
        };
        format!(
            "this command {what}; split it into smaller commands, or write a script file inside the worktree and \
             run that"
        )
    }
}

/// The work done so far by one check.
#[derive(Debug)]
pub struct Budget {
    started: Duration,
    steps: u64,
    expanded: usize,
    pub exceeded: Option<Limit>,
}

impl Default for Budget {
    fn default() -> Self {
        Budget::new()
    }
}

impl Budget {
    pub fn new() -> Budget {
        Budget { started: thread_time(), steps: 0, expanded: 0, exceeded: None }
    }

    /// Counts one step; false once any cap is reached (the check then stops following).
    pub fn step(&mut self) -> bool {
        self.steps += 1;
        if self.steps > MAX_STEPS {
            self.exceed(Limit::Steps);
        } else if thread_time().saturating_sub(self.started) > TIME_BUDGET {
            self.exceed(Limit::Time);
        }
        self.exceeded.is_none()
    }

    /// Counts `bytes` of expansion; false once a cap is reached.
    pub fn expand(&mut self, bytes: usize, value_len: usize) -> bool {
        self.expanded += bytes;
        if value_len > MAX_VALUE_BYTES {
            self.exceed(Limit::Value);
        } else if self.expanded > MAX_EXPANDED_BYTES {
            self.exceed(Limit::Expansion);
        }
        self.exceeded.is_none()
    }

    pub fn exceed(&mut self, limit: Limit) {
        self.exceeded.get_or_insert(limit);
    }

    pub fn ok(&self) -> bool {
        self.exceeded.is_none()
    }
}

/// The processor time this thread has used.
fn thread_time() -> Duration {
    let mut now = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `now` is a valid timespec for the call to fill; the clock id is a constant.
    let status = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) };
    if status != 0 {
        return Duration::ZERO;
    }
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}
