//! The Bash policy: walk every command of the parsed line, following the working directory and
//! variables along the paths the shell may take (`&&`, `||`, `if`, loops, a `cd` that may
//! fail), and answer with a [`Verdict`]: deny what would act outside the worktree or on what the
//! engine owns, call "unclear" what wt cannot follow, and "understood" the rest. The work is
//! bounded (see `limits`): past a cap the command is denied, never followed for longer.

use std::path::{Path, PathBuf};

use super::arg::Arg;
use super::limits::{Budget, Limit, MAX_COMMAND_BYTES, MAX_SHELL_DEPTH};
use super::paths::{Worktree, real_path};
use super::shell::{self, RedirectKind, Script, SimpleCommand, Word};
use super::state::{Cwd, Dir, Flow, State, Value};
use super::verdict::Verdict;
use super::written::Content;
use super::{builtins, commands, forge, prefixes, shells, vcs};

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

pub struct Checker<'a> {
    pub wt: &'a Worktree,
    pub branch: Option<&'a str>,
    /// The agent's `$HOME`, as the hook's environment has it.
    pub home: Option<PathBuf>,
    pub env_cdpath: Option<String>,
    pub budget: Budget,
    /// Variables `${X:=…}` set while expanding the current command.
    pub assigned: Vec<String>,
    denials: Vec<String>,
    unclear: Vec<String>,
    dropped: (usize, usize),
    shells: usize,
    /// The loops being followed, innermost last.
    pub(super) loops: Vec<super::flow::LoopExits>,
    /// Files this command writes inside the worktree, and what it writes in them.
    pub(super) writes: super::written::Writes,
}

pub fn check_bash(command: &str, cwd: &Path, wt: &Worktree, branch: Option<&str>) -> Verdict {
    let mut checker = Checker::new(wt, branch);
    if command.len() > MAX_COMMAND_BYTES {
        checker.deny(format!(
            "this command is {} KiB, more than the {} KiB wt guard reads; write it to a script file inside the \
             worktree and run that, or split it into several commands",
            command.len() / 1024,
            MAX_COMMAND_BYTES / 1024
        ));
        return checker.verdict();
    }
    let start = State::new(Cwd::one(Dir { logical: cwd.to_owned(), physical: real_path(cwd) }));
    checker.text(command, start);
    checker.verdict()
}

impl<'a> Checker<'a> {
    fn new(wt: &'a Worktree, branch: Option<&'a str>) -> Self {
        Checker {
            wt,
            branch,
            home: std::env::var_os("HOME").map(PathBuf::from),
            env_cdpath: std::env::var("CDPATH").ok(),
            budget: Budget::new(),
            assigned: Vec::new(),
            denials: Vec::new(),
            unclear: Vec::new(),
            dropped: (0, 0),
            shells: 0,
            loops: Vec::new(),
            writes: Default::default(),
        }
    }

