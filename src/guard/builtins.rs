//! Shell builtins that change what the policy follows: `cd`, `pushd`, `popd` (the working
//! directory), declarations and other setters of variables (`export`, `read`, `unset`, …),
//! builtins that run text as commands (`eval`, `source`, `trap`, `alias`), those that end a path
//! (`exit`, `break`), and `history`, which can write its list to a file.

use super::arg::Arg;
use super::checker::{Checker, Stdin};
use super::state::{Cwd, Flow, State, Value};

/// Builtins whose `NAME=value` arguments are assignments.
pub fn is_declaration(name: &str) -> bool {
    matches!(name, "export" | "declare" | "typeset" | "local" | "readonly")
}

pub fn is_builtin(name: &str) -> bool {
    is_declaration(name)
        || matches!(
            name,
            "cd" | "pushd"
                | "popd"
                | "dirs"
                | "read"
                | "mapfile"
                | "readarray"
                | "printf"
                | "getopts"
                | "unset"
                | "let"
                | "eval"
                | "source"
                | "."
                | "trap"
                | "alias"
                | "unalias"
                | "shopt"
                | "set"
                | "enable"
                | "hash"
                | "exit"
                | "return"
                | "logout"
                | "break"
                | "continue"
                | "fc"
                | "history"
                | "true"
                | "false"
                | ":"
        )
}

/// Options of `shopt` that change nothing wt follows.
const HARMLESS_SHOPTS: &[&str] = &[
    "nullglob",
    "failglob",
    "globstar",
    "extglob",
    "nocasematch",
    "checkwinsize",
    "histappend",
    "cmdhist",
    "inherit_errexit",
];

pub fn run(checker: &mut Checker, name: &str, args: &[Arg], state: State, stdin: &Stdin) -> Flow {
    match name {
        "cd" | "pushd" => cd(checker, args, state, name == "pushd"),
        "popd" => popd(checker, state),
        _ if is_declaration(name) => declare(checker, name, args, state),
        "read" | "mapfile" | "readarray" | "printf" | "getopts" | "unset" | "let" => {
            setters(checker, name, args, state)
        }
        "eval" => match known_text(args) {
            Some(text) => checker.nested(&text, state),
            None => {
                checker.unclear("`eval` runs text wt cannot know before it runs".into());
                Flow::both(state)
            }
        },
        "source" | "." => source(checker, args, state, stdin),
        "trap" => {
            trap(checker, args, &state);
            Flow::both(state)
        }
        "alias" => {
            for value in args.iter().filter_map(|a| a.value.as_deref()?.split_once('=')) {
                checker.nested(value.1, state.clone());
            }
            Flow::both(state)
        }
        "history" => {
            history(checker, args, &state);
            Flow::both(state)
        }
        "shopt" | "set" | "enable" | "hash" | "fc" => {
            shell_options(checker, name, args);
            Flow::both(state)
        }
        "exit" | "return" | "logout" => Flow::none(),
        "break" | "continue" => {
            let levels = args.first().and_then(|a| a.value.as_deref()?.parse().ok()).unwrap_or(1);
            checker.leave_loops(levels, &state, name == "continue");
            Flow::none()
        }
        "true" | ":" => Flow { ok: Some(state), fail: None },
        "false" => Flow { ok: None, fail: Some(state) },
        _ => Flow::both(state),
    }
}

/// The arguments joined by spaces, when all are known (`eval`, `trap`).
fn known_text(args: &[Arg]) -> Option<String> {
    let words: Option<Vec<&str>> = args.iter().map(|a| a.value.as_deref()).collect();
    words.map(|w| w.join(" "))
}

/// `cd [-L|-P] [dir]`, `pushd dir`: the new working directory must be inside the worktree in
/// every place it may be — logically (`$PWD` with `..` folded, bash's default) and physically
/// (symlinks followed, as `cd -P` and bash's fallback do). The `cd` may fail, leaving the
/// directory as it was: that is the failure path.
fn cd(checker: &mut Checker, args: &[Arg], state: State, push: bool) -> Flow {
    let (physical, operands) = cd_options(args);
    let root = checker.root();
    let target = match operands.first() {
        None => Arg { value: checker.variable("HOME", &state), shown: "~".into(), glob: false },
        Some(arg) if arg.is("-") => {
            Arg { value: checker.variable("OLDPWD", &state), shown: "-".into(), glob: false }
        }
        Some(arg) => arg.clone(),
    };
    let Some(path) = target.exact().map(str::to_owned) else {
        checker.unclear(format!("cd {} goes to a folder wt cannot know before it runs", target.shown));
        let mut moved = state.clone();
        moved.cwd = Cwd::Unknown;
        return Flow { ok: Some(moved), fail: Some(state) };
    };
    if path.is_empty() {
        return Flow::both(state);
    }
    let dirs = match super::directories::change(checker, &path, &state, physical) {
        Ok(dirs) => dirs,
        Err(Some(outside)) => {
            let how = if operands.is_empty() { "cd with no folder goes home, which" } else { "cd" };
            checker.deny(format!(
                "{how} {} leaves the worktree {root}; stay inside it (start commands with `cd {root} && …`)",
                outside.display()
            ));
            return Flow { ok: None, fail: Some(state) };
        }
        Err(None) => {
            checker.unclear(format!("cd {path} goes to a folder wt could not follow"));
            Cwd::Unknown
        }
    };
    // A folder that is there and open now stays so, unless a command before may have changed
    // files: only then can this `cd` fail and leave the directory where it was.
    let certain =
        !state.files_changed && dirs.dirs().is_some_and(|all| all.iter().all(|d| enterable(&d.physical)));
    let mut moved = state.clone();
    if push {
        moved.push_dir();
    }
    let old = state.cwd.single().map(|d| d.logical.display().to_string());
    moved.set("OLDPWD", Value::of(old.as_deref()));
    moved.cwd = dirs;
    Flow { ok: Some(moved), fail: (!certain).then_some(state) }
}

