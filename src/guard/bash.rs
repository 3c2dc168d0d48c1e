//! The Bash policy: walk every simple command of the parsed line, track the working directory
//! through `cd` (scoped like the shell scopes it) and known variables, and deny what would act
//! outside the worktree or on the repository's shared state.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use super::commands::{self, Prefixes};
use super::decision::Decision;
use super::paths::{Place, Worktree};
use super::shell::{self, Node, RedirectKind, Script, Segment, SimpleCommand, Word};
use super::vcs;

/// A word as the policy sees it: its value when wt can know it, and how it was written.
#[derive(Debug, Clone)]
pub struct Arg {
    pub value: Option<String>,
    pub shown: String,
}

impl Arg {
    pub fn is(&self, text: &str) -> bool {
        self.value.as_deref() == Some(text)
    }

    pub fn text(&self) -> &str {
        self.value.as_deref().unwrap_or("")
    }
}

#[derive(Debug, Clone)]
pub struct State {
    pub cwd: PathBuf,
    vars: HashMap<String, String>,
    dirs: Vec<PathBuf>,
}

pub struct Checker<'a> {
    pub wt: &'a Worktree,
    pub branch: Option<&'a str>,
    denials: Vec<String>,
    depth: usize,
}

/// Nested `bash -c`, `eval` and heredoc-fed shells beyond this are refused.
const MAX_DEPTH: usize = 8;

pub fn check_bash(command: &str, cwd: &Path, wt: &Worktree, branch: Option<&str>) -> Decision {
    let root = wt.root().display();
    let script = match shell::parse(command) {
        Ok(script) => script,
        Err(err) => {
            return Decision::Deny(format!(
                "wt guard could not follow this command ({err}); rewrite it as plain commands joined by \
                 `&&`, run inside the worktree {root}"
            ));
        }
    };
    let mut checker = Checker { wt, branch, denials: Vec::new(), depth: 0 };
    let mut state = State { cwd: cwd.to_owned(), vars: HashMap::new(), dirs: Vec::new() };
    checker.script(&script, &mut state);
    match checker.denials.len() {
        0 => Decision::Allow(format!("every command stays inside the worktree {root}")),
        1 => Decision::Deny(checker.denials.remove(0)),
        n => Decision::Deny(format!(
            "{} (and {} more refused in this command)",
            checker.denials.remove(0),
            n - 1
        )),
    }
}

