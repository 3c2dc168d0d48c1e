//! Commands that are not shells, git or builtins: what they write, by the writers' rules (and
//! `outputs` for readers that can write), and whether they may run in a folder wt could not
//! follow.

use std::path::PathBuf;

use super::arg::Arg;
use super::checker::{Checker, Stdin};
use super::state::State;

/// Commands that only read (or print): run from a folder wt could not follow, they are still
/// harmless. Those with an option or operand that writes a file or runs a program (`uniq IN
/// OUT`, `tree -o`, `less -o`, `rg --pre`, `date -s` …) have it checked by their rule.
const READ_ONLY: &[&str] = &[
    "ls",
    "cat",
    "head",
    "tail",
    "grep",
    "egrep",
    "fgrep",
    "rg",
    "ag",
    "wc",
    "echo",
    "printf",
    "test",
    "[",
    "[[",
    "pwd",
    "which",
    "type",
    "date",
    "sleep",
    "stat",
    "file",
    "du",
    "df",
    "id",
    "whoami",
    "uname",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "seq",
    "tr",
    "cut",
    "paste",
    "nl",
    "od",
    "xxd",
    "hexdump",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "cmp",
    "diff",
    "comm",
    "jq",
    "less",
    "more",
    "tree",
    "column",
    "fold",
    "rev",
    "uniq",
    "true",
    "false",
];

pub fn is_read_only(name: &str) -> bool {
    READ_ONLY.contains(&name)
}

/// Any other command: what it writes, by the writers' rules.
pub fn check(
    checker: &mut Checker,
    name: &str,
    args: &[Arg],
    state: &State,
    stdin: &Stdin,
) -> Vec<(PathBuf, PathBuf)> {
    if !READ_ONLY.contains(&name) && !super::writers::follows_writes(name) {
        match state.cwd.dirs() {
            None => checker.unclear(format!("`{name}` runs in a folder wt could not follow")),
            Some(dirs) => {
                if let Some(dir) = dirs.iter().find(|d| !checker.wt.contains(&d.physical)) {
                    checker.unclear(format!(
                        "`{name}` runs in {}, outside the worktree {}, where wt does not follow what it writes; \
                         cd into the worktree first",
                        dir.physical.display(),
                        checker.root()
                    ));
                }
            }
        }
    }
    if super::servers::handles(name) {
        super::servers::check(checker, name, args);
        return Vec::new();
    }
    if super::installers::handles(name) {
        super::installers::check(checker, name, args, state);
    }
    if super::machine::handles(name) {
        super::machine::check(checker, name, args, state);
        return Vec::new();
    }
    if super::interpreters::handles(name) {
        super::interpreters::check(checker, name, args, state, stdin);
    }
    if super::outputs::handles(name) {
        super::outputs::check(checker, name, args, state);
        return Vec::new();
    }
    super::writers::check(checker, name, args, state)
}
