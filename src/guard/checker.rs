//! The context one Bash check shares with every rule: the worktree, the verdict it accumulates
//! (refusals and what it could not follow), the work it may still do (`limits`), the loops being
//! followed, and the files the command writes (`written`).
//!
//! Everything in the Bash policy builds on this file, and it builds on nothing above it. Where a
//! rule must check more shell (a nested script: `bash -c`, `eval`, `source`, a script the command
//! wrote; a command it runs: `find -exec`), it asks the checker, which hands the work to the walk
//! that `bash::check_bash` installed (`Walk`): rules never depend on the walk itself.

use std::path::{Path, PathBuf};

use super::arg::Arg;
use super::limits::{Budget, Limit, MAX_SHELL_DEPTH};
use super::paths::{Worktree, resolve};
use super::shell::{self, Script};
use super::state::{Flow, State, join};
use super::verdict::Verdict;
use super::written::Writes;

/// Messages kept of each kind; the rest are counted.
const MAX_MESSAGES: usize = 16;

/// What a command reads on its standard input, when it is a script for a shell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stdin {
    /// Nothing wt knows of (the tool's own input).
    Nothing,
    /// This text (a heredoc, a here-string, `echo '…' |`).
    Text(String),
    /// Something wt cannot see (a file, another command's output).
    Unknown,
}

/// The walk over a script, which the checker reaches without depending on it: installed by
/// `bash::check_bash`, called for every nested script and command a rule finds.
#[derive(Clone, Copy)]
pub struct Walk {
    /// Checks a parsed script (`flow`).
    pub script: fn(&mut Checker<'_>, &Script, State, &Stdin) -> Flow,
    /// Runs one command given as arguments (`bash`: prefixes, builtins, then the command's rule).
    pub run: fn(&mut Checker<'_>, &[Arg], State, &Stdin) -> Flow,
}

/// The states a loop's `break` and `continue` leave it in.
#[derive(Default)]
pub struct LoopExits {
    pub breaks: Option<State>,
    pub continues: Option<State>,
}

pub struct Checker<'a> {
    pub wt: &'a Worktree,
    pub branch: Option<&'a str>,
    /// The agent's `$HOME`, as the hook's environment has it.
    pub home: Option<PathBuf>,
    pub env_cdpath: Option<String>,
    pub budget: Budget,
    /// Variables `${X:=…}` set while expanding the current command.
    pub assigned: Vec<String>,
    /// The loops being followed, innermost last.
    pub loops: Vec<LoopExits>,
    /// Files this command writes inside the worktree, and what it writes in them.
    pub writes: Writes,
    walk: Walk,
    denials: Vec<String>,
    unclear: Vec<String>,
    dropped: (usize, usize),
    shells: usize,
}

impl<'a> Checker<'a> {
    pub fn new(wt: &'a Worktree, branch: Option<&'a str>, walk: Walk) -> Self {
        Checker {
            wt,
            branch,
            home: std::env::var_os("HOME").map(PathBuf::from),
            env_cdpath: std::env::var("CDPATH").ok(),
            budget: Budget::new(),
            assigned: Vec::new(),
            loops: Vec::new(),
            writes: Writes::default(),
            walk,
            denials: Vec::new(),
            unclear: Vec::new(),
            dropped: (0, 0),
            shells: 0,
        }
    }

    /// The answer for the whole command: a refusal (a cap reached first), else what was not
    /// followed, else understood.
    pub fn verdict(mut self) -> Verdict {
        if let Some(limit) = self.budget.exceeded {
            let reason = self.with_root(limit.reason());
            self.denials.insert(0, reason);
        }
        if let Some(first) = self.denials.first() {
            let more = self.denials.len() - 1 + self.dropped.0;
            return Verdict::Deny(match more {
                0 => first.clone(),
                n => format!("{first} (and {n} more refused in this command)"),
            });
        }
        match self.unclear.first() {
            None => Verdict::Understood,
            Some(first) => Verdict::Unclear(match self.unclear.len() - 1 + self.dropped.1 {
                0 => first.clone(),
                n => format!("{first} (and {n} more not followed)"),
            }),
        }
    }

    /// Records a refusal; every reason names the worktree, so the agent knows where to work.
    pub fn deny(&mut self, reason: String) {
        let reason = self.with_root(reason);
        if self.denials.len() >= MAX_MESSAGES {
            self.dropped.0 += usize::from(!self.denials.contains(&reason));
        } else if !self.denials.contains(&reason) {
            self.denials.push(reason);
        }
    }

    /// Runs `check` for a command that changes files' mode, owner or times (`chmod`, `chown`,
    /// `touch -d`): the kernel sandbox does not stop those, so what wt cannot follow is denied,
    /// not unclear.
    pub fn strictly(&mut self, check: impl FnOnce(&mut Self)) {
        let before = self.unclear.len();
        check(self);
        let fresh: Vec<String> = self.unclear.drain(before..).collect();
        for reason in fresh {
            self.deny(format!(
                "{reason}; the kernel sandbox does not stop changes of mode, owner or times, so name the \
                 files inside the worktree plainly"
            ));
        }
    }

