//! `sqlite3 [options] [DATABASE] [SQL…]`: it opens (and may write) its database file, which
//! must be inside the worktree unless opened `-readonly`; its SQL (arguments, `-cmd`, or its
//! input) is read for what reaches another file or runs a program — dot-commands other than
//! those that only show or set the output format (`.output`, `.once`, `.shell`, `.open`,
//! `.read`, `.load`, …), `ATTACH`, `VACUUM INTO`, and the functions `writefile`, `edit`,
//! `load_extension`, `fts3_tokenizer`. `-safe` turns all of those off.

use super::arg::Arg;
use super::checker::{Checker, Stdin};
use super::state::State;

/// Options that take the next word.
const VALUES: &[&str] = &[
    "-separator",
    "-newline",
    "-nullvalue",
    "-vfs",
    "-mmap",
    "-maxsize",
    "-escape",
    "-lookaside",
    "-pagecache",
    "-heap",
];

/// Options without a value (those that change what is written are not here: `-A…`).
const FLAGS: &[&str] = &[
    "-append",
    "-ascii",
    "-bail",
    "-batch",
    "-box",
    "-column",
    "-csv",
    "-deserialize",
    "-echo",
    "-header",
    "-noheader",
    "-html",
    "-interactive",
    "-json",
    "-line",
    "-list",
    "-markdown",
    "-memtrace",
    "-nofollow",
    "-nonce",
    "-no-rowid-in-view",
    "-quote",
    "-stats",
    "-table",
    "-tabs",
    "-version",
    "-help",
    "-zip",
    "-utf8",
    "-readonly",
    "-safe",
];

/// Dot-commands that only show something or set how results print.
const SHOWING: &[&str] = &[
    "tables",
    "table",
    "schema",
    "headers",
    "header",
    "mode",
    "indexes",
    "indices",
    "dump",
    "print",
    "width",
    "show",
    "timer",
    "databases",
    "fullschema",
    "help",
    "quit",
    "exit",
    "nullvalue",
    "separator",
    "stats",
    "eqp",
    "explain",
    "changes",
    "echo",
    "bail",
    "timeout",
    "dbinfo",
    "lint",
    "limit",
    "sha3sum",
    "import",
    "parameter",
    "prompt",
    "schema",
    "selftest",
    "vfsinfo",
    "vfslist",
    "vfsname",
    "version",
];

/// SQL words that reach another file or run a program.
const ACTING: &[&str] = &["attach", "writefile", "edit", "load_extension", "fts3_tokenizer"];

pub fn check(checker: &mut Checker, args: &[Arg], state: &State, stdin: &Stdin) {
    let mut sql: Vec<Option<String>> = Vec::new();
    let mut operands = Vec::new();
    let (mut readonly, mut safe) = (false, false);
    let mut i = 0;
    while let Some(arg) = args.get(i) {
        i += 1;
        let Some(text) = arg.value.as_deref() else {
            operands.push(arg);
            continue;
        };
        let option = text.strip_prefix('-').map(|t| format!("-{}", t.trim_start_matches('-')));
        match option.as_deref() {
            None | Some("-") => operands.push(arg),
            Some("-cmd") => {
                sql.push(args.get(i).and_then(|a| a.value.clone()));
                i += 1;
            }
            Some("-readonly") => readonly = true,
            Some("-safe") => safe = true,
            Some(option) if VALUES.contains(&option) => i += 1,
            Some(option) if FLAGS.contains(&option) => {}
            Some("-init") => {
                return checker
                    .unclear("`sqlite3 -init` runs commands from a file wt does not follow".into());
            }
            Some(option) => {
                return checker.unclear(format!(
                    "`sqlite3 {option}` is an option wt does not know (the -A archive options write files)"
                ));
            }
        }
    }
    let database = operands.first();
    match database.map(|d| d.value.as_deref()) {
        Some(Some("" | ":memory:")) | None => {}
        Some(_) if readonly => {}
        Some(_) => checker.write_target("sqlite3", database.unwrap_or(&&Arg::literal("")), state),
    }
    let given: Vec<&Arg> = operands.iter().skip(1).copied().collect();
    sql.extend(given.iter().map(|a| a.value.clone()));
    if given.is_empty() && !safe {
        match stdin {
            Stdin::Text(text) => sql.push(Some(text.clone())),
            Stdin::Unknown => sql.push(None),
            Stdin::Nothing => {}
        }
    }
    if safe {
        return;
    }
    for text in sql {
        match text {
            Some(text) => {
                if let Some(what) = acts(&text) {
                    checker.unclear(format!(
                        "`sqlite3` runs {what}, which reaches beyond its database; wt does not follow it"
                    ));
                }
            }
            None => checker.unclear("`sqlite3` runs SQL wt cannot see before it runs".into()),
        }
    }
}

/// What in `sql` reaches another file or runs a program.
fn acts(sql: &str) -> Option<String> {
    for line in sql.lines().map(str::trim_start) {
        if let Some(command) = line.strip_prefix('.') {
            let name = command.split_whitespace().next().unwrap_or_default();
            if !SHOWING.contains(&name) {
                return Some(format!("the dot-command `.{name}`"));
            }
        }
    }
    let lower = sql.to_ascii_lowercase();
    let words: Vec<&str> = lower.split(|c: char| !(c.is_ascii_alphanumeric() || c == '_')).collect();
    if let Some(word) = words.iter().find(|w| ACTING.contains(w)) {
        return Some(format!("`{word}`"));
    }
    let vacuum_into = words.windows(2).any(|w| w[0] == "vacuum" && w[1] == "into")
        || words.windows(3).any(|w| w[0] == "vacuum" && w[2] == "into");
    vacuum_into.then(|| "`VACUUM INTO`".to_owned())
}
