//! Commands that run another command — `env`, `sudo`, `timeout`, `xargs`, `parallel`, `nohup`,
//! `flock`, `watch`, `uv run`, … — whose options must be read to find it, and which may set its
//! environment, directory or input, or run a script of their own.

use super::arg::Arg;
use super::checker::Checker;
use super::options::{self, Spec};
use super::state::{Cwd, State};

/// Where the real command starts after its prefixes, and what the prefixes change.
pub struct Prefixes {
    pub start: usize,
    /// The directory the command runs in (`env -C`, `sudo -D`, `direnv exec`).
    pub cwd: Option<Cwd>,
    /// `xargs`: the command gets more arguments, from input wt cannot see.
    pub from_stdin: bool,
    /// `xargs -I R`: arguments holding `R` are replaced by input.
    pub replace: Option<String>,
    /// Nothing but `command` or `builtin` comes first, so a builtin changes this shell.
    pub keeps_shell: bool,
    /// `exec`: nothing after the command runs in this shell.
    pub replaces_shell: bool,
    /// The state with the variables the prefixes set (`env X=1 …`).
    pub state: Option<State>,
}

const ENV: Spec = Spec::new(
    "i0v",
    "uCS",
    "ignore-environment null debug list-signal-handling",
    "unset chdir split-string default-signal ignore-signal block-signal",
);
const TIME: Spec = Spec::new("apvqV", "fo", "append portability verbose quiet", "format output");
const TIMEOUT: Spec = Spec::new("v", "sk", "preserve-status foreground verbose", "signal kill-after");
const SUDO: Spec = Spec::new(
    "AbEeHiKklnPSsVv",
    "CDghprtTUu",
    "preserve-env login shell non-interactive background",
    "user group host prompt chdir role type other-user close-from command-timeout",
);
const XARGS: Spec = Spec::new(
    "0prtx",
    "aEILnPsd",
    "null interactive no-run-if-empty verbose exit open-tty",
    "arg-file delimiter eof replace max-lines max-args max-procs max-chars process-slot-var",
);
const CHRT: Spec = Spec::new("abdfiomrRv", "TPD", "all-tasks batch fifo idle other rr verbose", "");
const FLOCK: Spec = Spec::new(
    "sxnuoFv",
    "wEc",
    "shared exclusive nonblock unlock verbose",
    "timeout conflict-exit-code command",
);
const WATCH: Spec =
    Spec::new("bcdeghtxpC", "nq", "beep color differences errexit exec no-title precise", "interval");
const TRACE: Spec = Spec::new("cCdDfFhiqrtTvVwxyzZ", "abeEIoOpPsSuUX", "", "output");
const SU: Spec = Spec::new("lmpfP", "cgGsw", "login preserve-environment pty", "command group shell");
const XVFB: Spec = Spec::new("a", "nsfe", "auto-servernum", "server-num server-args auth-file error-file");
/// GNU parallel's options that ordinary commands use (others make its options unknown).
const PARALLEL: Spec = Spec::new(
    "0kmqrtuvXx",
    "aCdEIjJLlnNPsSW",
    "null keep-order quote no-run-if-empty verbose ungroup group line-buffer lb dry-run dryrun tag bar \
     progress eta files will-cite no-notice xargs pipe pipepart shuf plus nonall onall fifo cat halt-on-error",
    "arg-file colsep delimiter eof replace jobs max-procs max-args max-replace-args max-lines max-chars \
     sshlogin workdir wd timeout retries tmpdir results joblog halt block env header tagstring rpl \
     sshloginfile slf memfree load delay",
);

/// Values of one `:::` list GNU parallel runs its command with, one by one, before wt stops
/// following them.
const MAX_PARALLEL_VALUES: usize = 16;

