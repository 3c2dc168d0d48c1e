//! Commands that act on the machine rather than on files: its clock (`date -s`, `hwclock`,
//! `timedatectl set-time`) and its processes (`kill`, `pkill`, `killall`). The kernel sandbox
//! stops neither — setting the clock needs only a capability a root agent has, and the Landlock
//! rights wt asks for do not cover signals — so they are refused in every mode, except signals to
//! what the command itself started: `kill $!`, `kill %1`, `pid=$!; …; kill $pid`. `kill -0`
//! only asks whether a process is there.

use super::arg::Arg;
use super::checker::Checker;
use super::state::State;

pub fn handles(name: &str) -> bool {
    matches!(name, "date" | "hwclock" | "timedatectl" | "kill" | "pkill" | "killall")
}

pub fn check(checker: &mut Checker, name: &str, args: &[Arg], state: &State) {
    match name {
        "date" if args.iter().any(|a| a.text().starts_with("--set") || is_short(a, 's')) => {
            clock(checker, "date -s")
        }
        "hwclock"
            if args.iter().any(|a| {
                matches!(a.text(), "--set" | "--systohc" | "--hctosys" | "--adjust" | "--systz")
                    || is_short(a, 'w')
                    || is_short(a, 's')
            }) =>
        {
            clock(checker, "hwclock")
        }
        "timedatectl" if args.iter().any(|a| a.text().starts_with("set-")) => {
            clock(checker, "timedatectl set-…")
        }
        "kill" => kill(checker, args, state),
        "pkill" | "killall" => {
            let lists = name == "killall"
                && args.iter().any(|a| matches!(a.text(), "-l" | "--list" | "-V" | "--version"));
            if !lists && !probes_only(args) {
                checker.deny(format!(
                    "`{name}` signals every process whose name matches — other agents', the user's, wt's own — and \
                     the kernel sandbox does not stop signals; signal only a job this command started: `kill %1`, \
                     `kill $!`, or `pid=$!` then `kill $pid`"
                ));
            }
        }
        _ => {}
    }
}

/// A bundle of short options holding `letter` (`-s`, `-su`), not `--long`.
fn is_short(arg: &Arg, letter: char) -> bool {
    let text = arg.text();
    text.len() > 1 && text.starts_with('-') && !text.starts_with("--") && text[1..].starts_with(letter)
}

fn clock(checker: &mut Checker, name: &str) {
    checker.deny(format!(
        "`{name}` sets the machine's clock, which every program on it shares, and the kernel sandbox does not \
         stop that; leave the clock alone (for a test, fake the time inside the test, or set TZ)"
    ));
}

/// `kill -0 …`, `kill -s 0 …`: no signal is sent (the signal comes first).
fn probes_only(args: &[Arg]) -> bool {
    match args {
        [first, ..] if first.is("-0") || first.is("--signal=0") => true,
        [option, value, ..] => matches!(option.text(), "-s" | "-n" | "--signal") && value.is("0"),
        _ => false,
    }
}

/// `kill [-s SIG | -n NUM | -SIG] PID|%JOB…`: each target must be a job of this command.
fn kill(checker: &mut Checker, args: &[Arg], state: &State) {
    if args.iter().any(|a| matches!(a.text(), "-l" | "-L")) || probes_only(args) {
        return;
    }
    let mut options_done = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let text = arg.value.as_deref();
        match text {
            Some("--") if !options_done => options_done = true,
            Some("-s" | "-n") if !options_done => i += 1,
            Some(t) if !options_done && t.starts_with('-') && t.len() > 1 && !t[1..].starts_with(char::is_numeric) => {}
            Some(t) if !options_done && t.starts_with('-') && t[1..].chars().all(|c| c.is_ascii_digit()) && i == 1 => {}
            Some(t) if t.starts_with('%') => {}
            None if started_here(&arg.shown, state) => {}
            _ => checker.deny(format!(
                "`kill {}` signals a process this command did not start (another agent's, the user's, wt's own), \
                 and the kernel sandbox does not stop signals; signal only a job this command started: `kill %1`, \
                 `kill $!`, or `pid=$!` then `kill $pid`",
                arg.shown
            )),
        }
    }
}

/// `$!`, or a variable holding it (`pid=$!`).
fn started_here(shown: &str, state: &State) -> bool {
    shown == "$!" || shown.strip_prefix('$').is_some_and(|name| state.holds_job(name))
}
