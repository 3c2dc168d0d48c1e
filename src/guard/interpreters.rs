//! Programs that run code: interpreters (`python3`, `node`, `perl`, `ruby`, `php`, `lua`,
//! `Rscript`, `osascript`, `deno`, `bun`, `julia`), `awk`, editors, `sqlite3`.
//!
//! A script file inside the worktree is the project's own code, and is understood as `make` or
//! `cargo test` are (`python3 tools/gen.py`): wt trusts the project's code as it trusts its build,
//! and does not read it. Code given on the command line or the input (`python3 -c`, `node -e`,
//! `perl -e`, `python3 - <<EOF`) is not read either, so it is not understood: with only the hook
//! the user's permission settings decide, inside the sandbox the kernel contains it. A script
//! outside the worktree is not the project's: not understood either.
//!
//! `awk` programs are read for what lets them write or run something (`print > file`, pipes,
//! `system()`, `getline <`, `@load`); editors are command interpreters (`vim -c`, `ex`, `ed`), not
//! followed; `sqlite3` writes its database file, and its SQL is read for what reaches another
//! file or runs a program.

use super::arg::Arg;
use super::awk;
use super::checker::{Checker, Stdin};
use super::state::State;

/// How one interpreter is called: its options, and where its code comes from.
struct Language {
    /// Short options without a value.
    flags: &'static str,
    /// Short options that take a value (the rest of the bundle, or the next word).
    values: &'static str,
    /// Short options whose value is code.
    code: &'static str,
    /// Short options whose value is the script file (`php -f`).
    file: &'static str,
    /// Short options after which the rest belongs to a module it runs (`python3 -m`).
    module: &'static str,
    /// Short options that print and exit.
    info: &'static str,
    /// Long options whose value is code.
    long_code: &'static [&'static str],
    /// Long options that take the next word, unless written `--name=value`.
    long_values: &'static [&'static str],
    /// Any option word holding one of `code` is code (perl's and ruby's bundles, `-ne`, `-lane`,
    /// are read loosely: what is not known is taken as code).
    loose: bool,
    /// Runs its input when no script is named.
    reads_stdin: bool,
}

const BASE: Language = Language {
    flags: "",
    values: "",
    code: "",
    file: "",
    module: "",
    info: "",
    long_code: &[],
    long_values: &[],
    loose: false,
    reads_stdin: true,
};

fn language(name: &str) -> Option<Language> {
    let versioned = |prefix: &str| {
        name.strip_prefix(prefix).is_some_and(|v| v.chars().all(|c| c.is_ascii_digit() || c == '.'))
    };
    Some(match name {
        _ if versioned("python") || versioned("pypy") => Language {
            flags: "bBdEiIOPqsSuvxR",
            values: "WX",
            code: "c",
            module: "m",
            info: "Vh?",
            long_values: &["--check-hash-based-pycs"],
            ..BASE
        },
        "node" | "nodejs" => Language {
            flags: "ic",
            values: "rC",
            code: "ep",
            info: "vh",
            long_code: &["--eval", "--print"],
            long_values: &[
                "--require",
                "--import",
                "--loader",
                "--experimental-loader",
                "--input-type",
                "--conditions",
                "--title",
                "--env-file",
            ],
            ..BASE
        },
        "perl" | "ruby" => Language { values: "IMmrC", code: "eE", loose: true, ..BASE },
        "php" => {
            Language { flags: "ahHinqsw", values: "cdzStF", code: "rRBE", file: "f", info: "vm", ..BASE }
        }
        _ if versioned("lua") || name == "luajit" => {
            Language { flags: "iEW", values: "l", code: "e", info: "v", ..BASE }
        }
        "Rscript" => Language { code: "e", reads_stdin: false, ..BASE },
        "R" => Language { flags: "qs", code: "e", file: "f", long_values: &["--file"], ..BASE },
        "osascript" => Language { flags: "i", values: "ls", code: "e", ..BASE },
        "julia" => Language {
            flags: "iqOg",
            values: "tpJ",
            code: "eE",
            file: "L",
            info: "vh",
            long_code: &["--eval", "--print"],
            ..BASE
        },
        "bun" => {
            Language { code: "ep", info: "vh", long_code: &["--eval", "--print"], reads_stdin: false, ..BASE }
        }
        _ => return None,
    })
}

/// Editors, which run their own commands (`vim -c`, `+cmd`, ex mode, `ed`'s input).
const EDITORS: &[&str] =
    &["vi", "vim", "nvim", "gvim", "view", "vimdiff", "rvim", "rview", "ex", "ed", "red", "emacs"];

/// Whether `name` runs code this module reads.
pub fn handles(name: &str) -> bool {
    language(name).is_some()
        || EDITORS.contains(&name)
        || matches!(name, "awk" | "gawk" | "mawk" | "nawk" | "sqlite3" | "deno")
}

pub fn check(checker: &mut Checker, name: &str, args: &[Arg], state: &State, stdin: &Stdin) {
    if let Some(language) = language(name) {
        let program = scan(&language, args);
        return program_runs(checker, name, program, state, stdin);
    }
    match name {
        "deno" => deno(checker, args, state, stdin),
        "sqlite3" => super::sqlite::check(checker, args, state, stdin),
        _ if EDITORS.contains(&name) => {
            let informs = !args.is_empty() && args.iter().all(|a| a.is("--version") || a.is("--help"));
            if !informs {
                checker.unclear(format!(
                    "`{name}` runs editor commands (`-c`, `+…`, a script, its input) that can write any file; \
                     wt does not follow them: edit with sed or the Edit tool instead"
                ));
            }
        }
        _ => awk::check(checker, name, args, state),
    }
}