/// A prefix's options, and how many operands come before the command it runs.
fn prefix(name: &str) -> Option<(Spec, usize)> {
    Some(match name {
        "env" => (ENV, 0),
        "command" => (Spec::new("pvV", "", "", ""), 0),
        "exec" => (Spec::new("cl", "a", "", ""), 0),
        "builtin" | "nohup" | "chronic" | "unbuffer" | "fakeroot" | "dbus-run-session" | "busybox" => {
            (Spec::default(), 0)
        }
        "time" => (TIME, 0),
        "setsid" => (Spec::new("cfw", "", "ctty fork wait", ""), 0),
        "nice" => (Spec::new("", "n", "", "adjustment"), 0),
        "ionice" => (Spec::new("t", "cn", "ignore", "class classdata"), 0),
        "stdbuf" => (Spec::new("", "ioe", "", "input output error"), 0),
        "timeout" => (TIMEOUT, 1),
        "sudo" | "doas" => (SUDO, 0),
        "xargs" => (XARGS, 0),
        "taskset" => (Spec::new("ac", "", "all-tasks cpu-list", ""), 1),
        "chrt" => (CHRT, 1),
        "flock" => (FLOCK, 1),
        "watch" => (WATCH, 0),
        "strace" | "ltrace" => (TRACE, 0),
        "su" | "runuser" => (SU, 0),
        "xvfb-run" => (XVFB, 0),
        "parallel" => (PARALLEL, 0),
        _ => return None,
    })
}

/// `uv run …`, `poetry run …`, `bundle exec …`: tools whose subcommand runs a command.
fn runner(name: &str, sub: Option<&str>) -> bool {
    matches!(
        (name, sub),
        ("uv" | "poetry" | "pipenv" | "pdm" | "hatch" | "rye" | "devbox", Some("run"))
            | ("bundle" | "pnpm" | "yarn" | "mise" | "asdf" | "rbenv" | "pyenv", Some("exec"))
    )
}

pub fn strip_prefixes(checker: &mut Checker, args: &[Arg], state: &State) -> Option<Prefixes> {
    let mut p = Prefixes {
        start: 0,
        cwd: None,
        from_stdin: false,
        replace: None,
        keeps_shell: true,
        replaces_shell: false,
        state: None,
    };
    loop {
        let Some(name) = args.get(p.start)?.exact().map(|n| n.rsplit('/').next().unwrap_or(n).to_owned())
        else {
            return Some(p);
        };
        if runner(&name, args.get(p.start + 1).and_then(Arg::exact)) {
            let rest = &args[p.start + 2..];
            p.keeps_shell = false;
            if rest.first().is_some_and(|a| a.text().starts_with('-') && !a.is("--")) {
                checker.unclear(format!(
                    "`{name}` has options wt does not read; wt can only guess the command it runs"
                ));
                p.start = guess_command(args, p.start + 2);
                continue;
            }
            p.start += 2 + usize::from(rest.first().is_some_and(|a| a.is("--")));
            continue;
        }
        let Some((spec, operands)) = prefix(&name) else { return Some(p) };
        let rest = &args[p.start + 1..];
        let parsed = options::parse(rest, &spec, true);
        if let Some(why) = &parsed.unknown {
            checker.unclear(format!("`{name}`: {why}; wt can only guess the command it runs"));
            p.start = guess_command(args, p.start + 1);
            p.keeps_shell = false;
            continue;
        }
        let mut end = p.start + 1 + parsed.end;
        if !special_prefix(checker, &name, &parsed, args, &mut end, &mut p, state)? {
            return None;
        }
        p.keeps_shell &= matches!(name.as_str(), "command" | "builtin" | "exec");
        p.start = end + operands;
    }
}

/// Where the command probably starts when a prefix's options could not be read: the first
/// word from `from` that is not an option (still checked, so a deny in it is not missed).
fn guess_command(args: &[Arg], from: usize) -> usize {
    from + args
        .iter()
        .skip(from)
        .take_while(|a| a.value.as_deref().is_some_and(|t| t.starts_with('-')))
        .count()
}