/// `cd`'s options (`-L`, `-P`, the last one wins) and its operands.
fn cd_options(args: &[Arg]) -> (bool, Vec<Arg>) {
    let mut physical = false;
    let mut operands = Vec::new();
    let mut options_done = false;
    for arg in args {
        match arg.value.as_deref() {
            Some("--") if !options_done => options_done = true,
            Some(flag)
                if !options_done
                    && flag.len() > 1
                    && flag.starts_with('-')
                    && flag[1..].chars().all(|c| "LPe@".contains(c)) =>
            {
                physical = flag.ends_with('P') || (physical && !flag.contains('L'));
            }
            _ => operands.push(arg.clone()),
        }
    }
    (physical, operands)
}

/// Whether `dir` is a folder this process may enter (the agent's shell runs as the same user).
fn enterable(dir: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else { return false };
    // SAFETY: `path` is a valid NUL-terminated string that outlives the call.
    dir.is_dir() && unsafe { libc::access(path.as_ptr(), libc::X_OK) } == 0
}

fn popd(checker: &mut Checker, state: State) -> Flow {
    let mut moved = state.clone();
    match moved.pop_dir() {
        Some(cwd) => moved.cwd = cwd,
        None => {
            checker.unclear("popd returns to a folder wt did not see".into());
            moved.cwd = Cwd::Unknown;
        }
    }
    Flow { ok: Some(moved), fail: Some(state) }
}

/// `export`, `declare`, `typeset`, `local`, `readonly`: their `NAME=value` arguments assign.
fn declare(checker: &mut Checker, name: &str, args: &[Arg], state: State) -> Flow {
    let mut state = state;
    let mut untracked = false;
    let mut nameref = false;
    for arg in args {
        let text = arg.value.as_deref();
        if let Some(flags) = text.filter(|t| t.len() > 1 && t.starts_with(['-', '+']) && !t.contains('=')) {
            untracked |= flags.contains(['a', 'A', 'i']);
            nameref |= name != "export" && flags.contains('n');
            continue;
        }
        let assignment = text.unwrap_or(&arg.shown);
        let Some((variable, value)) = assignment.split_once('=') else { continue };
        let variable = variable.trim_end_matches('+');
        if !is_name(variable) {
            checker.unclear(format!("`{name}` sets a variable wt cannot name before it runs"));
            continue;
        }
        let value = match text {
            Some(_) if !untracked && !nameref => Value::Known(value.into()),
            _ => Value::Unknown,
        };
        if nameref {
            checker.environment(value_name(assignment), &Value::Unknown, &state);
            checker.unclear(format!(
                "`{name} -n` makes `{variable}` another name for a variable; wt does not follow that"
            ));
        }
        checker.environment(variable, &value, &state);
        state.set(variable, value);
    }
    Flow::both(state)
}

fn value_name(assignment: &str) -> &str {
    assignment.split_once('=').map_or("", |(_, v)| v)
}

