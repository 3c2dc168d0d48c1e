//! Shells given a script: `bash -c '…'` (with any options first: `-o pipefail`, `-O extglob`,
//! `--norc`, bundles such as `-xec`), `bash -s` and a shell reading a heredoc, a here-string or
//! a pipe (`… | sh`), and a shell running a script file. A literal script is checked like the
//! command itself; one wt cannot see is "unclear".

use super::arg::Arg;
use super::checker::{Checker, Stdin};
use super::state::State;

/// Shells whose syntax is not bash's: their scripts are read as bash anyway (for what a deny
/// would catch) and are never "understood".
const OTHER_SHELLS: &[&str] = &["fish", "csh", "tcsh", "nu", "xonsh", "pwsh", "elvish"];

pub fn is_shell(name: &str) -> bool {
    matches!(name, "bash" | "sh" | "zsh" | "dash" | "ksh" | "mksh" | "ash" | "yash" | "posh")
        || OTHER_SHELLS.contains(&name)
}

pub fn shell(checker: &mut Checker, name: &str, args: &[Arg], state: &State, stdin: &Stdin) {
    if OTHER_SHELLS.contains(&name) {
        checker.unclear(format!("`{name}` scripts are not bash; wt does not follow them"));
    }
    let mut command = false;
    let mut from_stdin = false;
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.value.as_deref() else {
            checker.unclear(format!("`{name}` gets `{}`, which wt cannot know before it runs", arg.shown));
            return;
        };
        if text == "--" || text == "-" {
            i += 1;
            break;
        }
        if let Some(long) = text.strip_prefix("--") {
            // --rcfile and --init-file take a file; --norc, --login, --posix… take nothing.
            i += if matches!(long, "rcfile" | "init-file") { 2 } else { 1 };
            continue;
        }
        if text.len() < 2 || !text.starts_with(['-', '+']) {
            break;
        }
        let letters = &text[1..];
        command |= text.starts_with('-') && letters.contains('c');
        from_stdin |= letters.contains('s');
        // `-o NAME` and `-O NAME` (also inside a bundle, `-eo pipefail`) take the next word.
        i += 1 + letters.matches(['o', 'O']).count();
    }
    let operands = args.get(i..).unwrap_or_default();
    if command {
        match operands.first().map(|a| a.value.as_deref()) {
            Some(Some(script)) => {
                checker.nested(script, state.clone());
            }
            Some(None) => {
                checker.unclear(format!("the script given to `{name} -c` is not known before it runs"))
            }
            None => {}
        }
    } else if from_stdin || operands.is_empty() {
        match stdin {
            Stdin::Text(script) => {
                checker.nested(script, state.clone());
            }
            Stdin::Unknown => checker.unclear(format!("`{name}` runs what it reads, which wt cannot see")),
            Stdin::Nothing => {}
        }
    } else {
        script_file(checker, name, &operands[0], state);
    }
}

/// A script file: its text is checked when wt can read it (`scripts`).
fn script_file(checker: &mut Checker, name: &str, file: &Arg, state: &State) {
    checker.run_script(name, file, state, false);
}