/// What one prefix changes; `None` or `Some(false)` when nothing more runs as a command here
/// (the prefix ran a script, or only prints).
fn special_prefix(
    checker: &mut Checker,
    name: &str,
    parsed: &options::Parsed,
    args: &[Arg],
    end: &mut usize,
    p: &mut Prefixes,
    state: &State,
) -> Option<bool> {
    let first_operand = args.get(*end);
    match name {
        "env" => return env(checker, parsed, args, end, p, state),
        "sudo" | "doas" => {
            if let Some(dir) = parsed.values(&["-D", "--chdir"]).first() {
                p.cwd = Some(directory(checker, dir, state)?);
            }
        }
        "command" if parsed.has(&["-v", "-V"]) => return Some(false),
        "exec" => p.replaces_shell = true,
        "xargs" => {
            p.from_stdin = true;
            p.replace = parsed.values(&["-I", "--replace"]).first().and_then(|a| a.value.clone());
        }
        "time" | "strace" | "ltrace" => {
            for target in parsed.values(&["-o", "--output"]) {
                checker.write_target(name, &target, state);
            }
        }
        "flock" => {
            if let Some(lock) = first_operand {
                checker.write_target(name, lock, state);
            }
            if let Some(script) = parsed.values(&["-c", "--command"]).first() {
                run_text(checker, name, script, state);
                return Some(false);
            }
        }
        "su" | "runuser" => {
            if let Some(script) = parsed.values(&["-c", "--command"]).first() {
                run_text(checker, name, script, state);
            }
            return Some(false);
        }
        "parallel" => {
            if let Some(dir) = parsed.values(&["--workdir", "--wd"]).first() {
                p.cwd = Some(directory(checker, dir, state)?);
            }
            let local = p.state.clone().unwrap_or_else(|| state.clone());
            let mut at = local.clone();
            if let Some(cwd) = p.cwd.clone() {
                at.cwd = cwd;
            }
            for output in parsed.values(&["--joblog", "--results", "--tmpdir"]) {
                checker.write_target(name, &output, &local);
            }
            parallel(checker, parsed, &args[*end..], &at);
            return Some(false);
        }
        "watch" if !parsed.has(&["-x", "--exec"]) => {
            let words: Option<Vec<&str>> = args[*end..].iter().map(|a| a.value.as_deref()).collect();
            let script = Arg { value: words.map(|w| w.join(" ")), shown: format!("{name} …"), glob: false };
            run_text(checker, name, &script, state);
            return Some(false);
        }
        _ => {}
    }
    Some(true)
}

/// GNU parallel runs its command (its words joined, read by a shell, or each word quoted with
/// `-q`) once per input, put where a replacement string (`{}`, `{.}`, `{/}`, `{1}`, the `-I`
/// string) stands, else at the end: a list after `:::` of up to `MAX_PARALLEL_VALUES` known
/// values is followed value by value; input from `::::` files, `-a`, or its own input is not
/// known; `{= … =}` runs Perl.
fn parallel(checker: &mut Checker, parsed: &options::Parsed, rest: &[Arg], state: &State) {
    let is_source = |a: &Arg| matches!(a.value.as_deref(), Some(":::" | "::::" | ":::+" | "::::+"));
    let split = rest.iter().position(is_source).unwrap_or(rest.len());
    let (command, inputs) = rest.split_at(split);
    let quote = parsed.has(&["-q", "--quote"]);
    let words: Option<Vec<String>> = command
        .iter()
        .map(|a| a.value.as_deref().map(|v| if quote { quoted(v) } else { v.to_owned() }))
        .collect();
    let Some(words) = words.filter(|w| !w.is_empty()) else {
        if command.is_empty() {
            checker.unclear("`parallel` runs the commands it reads, which wt cannot see".into());
        } else {
            checker.unclear("`parallel` runs a command wt cannot know before it runs".into());
        }
        return;
    };
    let text = words.join(" ");
    if text.contains("{=") {
        checker.unclear("`parallel {= … =}` runs Perl code wt does not follow".into());
    }
    let replace = parsed.values(&["-I", "--replace"]).first().and_then(|a| a.value.clone());
    let known = match inputs {
        [source, values @ ..] if source.is(":::") && !values.iter().any(is_source) => {
            let values: Option<Vec<&str>> = values.iter().map(Arg::exact).collect();
            values.filter(|v| v.len() <= MAX_PARALLEL_VALUES && !parsed.has(&["-a", "--arg-file", "--pipe"]))
        }
        _ => None,
    };
    let run = |checker: &mut Checker, value: &str| {
        let script = match &replace {
            Some(r) if text.contains(r.as_str()) => text.replace(r.as_str(), value),
            Some(_) => format!("{text} {value}"),
            None => with_replacements(&text, value),
        };
        checker.nested(&script, state.clone());
    };
    match known {
        Some(values) => values.iter().for_each(|v| run(checker, &quoted(v))),
        None if parsed.has(&["--pipe", "--pipepart"]) => run(checker, ""),
        None => run(checker, "\"${PARALLEL_INPUT-}\""),
    }
}

