//! Scripts a command runs: `sh s.sh`, `bash s.sh`, `source s.sh`, `./s.sh`. Where the command
//! wrote the file itself (`echo 'git push' > s.sh && sh s.sh`, `curl -o s.sh … && bash s.sh`),
//! the text it wrote is checked as a nested script (`written`), and a file whose content wt
//! cannot see is not followed. A file already there — one an earlier call wrote — is read
//! when it is inside the worktree and a shell script, and checked the same way (up to
//! `MAX_COMMAND_BYTES`, nested no deeper than any shell); a file wt cannot read, a shell script
//! outside the worktree, or a name wt cannot know, is not followed.
//!
//! A program that is not a shell script (a binary, a `#!/usr/bin/env python3` script) inside the
//! worktree is the project's own code and is not read, as `python3 tools/gen.py` or `make` run
//! the project's code without wt reading it; a program named by an absolute path outside the
//! worktree is an installed one, checked by its name (`/usr/bin/git`).

use std::io::Read;
use std::path::{Path, PathBuf};

use super::arg::Arg;
use super::checker::Checker;
use super::limits::MAX_COMMAND_BYTES;
use super::state::{Flow, State};
use super::written::Content;

/// Shells whose scripts wt reads (as bash).
const SHELLS: &[&str] = &["sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "yash", "posh"];

/// What a file run as a script holds.
enum Script {
    /// Shell text, to be checked.
    Shell(String),
    /// A binary, or a script for another interpreter: the project's code, or an installed program.
    Program,
    /// wt cannot read it (the reason).
    Unreadable(String),
}

impl Checker<'_> {
    /// A file run as a script (`sh file`, `source file`) or, when `direct`, as a program
    /// (`./file`). Returns the state after its text when wt checked it (`source` goes on from
    /// there), `None` when it did not (it recorded why, unless the file is the project's program
    /// or an installed one).
    pub fn run_script(&mut self, how: &str, file: &Arg, state: &State, direct: bool) -> Option<Flow> {
        let Some(path) = file.exact() else {
            self.unclear(format!("`{how}` runs `{}`, a file wt cannot know before it runs", file.shown));
            return None;
        };
        let Some(paths) = self.resolve_all(path, state) else {
            self.unclear(format!("`{how}` runs {path} in a folder wt could not follow"));
            return None;
        };
        let unseen =
            || format!("`{how}` runs {}, which this command writes with content wt cannot see", file.shown);
        match self.writes.last(&paths) {
            Some(Content::Text(text)) => return Some(self.nested(&text, state.clone())),
            Some(Content::Download) => self.unclear(unseen()),
            Some(Content::Unknown) if !direct => self.unclear(unseen()),
            // A program this command builds (`cc -o app main.c && ./app`): the project's.
            Some(Content::Unknown | Content::Unchanged) => {}
            None if self.writes.overflowed() => self.unclear(unseen()),
            None => return self.script_on_disk(how, file, path, &paths, state, direct),
        }
        None
    }

    fn script_on_disk(
        &mut self,
        how: &str,
        file: &Arg,
        path: &str,
        paths: &[PathBuf],
        state: &State,
        direct: bool,
    ) -> Option<Flow> {
        let inside = paths.iter().all(|p| self.wt.contains(p));
        if direct && !inside && path.starts_with('/') {
            return None;
        }
        let mut flow: Option<Flow> = None;
        for real in paths {
            match read_script(real, direct) {
                Script::Program => {}
                Script::Shell(_) if !inside => {
                    self.unclear(format!(
                        "`{how}` runs {}, a shell script outside the worktree, which wt does not follow",
                        file.shown
                    ));
                    return None;
                }
                Script::Shell(text) => {
                    let after = self.within(&file.shown, |checker| checker.nested(&text, state.clone()));
                    flow = Some(match flow {
                        None => after,
                        Some(before) => Flow {
                            ok: super::state::join(before.ok, after.ok),
                            fail: super::state::join(before.fail, after.fail),
                        },
                    });
                }
                Script::Unreadable(why) => {
                    self.unclear(format!("`{how}` runs {}, {why}", file.shown));
                    return None;
                }
            }
        }
        flow
    }
}

/// What `path` holds, read as a script (`direct`: run as a program, so its `#!` line decides).
fn read_script(path: &Path, direct: bool) -> Script {
    let file = match std::fs::File::open(path) {
        Ok(file) if file.metadata().is_ok_and(|m| m.is_file()) => file,
        Ok(_) => return Script::Unreadable("which is not a file".into()),
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
            return Script::Unreadable("which is not there, so wt cannot read what it will hold".into());
        }
        Err(_) => return Script::Unreadable("which wt cannot read".into()),
    };
    let mut bytes = Vec::new();
    if file.take(MAX_COMMAND_BYTES as u64 + 1).read_to_end(&mut bytes).is_err() {
        return Script::Unreadable("which wt cannot read".into());
    }
    if bytes.starts_with(b"\x7fELF") || bytes.iter().take(1024).any(|b| *b == 0) {
        return Script::Program;
    }
    if let Some(line) = bytes.strip_prefix(b"#!") {
        let line =
            String::from_utf8_lossy(line.split(|b| *b == b'\n').next().unwrap_or_default()).into_owned();
        if direct && !runs_a_shell(&line) {
            return Script::Program;
        }
    }
    if bytes.len() > MAX_COMMAND_BYTES {
        return Script::Unreadable(format!(
            "a script longer than the {} KiB wt guard reads",
            MAX_COMMAND_BYTES / 1024
        ));
    }
    match String::from_utf8(bytes) {
        Ok(text) => Script::Shell(text),
        Err(_) => Script::Unreadable("which is not text wt can read".into()),
    }
}

/// Whether a `#!` line (after `#!`) runs a shell wt reads: `/bin/sh`, `/usr/bin/env bash`,
/// `/usr/bin/env -S bash -e`.
fn runs_a_shell(line: &str) -> bool {
    let mut words = line.split_whitespace();
    let Some(first) = words.next() else { return true };
    let mut program = first.rsplit('/').next().unwrap_or(first);
    if program == "env" {
        program = words.find(|w| !w.starts_with('-') && !w.contains('=')).unwrap_or_default();
    }
    SHELLS.contains(&program)
}