/// `read`, `mapfile`, `printf -v`, `getopts`, `unset`, `let`: the variables they set.
fn setters(checker: &mut Checker, name: &str, args: &[Arg], state: State) -> Flow {
    let mut state = state;
    let value_options: &[&str] = match name {
        "read" => &["-a", "-d", "-i", "-n", "-N", "-p", "-t", "-u"],
        "mapfile" | "readarray" => &["-d", "-n", "-O", "-s", "-u", "-C", "-c"],
        _ => &[],
    };
    let mut names = Vec::new();
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let text = arg.value.as_deref().unwrap_or("");
        match (name, text) {
            ("read", "-a") | ("printf", "-v") => names.extend(args.get(i + 1).and_then(|a| a.value.clone())),
            ("mapfile" | "readarray", "-C") => {
                checker.unclear(format!("`{name} -C` runs a command wt does not follow"))
            }
            ("getopts", _) if i == 1 => names.push(text.to_owned()),
            ("let", _) => names
                .extend(text.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).map(str::to_owned)),
            ("printf" | "getopts", _) => {}
            _ if value_options.contains(&text) => i += 1,
            _ if text.starts_with('-') => {}
            _ => names.push(text.to_owned()),
        }
        i += 1;
    }
    match name {
        "read" if names.is_empty() => names.push("REPLY".into()),
        "mapfile" | "readarray" if names.is_empty() => names.push("MAPFILE".into()),
        "getopts" => names.extend(["OPTARG".to_owned(), "OPTIND".to_owned()]),
        _ => {}
    }
    let value = if name == "unset" { Value::Known("".into()) } else { Value::Unknown };
    for variable in names.iter().filter(|n| is_name(n)) {
        checker.environment(variable, &value, &state);
        state.set(variable, value.clone());
    }
    Flow::both(state)
}

/// `source FILE` / `. FILE`: the file runs in this shell. When wt reads it (`scripts`: one this
/// command wrote, or a shell script inside the worktree), what follows starts from where it
/// leaves the shell; otherwise any variable may have changed. One outside, or a command's output
/// (`source <(…)`), is not followed.
fn source(checker: &mut Checker, args: &[Arg], state: State, stdin: &Stdin) -> Flow {
    let mut state = state;
    let Some(file) = args.first() else { return Flow::both(state) };
    match file.exact() {
        Some("/dev/stdin" | "/proc/self/fd/0" | "/dev/fd/0") => {
            if let Stdin::Text(text) = stdin {
                return checker.nested(text, state);
            }
            checker.unclear("`source` runs its input, which wt cannot see".into());
        }
        Some(path) if path.starts_with("/dev/fd/") || path.starts_with("/proc/") => {
            checker.unclear("`source` runs a command's output, which wt cannot see before it runs".into());
        }
        _ => {
            if let Some(end) = checker.run_script("source", file, &state, false).and_then(Flow::end) {
                return Flow::both(end);
            }
        }
    }
    state.lose_vars();
    Flow::both(state)
}

/// `trap 'commands' SIGNAL…`: the commands run later (on exit or a signal).
fn trap(checker: &mut Checker, args: &[Arg], state: &State) {
    let Some(action) = args.first() else { return };
    if args.len() < 2 || matches!(action.value.as_deref(), Some("-" | "" | "-p" | "-l" | "--")) {
        return;
    }
    match action.value.as_deref() {
        Some(text) => {
            checker.nested(text, state.clone());
        }
        None => checker.unclear(format!("`trap` sets {} to run later, which wt cannot know", action.shown)),
    }
}

/// `history -w [FILE]`, `history -a [FILE]` write the history list to FILE, by default
/// `$HISTFILE` (unset in a shell that is not interactive: bash then writes `~/.history`).
/// `-r` and `-n` only read.
fn history(checker: &mut Checker, args: &[Arg], state: &State) {
    let is_option = |a: &Arg| a.text().len() > 1 && a.text().starts_with('-');
    if !args.iter().any(|a| is_option(a) && a.text()[1..].contains(['w', 'a'])) {
        return;
    }
    let target = match args.iter().find(|a| !is_option(a)) {
        Some(file) => file.clone(),
        None => match checker.variable("HISTFILE", state).filter(|f| !f.is_empty()) {
            Some(file) => Arg { value: Some(file), shown: "$HISTFILE".into(), glob: false },
            None => Arg {
                value: checker.variable("HOME", state).map(|home| format!("{home}/.history")),
                shown: "~/.history".into(),
                glob: false,
            },
        },
    };
    checker.write_target("history", &target, state);
}

/// `shopt`, `set`, `enable`, `hash`, `fc`: options that change how later commands are read.
fn shell_options(checker: &mut Checker, name: &str, args: &[Arg]) {
    let texts: Vec<&str> = args.iter().map(|a| a.value.as_deref().unwrap_or("?")).collect();
    let changes = match name {
        "shopt" => {
            let setting = texts.iter().any(|t| matches!(*t, "-s" | "-u"));
            setting && texts.iter().any(|t| !t.starts_with('-') && !HARMLESS_SHOPTS.contains(t))
        }
        "set" => texts.iter().any(|t| (t.starts_with(['-', '+']) && t[1..].contains('k')) || *t == "keyword"),
        "enable" => texts.iter().any(|t| t.starts_with('-') && t.contains(['f', 'n'])),
        "hash" => texts.iter().any(|t| t.starts_with('-') && t.contains('p')),
        _ => true,
    };
    if changes {
        checker.unclear(format!("`{name} {}` changes how bash reads later commands", texts.join(" ")));
    }
}

pub fn is_name(text: &str) -> bool {
    text.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && text.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}
