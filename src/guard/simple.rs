//! One simple command, in the order bash runs its parts: command substitutions, the words
//! (expanded), assignments (the command's environment only, when a command follows),
//! redirections (writes checked, heredocs and here-strings read as its input), then the command
//! itself, handed to the walk's `run`. Substitutions are scripts of their own, checked through
//! the checker like any nested script.

use super::arg::Arg;
use super::builtins;
use super::checker::{Checker, Stdin};
use super::shell::{self, RedirectKind, Segment, SimpleCommand, Word};
use super::state::{Flow, State, Value};
use super::written::Content;

impl Checker<'_> {
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
        let mut local = state.clone();
        let stdin = self.redirects(&command.redirects, &mut local, stdin, args.first());
        self.writes.writing = Content::Unknown;
        for assignment in &command.assignments {
            let value = self.assignment_value(assignment, &local);
            self.environment(&assignment.name, &value, &local);
            if is_last_job(assignment) {
                local.set_job(&assignment.name);
            } else {
                local.set(&assignment.name, value);
            }
        }
        let bare_exec = args.len() == 1 && args[0].is("exec");
        let flow = if args.is_empty() { Flow::both(local) } else { self.run(&args, local, &stdin) };
        // Redirections are the command's own, except those of a bare `exec`.
        let flow = if command.redirects.is_empty() || bare_exec {
            flow
        } else {
            flow.map(|mut s| {
                s.keep_descriptors_of(&state);
                s
            })
        };
        // Assignments before a command are its environment only (alone, they stay).
        if command.assignments.is_empty() || args.is_empty() {
            return flow;
        }
        flow.map(|mut s| {
            for assignment in &command.assignments {
                s.set(&assignment.name, state.var(&assignment.name).unwrap_or(Value::Unknown));
            }
            s
        })
    }

    /// Every command substitution in the command's words runs first, in a subshell.
    pub fn substitutions(&mut self, command: &SimpleCommand, state: &State, stdin: &Stdin) {
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

    /// Checks the redirections, in order: writes go through `write_target`, and what each opens
    /// on its descriptor is kept in `state` (a later `/dev/fd/N/…` goes through it); returns
    /// what the command reads on its input.
    pub fn redirects(
        &mut self,
        redirects: &[shell::Redirect],
        state: &mut State,
        stdin: &Stdin,
        program: Option<&Arg>,
    ) -> Stdin {
        let mut input = stdin.clone();
        for redirect in redirects {
            let target = self.expand_one(&redirect.target, state);
            match redirect.kind {
                RedirectKind::Write => {
                    let name = program.map_or("the redirection", |a| a.shown.as_str()).to_owned();
                    self.write_target(&name, &target, state);
                }
                RedirectKind::Heredoc if redirect.fd == 0 => {
                    let body = redirect.body.as_ref().and_then(|b| self.expand_one(b, state).value);
                    input = body.map_or(Stdin::Unknown, Stdin::Text);
                }
                RedirectKind::HereString if redirect.fd == 0 => {
                    input = target.value.clone().map_or(Stdin::Unknown, |t| Stdin::Text(t + "\n"));
                }
                RedirectKind::Read | RedirectKind::Duplicate if redirect.fd == 0 => input = Stdin::Unknown,
                _ => {}
            }
            let opened = self.open_descriptor(redirect, &target, state);
            state.open(redirect.fd, opened.clone());
            if redirect.both_outputs {
                state.open(2, opened);
            }
        }
        input
    }

    /// What a command prints when it is literal text (`echo '…'`, `printf '…'`, `cat <<EOF`):
    /// the script a shell reading it would run.
    pub fn output_of_command(&mut self, command: &SimpleCommand, state: &State) -> Stdin {
        let args = self.expand_words(&command.words, state, false);
        self.assigned.clear();
        let Some(words) = args.iter().map(|a| a.exact().map(str::to_owned)).collect::<Option<Vec<_>>>()
        else {
            return Stdin::Unknown;
        };
        match words.first().map(|w| w.rsplit('/').next().unwrap_or(w)) {
            Some("echo") => {
                let is_flag = |w: &&String| {
                    w.len() > 1 && w.starts_with('-') && w[1..].chars().all(|c| "neE".contains(c))
                };
                let flags: Vec<&String> = words[1..].iter().take_while(is_flag).collect();
                if flags.iter().any(|f| f.contains('e')) {
                    return Stdin::Unknown;
                }
                let newline = if flags.iter().any(|f| f.contains('n')) { "" } else { "\n" };
                Stdin::Text(words[1 + flags.len()..].join(" ") + newline)
            }
            Some("printf") if words.len() == 2 && !words[1].contains(['%', '\\']) => {
                Stdin::Text(words[1].clone())
            }
            Some("cat") if words.len() == 1 => {
                let body = command
                    .redirects
                    .iter()
                    .rev()
                    .find(|r| matches!(r.kind, RedirectKind::Heredoc | RedirectKind::HereString));
                match body {
                    Some(r) if r.kind == RedirectKind::Heredoc => {
                        let text = r.body.as_ref().and_then(|b| self.expand_one(b, state).value);
                        text.map_or(Stdin::Unknown, Stdin::Text)
                    }
                    Some(r) => self
                        .expand_one(&r.target, state)
                        .value
                        .map_or(Stdin::Unknown, |t| Stdin::Text(t + "\n")),
                    None => Stdin::Unknown,
                }
            }
            _ => Stdin::Unknown,
        }
    }
}

/// `NAME=$!`: the process id of the last job this command started in the background.
fn is_last_job(assignment: &shell::Assignment) -> bool {
    !assignment.append
        && !assignment.array
        && matches!(assignment.words.as_slice(), [word] if matches!(word.segments.as_slice(), [Segment::Variable { name, .. }] if name == "!"))
}