/// Where an interpreter's code comes from.
enum Program<'a> {
    /// Given on the command line.
    Code,
    /// A module it runs (`python3 -m pytest`; `None` when not known), with its arguments.
    Module(Option<&'a str>, &'a [Arg]),
    /// A script file.
    Script(Arg),
    /// Its input.
    Stdin,
    /// Nothing (`--version`).
    Nothing,
    /// wt cannot tell.
    Unknown(String),
}

fn scan<'a>(language: &Language, args: &'a [Arg]) -> Program<'a> {
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        let Some(text) = arg.value.as_deref() else {
            return Program::Unknown(format!("`{}` is not known before it runs", arg.shown));
        };
        i += 1;
        match text {
            "-" => return Program::Stdin,
            "--" => return args.get(i).cloned().map_or(Program::Stdin, Program::Script),
            "--version" | "--help" => return Program::Nothing,
            _ if !text.starts_with('-') => return Program::Script(arg.clone()),
            _ => {}
        }
        if let Some(long) = text.strip_prefix("--") {
            let (name, inline) = long.split_once('=').map_or((long, false), |(n, _)| (n, true));
            let name = format!("--{name}");
            if language.long_code.contains(&name.as_str()) {
                return Program::Code;
            }
            if language.long_values.contains(&name.as_str()) {
                let value =
                    if inline { long.split_once('=').map(|(_, v)| v) } else { args.get(i).map(Arg::text) };
                // `node --import data:text/javascript,…` is code given on the command line.
                if value.is_some_and(|v| v.starts_with("data:")) {
                    return Program::Code;
                }
                i += usize::from(!inline);
            }
            continue;
        }
        let bundle = &text[1..];
        if language.loose {
            if bundle.contains(|c| language.code.contains(c)) {
                return Program::Code;
            }
            i += usize::from(bundle.len() == 1 && language.values.contains(bundle));
            continue;
        }
        for (at, c) in bundle.char_indices() {
            let rest = &bundle[at + c.len_utf8()..];
            // The option's value: the rest of the bundle, or the next word.
            let (value, after) = match rest {
                "" => (args.get(i), i + 1),
                _ => (Some(arg), i),
            };
            let value_text = if rest.is_empty() { value.and_then(Arg::exact) } else { Some(rest) };
            if language.info.contains(c) {
                return Program::Nothing;
            } else if language.code.contains(c) {
                return Program::Code;
            } else if language.module.contains(c) {
                return Program::Module(value_text, args.get(after..).unwrap_or_default());
            } else if language.file.contains(c) {
                return match (value, rest) {
                    (None, _) => Program::Nothing,
                    (Some(file), "") => Program::Script(file.clone()),
                    (Some(file), rest) => {
                        Program::Script(Arg { value: Some(rest.to_owned()), ..file.clone() })
                    }
                };
            } else if language.values.contains(c) {
                i += usize::from(rest.is_empty());
                break;
            } else if !language.flags.contains(c) {
                return Program::Unknown(format!("`-{c}` is an option wt does not know"));
            }
        }
    }
    if language.reads_stdin { Program::Stdin } else { Program::Nothing }
}

fn program_runs(checker: &mut Checker, name: &str, program: Program, state: &State, stdin: &Stdin) {
    match program {
        Program::Code => checker.unclear(format!(
            "`{name}` runs code given on its command line, which wt does not read (it can write anywhere)"
        )),
        Program::Stdin if *stdin == Stdin::Nothing => {}
        Program::Stdin => checker.unclear(format!(
            "`{name}` runs the code it reads on its input, which wt does not read (it can write anywhere)"
        )),
        Program::Script(file) if file.is("-") => program_runs(checker, name, Program::Stdin, state, stdin),
        Program::Script(file) => {
            if !checker.inside(file.exact(), state) {
                checker.unclear(format!(
                    "`{name} {}` runs a script outside the worktree (not the project's code), which wt does not \
                     follow",
                    file.shown
                ));
            }
        }
        Program::Module(Some("pip"), rest) => {
            super::installers::pip(checker, &format!("{name} -m pip"), rest, state)
        }
        Program::Module(module, rest) => {
            if module == Some("venv") {
                let dirs: Vec<&Arg> = rest.iter().filter(|a| !a.text().starts_with('-')).collect();
                for dir in dirs {
                    checker.write_target(&format!("{name} -m venv"), dir, state);
                }
            }
        }
        Program::Nothing => {}
        Program::Unknown(why) => {
            checker.unclear(format!("`{name}`: {why}, so wt cannot tell what code it runs"))
        }
    }
}

/// `deno eval CODE`, `deno run -` (its input), `deno run URL` (someone else's code); the rest
/// (`deno test`, `deno task`, `deno run main.ts`) runs the project's code.
fn deno(checker: &mut Checker, args: &[Arg], state: &State, stdin: &Stdin) {
    let operands: Vec<&Arg> = args.iter().filter(|a| !a.text().starts_with('-') || a.is("-")).collect();
    match operands.first().and_then(|a| a.exact()) {
        Some("eval") => program_runs(checker, "deno eval", Program::Code, state, stdin),
        Some("repl") if args.iter().any(|a| a.text().starts_with("--eval")) => {
            program_runs(checker, "deno repl", Program::Code, state, stdin)
        }
        Some("run") => match operands.get(1) {
            Some(script) if script.text().contains("://") => checker.unclear(format!(
                "`deno run {}` runs code from the network, which wt does not read",
                script.shown
            )),
            Some(script) => {
                program_runs(checker, "deno run", Program::Script((*script).clone()), state, stdin)
            }
            None => {}
        },
        Some(_) => {}
        None if operands.is_empty() => program_runs(checker, "deno", Program::Stdin, state, stdin),
        None => checker.unclear("`deno` gets a subcommand wt cannot know before it runs".into()),
    }
}