    /// Runs `check` on a script read from a file: what it refuses or cannot follow is said to be
    /// in `file`.
    pub fn within<R>(&mut self, file: &str, check: impl FnOnce(&mut Self) -> R) -> R {
        let (denials, unclear) = (self.denials.len(), self.unclear.len());
        let result = check(self);
        let prefix = |reason: &mut String| *reason = format!("in {file}: {reason}");
        self.denials[denials..].iter_mut().for_each(prefix);
        self.unclear[unclear..].iter_mut().for_each(prefix);
        result
    }

    /// Records something wt could not follow.
    pub fn unclear(&mut self, reason: String) {
        if self.unclear.len() >= MAX_MESSAGES {
            self.dropped.1 += usize::from(!self.unclear.contains(&reason));
        } else if !self.unclear.contains(&reason) {
            self.unclear.push(reason);
        }
    }

    fn with_root(&self, reason: String) -> String {
        let root = self.root();
        if reason.contains(&root) { reason } else { format!("{reason} (this agent's worktree: {root})") }
    }

    pub fn root(&self) -> String {
        self.wt.root().display().to_string()
    }

    /// Checks a whole command text (the tool's command, or a script given to a shell).
    pub fn text(&mut self, text: &str, state: State) -> Flow {
        match shell::parse(text) {
            Ok(script) => self.script(&script, state, &Stdin::Nothing),
            Err(err) if err.limit => {
                self.deny(format!(
                    "{err}; split the command, or write a script file inside the worktree and run that"
                ));
                Flow::both(state)
            }
            Err(err) => {
                // bash runs the complete lines before one it cannot parse.
                if err.complete > 0
                    && let Ok(lines) = shell::parse(&text[..err.complete])
                {
                    self.script(&lines, state.clone(), &Stdin::Nothing);
                }
                self.unclear(format!("wt guard could not follow the command ({err})"));
                Flow::both(state)
            }
        }
    }

    /// Checks a script given as text (`bash -c`, `eval`, `source`, a heredoc fed to a shell).
    pub fn nested(&mut self, text: &str, state: State) -> Flow {
        if self.shells >= MAX_SHELL_DEPTH {
            self.budget.exceed(Limit::Shells);
            return Flow::both(state);
        }
        self.shells += 1;
        let flow = self.text(text, state);
        self.shells -= 1;
        flow
    }

    /// Checks a script that is given as a `Script` already (a substitution, a compound's part).
    pub fn script(&mut self, script: &Script, state: State, stdin: &Stdin) -> Flow {
        if !self.budget.ok() {
            return Flow::both(state);
        }
        (self.walk.script)(self, script, state, stdin)
    }

    /// Runs one command given as arguments (after prefixes such as `env` or `sudo` are
    /// stripped): builtins change the state; the rest is checked by what it is.
    pub fn run(&mut self, args: &[Arg], state: State, stdin: &Stdin) -> Flow {
        (self.walk.run)(self, args, state, stdin)
    }

    /// `path` resolved from every place the working directory may be: `None` when one of them
    /// is not known (and the path is relative).
    pub fn resolve_all(&self, path: &str, state: &State) -> Option<Vec<PathBuf>> {
        if path.starts_with('/') {
            return Some(vec![resolve(Path::new(path), Path::new("/"), &state.links)]);
        }
        let dirs = state.cwd.dirs()?;
        Some(dirs.iter().map(|d| resolve(Path::new(path), &d.physical, &state.links)).collect())
    }

    /// Whether `path` is inside the worktree from every place the working directory may be
    /// (false when wt cannot tell).
    pub fn inside(&self, path: Option<&str>, state: &State) -> bool {
        path.and_then(|p| self.resolve_all(p, state))
            .is_some_and(|all| all.iter().all(|p| self.wt.contains(p)))
    }

    /// A variable's value: as this command set it, else what the environment gives it, when
    /// wt can know that.
    pub fn variable(&self, name: &str, state: &State) -> Option<String> {
        if let Some(value) = state.var(name) {
            return value.known().map(str::to_owned);
        }
        match name {
            "PWD" => state.cwd.single().map(|d| d.logical.display().to_string()),
            "HOME" => self.home.as_ref().map(|h| h.display().to_string()),
            "WT_WORKTREE" => Some(self.root()),
            "IFS" => Some(" \t\n".into()),
            "CDPATH" => Some(self.env_cdpath.clone().unwrap_or_default()),
            _ => None,
        }
    }

    /// `break N` / `continue N`: the inner N-1 loops end in this state; the N-th ends in it
    /// (`break`) or starts its next round from it (`continue`).
    pub fn leave_loops(&mut self, levels: usize, state: &State, continues: bool) {
        let levels = levels.max(1);
        for (i, exits) in self.loops.iter_mut().rev().take(levels).enumerate() {
            let slot = if continues && i + 1 == levels { &mut exits.continues } else { &mut exits.breaks };
            *slot = join(slot.take(), Some(state.clone()));
        }
    }
}
