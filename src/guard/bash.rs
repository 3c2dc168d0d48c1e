//! The Bash policy: walk every command of the parsed line, following the working directory and
//! variables along the paths the shell may take (`&&`, `||`, `if`, loops, a `cd` that may
//! fail), and answer with a [`Verdict`]: deny what would act outside the worktree or on what the
//! engine owns, call "unclear" what wt cannot follow, and "understood" the rest. The work is
//! bounded (see `limits`): past a cap the command is denied, never followed for longer.
//!
//! This file is the top of the policy: `check_bash` installs the walk in the checker (`flow` for
//! the structure of a script, `run` here for each command, which hands it to its rule) and
//! starts it. Below it, the rules (`builtins`, `shells`, `prefixes`, `vcs`, `forge`,
//! `commands` and the writers behind it) build on the shared context (`checker`, `state`,
//! `arg`, `targets`) and reach nested scripts through the checker, never through this file.

use std::path::Path;

use super::arg::Arg;
use super::checker::{Checker, Stdin, Walk};
use super::limits::MAX_COMMAND_BYTES;
use super::paths::{Worktree, real_path};
use super::state::{Cwd, Dir, Flow, State};
use super::verdict::Verdict;
use super::{builtins, commands, forge, prefixes, shells, vcs};

/// How the checker reaches the walk: scripts through `flow`, commands through `run`.
const WALK: Walk = Walk { script: |checker, script, state, stdin| checker.shape(script, state, stdin), run };

pub fn check_bash(command: &str, cwd: &Path, wt: &Worktree, branch: Option<&str>) -> Verdict {
    let mut checker = Checker::new(wt, branch, WALK);
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

/// Runs one command given as arguments (after prefixes such as `env` or `sudo` are
/// stripped): builtins change the state; the rest is checked by what it is.
fn run(checker: &mut Checker, args: &[Arg], state: State, stdin: &Stdin) -> Flow {
    let Some(prefix) = prefixes::strip_prefixes(checker, args, &state) else { return Flow::both(state) };
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
        checker.unclear(format!("the command name `{}` is not known before it runs", first.shown));
        return Flow::both(state);
    };
    if state.is_function(program) {
        checker.unclear(format!("`{program}` runs a function, which wt checked only where it was defined"));
        return Flow::both(state);
    }
    let name = program.rsplit('/').next().unwrap_or(program);
    if program.contains('/') {
        checker.run_script(program, first, &state, true);
    }
    let end = |flow: Flow| if prefix.replaces_shell { Flow::none() } else { flow };
    if prefix.keeps_shell && builtins::is_builtin(name) {
        return end(builtins::run(checker, name, &rest, state, stdin));
    }
    let mut local = prefix.state.clone().unwrap_or_else(|| state.clone());
    if let Some(cwd) = prefix.cwd.clone() {
        local.cwd = cwd;
    }
    let mut state = state;
    state.files_changed |= !commands::is_read_only(name);
    match name {
        _ if shells::is_shell(name) => shells::shell(checker, name, &rest, &local, stdin),
        "git" => vcs::git(checker, &rest, &local),
        "gs" | "git-spice" => forge::spice(checker, &rest, &local),
        "gh" => forge::gh(checker, &rest),
        _ if builtins::is_builtin(name) => {
            builtins::run(checker, name, &rest, local, stdin);
        }
        _ => {
            for (link, target) in commands::check(checker, name, &rest, &local, stdin) {
                state.add_link(link, target);
            }
        }
    }
    end(Flow::both(state))
}