/// `text` as one shell word (GNU parallel quotes what it puts in a command).
fn quoted(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// `text` with GNU parallel's replacement strings (`{}`, `{.}`, `{/}`, `{//}`, `{/.}`, `{#}`,
/// `{%}`, `{1}`, `{1.}` …) replaced by `value`, or `value` added at the end when there is none.
fn with_replacements(text: &str, value: &str) -> String {
    let mut out = String::new();
    let mut found = false;
    let mut rest = text;
    while let Some(start) = rest.find('{') {
        let inner = rest[start + 1..].find('}').map(|end| &rest[start + 1..start + 1 + end]);
        match inner.filter(|i| i.chars().all(|c| c.is_ascii_digit() || "./#%".contains(c))) {
            Some(inner) => {
                out.push_str(&rest[..start]);
                out.push_str(value);
                rest = &rest[start + inner.len() + 2..];
                found = true;
            }
            None => {
                out.push_str(&rest[..=start]);
                rest = &rest[start + 1..];
            }
        }
    }
    out.push_str(rest);
    if !found {
        out.push(' ');
        out.push_str(value);
    }
    out
}

/// `env [-S script] [-C dir] [NAME=value…] command`.
fn env(
    checker: &mut Checker,
    parsed: &options::Parsed,
    args: &[Arg],
    end: &mut usize,
    p: &mut Prefixes,
    state: &State,
) -> Option<bool> {
    if let Some(script) = parsed.values(&["-S", "--split-string"]).first() {
        let tail: Vec<&str> =
            args[*end..].iter().map(|a| a.value.as_deref().unwrap_or("\"$UNKNOWN\"")).collect();
        let text = format!("{} {}", script.value.as_deref().unwrap_or("\"$UNKNOWN\""), tail.join(" "));
        checker.nested(&text, state.clone());
        return Some(false);
    }
    if let Some(dir) = parsed.values(&["-C", "--chdir"]).first() {
        p.cwd = Some(directory(checker, dir, state)?);
    }
    let mut local = p.state.take().unwrap_or_else(|| state.clone());
    while let Some((key, value)) = args.get(*end).and_then(|a| a.value.as_deref()?.split_once('=')) {
        let value = super::state::Value::Known(value.into());
        checker.environment(key, &value, state);
        local.set(key, value);
        *end += 1;
    }
    p.state = Some(local);
    Some(true)
}

fn run_text(checker: &mut Checker, name: &str, script: &Arg, state: &State) {
    match script.value.as_deref() {
        Some(text) => {
            checker.nested(text, state.clone());
        }
        None => checker.unclear(format!("`{name}` runs a command wt cannot know before it runs")),
    }
}

/// The directory a prefix runs its command in (`env -C`, `sudo -D`): inside, or refused.
fn directory(checker: &mut Checker, dir: &Arg, state: &State) -> Option<Cwd> {
    let Some(path) = dir.exact() else {
        checker
            .unclear(format!("the command runs in `{}`, a folder wt cannot know before it runs", dir.shown));
        return None;
    };
    match super::directories::change(checker, path, state, true) {
        Ok(cwd) => Some(cwd),
        Err(outside) => {
            let shown = outside.map_or(path.to_owned(), |p| p.display().to_string());
            checker.deny(format!(
                "the command would run in {shown}, outside the worktree {}; run it inside it",
                checker.root()
            ));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::with_replacements;

    #[test]
    fn parallel_puts_its_input_where_a_replacement_string_stands_or_at_the_end() {
        assert_eq!(with_replacements("rm -rf {}", "'x'"), "rm -rf 'x'");
        assert_eq!(with_replacements("mv {} {.}.bak", "'a'"), "mv 'a' 'a'.bak");
        assert_eq!(with_replacements("gzip", "'a'"), "gzip 'a'");
        assert_eq!(with_replacements("echo {a,b} {1}", "'v'"), "echo {a,b} 'v'");
    }
}