    fn verdict(mut self) -> Verdict {
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
    fn text(&mut self, text: &str, state: State) -> Flow {
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

    /// One simple command: its substitutions, words, assignments, redirections, then the
    /// command itself.
    pub fn command(&mut self, command: &SimpleCommand, state: State, stdin: &Stdin) -> Flow {
        if !self.budget.step() {
            return Flow::both(state);
        }
        self.substitutions(command, &state, stdin);
        let declaration =
            command.words.first().and_then(Word::literal).is_some_and(|w| builtins::is_declaration(&w));
        let args = self.expand_words(&command.words, &state, declaration);
        let mut state = state;
        for name in std::mem::take(&mut self.assigned) {
            state.set(&name, Value::Unknown);
        }
        if command.redirects.iter().any(|r| r.kind == RedirectKind::Write) {
            self.writes.writing = match self.output_of_command(command, &state) {
                Stdin::Text(text) => Content::Text(text),
                _ => Content::Unknown,
            };
        }
        let stdin = self.redirects(&command.redirects, &state, stdin, args.first());
        self.writes.writing = Content::Unknown;
        let mut local = state.clone();
        for assignment in &command.assignments {
            let value = self.assignment_value(assignment, &local);
            self.environment(&assignment.name, &value, &local);
            local.set(&assignment.name, value);
        }
        if args.is_empty() {
            return Flow::both(local);
        }
        let flow = self.run(&args, local, &stdin);
        // Assignments before a command are its environment only.
        let restore = |s: Option<State>| {
            s.map(|mut s| {
                for assignment in &command.assignments {
                    s.set(&assignment.name, state.var(&assignment.name).unwrap_or(Value::Unknown));
                }
                s
            })
        };
        if command.assignments.is_empty() {
            flow
        } else {
            Flow { ok: restore(flow.ok), fail: restore(flow.fail) }
        }
    }

    /// Every command substitution in the command's words runs first, in a subshell.
    pub(super) fn substitutions(&mut self, command: &SimpleCommand, state: &State, stdin: &Stdin) {
        let words = command.assignments.iter().flat_map(|a| &a.words).chain(&command.words);
        let redirects = command.redirects.iter().flat_map(|r| std::iter::once(&r.target).chain(&r.body));
        for word in words.chain(redirects) {
            self.arithmetic(word, state);
            for inner in word.substitutions() {
                self.script(inner, state.clone(), stdin);
            }
        }
    }

    fn assignment_value(&mut self, assignment: &shell::Assignment, state: &State) -> Value {
        if assignment.array {
            return Value::Unknown;
        }
        let Some(word) = assignment.words.first() else { return Value::Unknown };
        let value = self.expand_one(word, state).value;
        let value = match (assignment.append, value) {
            (false, value) => value,
            (true, Some(tail)) => self.variable(&assignment.name, state).map(|head| head + &tail),
            (true, None) => None,
        };
        match value {
            Some(v) if self.budget.expand(v.len(), v.len()) => Value::Known(v.into()),
            _ => Value::Unknown,
        }
    }

    /// Checks the redirections: writes go through `write_target`; returns what the command
    /// reads on its input.
    pub fn redirects(
        &mut self,
        redirects: &[shell::Redirect],
        state: &State,
        stdin: &Stdin,
        program: Option<&Arg>,
    ) -> Stdin {
        let mut input = stdin.clone();
        for redirect in redirects {
            match redirect.kind {
                RedirectKind::Write => {
                    let target = self.expand_one(&redirect.target, state);
                    let name = program.map_or("the redirection", |a| a.shown.as_str()).to_owned();
                    self.write_target(&name, &target, state);
                }
                RedirectKind::Heredoc => {
                    let body = redirect.body.as_ref().and_then(|b| self.expand_one(b, state).value);
                    input = body.map_or(Stdin::Unknown, Stdin::Text);
                }
                RedirectKind::HereString => {
                    let text = self.expand_one(&redirect.target, state).value;
                    input = text.map_or(Stdin::Unknown, |t| Stdin::Text(t + "\n"));
                }
                RedirectKind::Read => input = Stdin::Unknown,
                RedirectKind::Duplicate => {}
            }
        }
        input
    }

    /// Runs one command given as arguments (after prefixes such as `env` or `sudo` are
    /// stripped): builtins change the state; the rest is checked by what it is.
    pub fn run(&mut self, args: &[Arg], state: State, stdin: &Stdin) -> Flow {
        let Some(prefix) = prefixes::strip_prefixes(self, args, &state) else { return Flow::both(state) };
        let Some(first) = args.get(prefix.start) else { return Flow::both(state) };
        let mut rest = args[prefix.start + 1..].to_vec();
        if let Some(replace) = &prefix.replace {
            rest.iter_mut()
                .filter(|a| a.value.as_deref().is_some_and(|v| v.contains(replace.as_str())))
                .for_each(|a| a.value = None);
        }
        if prefix.from_stdin {
            rest.push(Arg { value: None, shown: "<arguments from xargs' input>".into(), glob: false });
        }
        let Some(program) = first.exact() else {
            self.unclear(format!("the command name `{}` is not known before it runs", first.shown));
            return Flow::both(state);
        };
        if state.is_function(program) {
            self.unclear(format!("`{program}` runs a function, which wt checked only where it was defined"));
            return Flow::both(state);
        }
        let name = program.rsplit('/').next().unwrap_or(program);
        if program.contains('/') {
            self.run_written(program, first, &state, true);
        }
        let end = |flow: Flow| if prefix.replaces_shell { Flow::none() } else { flow };
        if prefix.keeps_shell && builtins::is_builtin(name) {
            return end(builtins::run(self, name, &rest, state, stdin));
        }
        let mut local = prefix.state.clone().unwrap_or_else(|| state.clone());
        if let Some(cwd) = prefix.cwd.clone() {
            local.cwd = cwd;
        }
        let mut state = state;
        state.files_changed |= !commands::is_read_only(name);
        match name {
            _ if shells::is_shell(name) => shells::shell(self, name, &rest, &local, stdin),
            "git" => vcs::git(self, &rest, &local),
            "gs" | "git-spice" => forge::spice(self, &rest, &local),
            "gh" => forge::gh(self, &rest),
            _ if builtins::is_builtin(name) => {
                builtins::run(self, name, &rest, local, stdin);
            }
            _ => {
                for (link, target) in commands::check(self, name, &rest, &local) {
                    state.add_link(link, target);
                }
            }
        }
        end(Flow::both(state))
    }

    /// `path` resolved from every place the working directory may be: `None` when one of them
    /// is not known (and the path is relative).
    pub fn resolve_all(&self, path: &str, state: &State) -> Option<Vec<PathBuf>> {
        if path.starts_with('/') {
            return Some(vec![super::paths::resolve(Path::new(path), Path::new("/"), &state.links)]);
        }
        let dirs = state.cwd.dirs()?;
        Some(dirs.iter().map(|d| super::paths::resolve(Path::new(path), &d.physical, &state.links)).collect())
    }

    /// Checks a script that is given as a `Script` already (a substitution, a compound's part).
    pub fn script(&mut self, script: &Script, state: State, stdin: &Stdin) -> Flow {
        if !self.budget.ok() {
            return Flow::both(state);
        }
        self.shape(script, state, stdin)
    }
}