impl Checker<'_> {
    /// Records a refusal; every reason names the worktree, so the agent knows where to work.
    pub fn deny(&mut self, reason: String) {
        let root = self.root();
        if reason.contains(&root) {
            self.denials.push(reason);
        } else {
            self.denials.push(format!("{reason} (this agent's worktree: {root})"));
        }
    }

    pub fn root(&self) -> String {
        self.wt.root().display().to_string()
    }

    fn script(&mut self, script: &Script, state: &mut State) {
        for item in &script.items {
            if item.isolated {
                self.node(&item.node, &mut state.clone());
            } else {
                self.node(&item.node, state);
            }
        }
    }

    fn node(&mut self, node: &Node, state: &mut State) {
        match node {
            Node::Command(command) => self.command(command, state),
            Node::Subshell(inner) => self.script(inner, &mut state.clone()),
            Node::Group(inner) => self.script(inner, state),
        }
    }

    /// Checks a script given as text (`bash -c`, `eval`, a heredoc fed to a shell).
    pub fn nested(&mut self, text: &str, state: &mut State, isolated: bool) {
        if self.depth >= MAX_DEPTH {
            self.deny("shells nested this deep cannot be checked; run the commands directly".into());
            return;
        }
        match shell::parse(text) {
            Ok(script) => {
                self.depth += 1;
                if isolated {
                    self.script(&script, &mut state.clone());
                } else {
                    self.script(&script, state);
                }
                self.depth -= 1;
            }
            Err(err) => self.deny(format!(
                "the inner command could not be followed ({err}); run it directly inside the worktree {}",
                self.root()
            )),
        }
    }

    fn command(&mut self, command: &SimpleCommand, state: &mut State) {
        let words = command.assignments.iter().map(|(_, w)| w).chain(&command.words);
        for word in words.chain(command.redirects.iter().map(|r| &r.target)) {
            for inner in word.substitutions() {
                self.script(inner, &mut state.clone());
            }
        }
        let args: Vec<Arg> = command.words.iter().map(|w| self.arg(w, state)).collect();
        for (name, value) in &command.assignments {
            if matches!(name.as_str(), "GIT_DIR" | "GIT_WORK_TREE" | "GIT_COMMON_DIR" | "GIT_INDEX_FILE") {
                self.deny(format!(
                    "{name}= points git at another repository than the worktree {}; run git inside the worktree \
                     without it",
                    self.root()
                ));
            }
            if args.is_empty() {
                match self.arg(value, state).value {
                    Some(known) => state.vars.insert(name.clone(), known),
                    None => state.vars.remove(name),
                };
            }
        }
        let mut stdin_script = None;
        for redirect in &command.redirects {
            match redirect.kind {
                RedirectKind::Write => {
                    let target = self.arg(&redirect.target, state);
                    let name = args.first().map_or("the redirection", |a| a.text()).to_owned();
                    self.write_target(&name, &target, state);
                }
                RedirectKind::Heredoc => stdin_script = redirect.body.clone(),
                RedirectKind::HereString => stdin_script = self.arg(&redirect.target, state).value,
                RedirectKind::Read | RedirectKind::Duplicate => {}
            }
        }
        if !args.is_empty() {
            self.run(&args, state, stdin_script.as_deref());
        }
    }

    pub fn run(&mut self, args: &[Arg], state: &mut State, stdin_script: Option<&str>) {
        let Some(Prefixes { start, cwd, from_stdin }) = commands::strip_prefixes(self, args, state) else {
            return;
        };
        let Some(first) = args.get(start) else { return };
        let Some(program) = first.value.as_deref() else {
            self.deny(format!(
                "the command name `{}` is not known before it runs; write the command out, inside the worktree {}",
                first.shown,
                self.root()
            ));
            return;
        };
        let name = program.rsplit('/').next().unwrap_or(program);
        let rest = &args[start + 1..];
        let mut local = state.clone();
        if let Some(dir) = cwd {
            local.cwd = dir;
        }
        match name {
            "cd" | "pushd" => self.cd(rest, state, name == "pushd"),
            "popd" => match state.dirs.pop() {
                Some(dir) => state.cwd = dir,
                None => self.deny("popd returns to a folder wt did not see; cd to a path instead".into()),
            },
            "eval" => {
                let text: Vec<&str> = rest.iter().map(|a| a.value.as_deref().unwrap_or("$UNKNOWN")).collect();
                self.nested(&text.join(" "), state, false);
            }
            "bash" | "sh" | "zsh" | "dash" | "ksh" => commands::shell(self, rest, &mut local, stdin_script),
            "git" => vcs::git(self, rest, &local),
            "gs" | "git-spice" => vcs::spice(self, rest, &local),
            "gh" => vcs::gh(self, rest),
            _ => commands::check(self, name, rest, &local, from_stdin),
        }
    }

    fn cd(&mut self, args: &[Arg], state: &mut State, push: bool) {
        let operands: Vec<&Arg> =
            args.iter().filter(|a| !matches!(a.text(), "-L" | "-P" | "-e" | "-@")).collect();
        let root = self.root();
        let Some(target) = operands.first() else {
            self.deny(format!(
                "cd with no folder goes home, outside the worktree {root}; cd to a folder inside it"
            ));
            return;
        };
        let Some(path) = target.value.as_deref().filter(|p| *p != "-") else {
            self.deny(format!(
                "cd {} goes to a folder wt cannot know (a variable, `~` or `-`); cd to a path inside the worktree {root}",
                target.shown
            ));
            return;
        };
        match self.wt.directory(path, &state.cwd) {
            Ok(dir) => {
                if push {
                    state.dirs.push(state.cwd.clone());
                }
                state.cwd = dir;
            }
            Err(outside) => self.deny(format!(
                "cd {} leaves the worktree {root}; stay inside it (start commands with `cd {root} && …`)",
                outside.display()
            )),
        }
    }

    /// Denies a write to `target` unless it is inside the worktree (or a harmless device).
    pub fn write_target(&mut self, command: &str, target: &Arg, state: &State) {
        let root = self.root();
        let Some(path) = target.value.as_deref() else {
            self.deny(format!(
                "`{command}` writes to `{}`, a path wt cannot know before it runs (a variable, `~` or `$( )`); \
                 write to an explicit path inside the worktree {root}",
                target.shown
            ));
            return;
        };
        match self.wt.place(path, &state.cwd) {
            Place::Inside | Place::Device => {}
            Place::GitLink => self.deny(format!(
                "`{command}` would write the worktree's .git link in {root}; leave it alone (git commands inside \
                 the worktree work without it)"
            )),
            Place::Outside(real) => self.deny(format!(
                "`{command}` would write {}, outside the worktree {root}; write inside it instead",
                real.display()
            )),
        }
    }

    pub fn arg(&self, word: &Word, state: &State) -> Arg {
        let mut value = Some(String::new());
        let mut shown = String::new();
        for segment in &word.segments {
            match segment {
                Segment::Literal(text) => {
                    shown.push_str(text);
                    if let Some(v) = value.as_mut() {
                        v.push_str(text);
                    }
                }
                Segment::Variable(name) => {
                    shown.push_str(&format!("${name}"));
                    let known = match name.as_str() {
                        "PWD" => Some(state.cwd.display().to_string()),
                        "WT_WORKTREE" => Some(self.root()),
                        _ => state.vars.get(name).cloned(),
                    };
                    value = value.zip(known).map(|(v, k)| v + &k);
                }
                Segment::Substitution(_) => {
                    shown.push_str("$(…)");
                    value = None;
                }
                Segment::Tilde(user) => {
                    shown.push_str(&format!("~{user}"));
                    value = None;
                }
            }
        }
        Arg { value, shown }
    }
}
