//! Where a write goes: every file a command writes (a redirection, a writer's targets, a
//! variable that names a build folder) is checked here, from every place the working directory
//! may be. Inside the worktree it is remembered (`written`); outside, or on the worktree's
//! `.git` link, it is refused; a path wt cannot know is unclear. A write to a glob (`rm -f *.o`)
//! stays inside when the folder before the pattern is inside, the pattern is in the last
//! component, cannot match `.git` or `..` (it does not start with `.` or `[`), and no symlink in
//! that folder leads out; anything else is not followed.

use std::path::Path;

use super::arg::Arg;
use super::checker::Checker;
use super::globs;
use super::options::Parsed;
use super::paths::{Place, Worktree, real_path, resolve};
use super::state::State;
use super::written::Content;

/// Entries of a folder looked at for symlinks before giving up.
const MAX_ENTRIES: usize = 4096;

impl Checker<'_> {
    /// Denies a write to `target` unless it is inside the worktree (or a harmless device);
    /// a target wt cannot know is unclear.
    pub fn write_target(&mut self, command: &str, target: &Arg, state: &State) {
        let Some(path) = target.value.as_deref() else {
            self.unclear(format!(
                "`{command}` writes to `{}`, a path wt cannot know before it runs",
                target.shown
            ));
            return;
        };
        if target.glob {
            return self.write_pattern(command, path, state);
        }
        let Some(dirs) = state.cwd.dirs() else {
            if !path.starts_with('/') {
                self.unclear(format!("`{command}` writes to {path} in a folder wt could not follow"));
                return;
            }
            return self.write_place(command, self.wt.place_from(path, Path::new("/"), &state.links));
        };
        for dir in dirs {
            let place = self.wt.place_from(path, &dir.physical, &state.links);
            if place != Place::Inside && place != Place::Device {
                return self.write_place(command, place);
            }
        }
        for dir in dirs {
            self.writes.remember(resolve(Path::new(path), &dir.physical, &state.links));
        }
    }

    fn write_place(&mut self, command: &str, place: Place) {
        let root = self.root();
        match place {
            Place::Inside | Place::Device => {}
            Place::GitLink => self.deny(format!(
                "`{command}` would write the worktree's .git link in {root}; leave it alone (git commands inside \
                 the worktree work without it)"
            )),
            Place::Outside(real) => self.deny(format!(
                "`{command}` would write {}, outside the worktree {root}; write inside it instead",
                real.display()
            )),
        }
    }

    /// Checks each target; when the arguments could not be read, the targets are not known.
    pub fn write_all(&mut self, name: &str, parsed: &Parsed, targets: &[Arg], state: &State) {
        if let Some(why) = &parsed.unknown {
            self.unclear(format!("`{name}` writes files and {why}, so wt cannot tell where it writes"));
        }
        for target in targets {
            self.write_target(name, target, state);
        }
    }

    /// `write_all` for targets that will hold `content` (a download; for `chmod` or `touch`,
    /// what they held), so a script run from one later is checked for what it holds.
    pub fn write_all_holding(
        &mut self,
        content: Content,
        name: &str,
        parsed: &Parsed,
        targets: &[Arg],
        state: &State,
    ) {
        self.writes.writing = content;
        self.write_all(name, parsed, targets, state);
        self.writes.writing = Content::Unknown;
    }

    /// A write to a glob: its folder is written, and what the pattern matches is followed only
    /// where it cannot leave the worktree.
    fn write_pattern(&mut self, command: &str, path: &str, state: &State) {
        let (dir, pattern) = match path.rfind('/') {
            Some(i) => (&path[..i.max(1)], &path[i + 1..]),
            None => (".", path),
        };
        let unclear = |checker: &mut Checker| {
            checker.unclear(format!("`{command}` writes to `{path}`, a pattern wt does not follow"));
        };
        if dir.contains(['*', '?', '[']) || pattern.starts_with(['.', '[']) || pattern.is_empty() {
            return unclear(self);
        }
        self.write_target(command, &Arg::literal(dir), state);
        let Some(folders) = self.resolve_all(dir, state) else { return unclear(self) };
        for folder in folders {
            if !self.wt.contains(&folder) || links_out(self.wt, &folder, pattern) {
                return unclear(self);
            }
        }
    }
}

/// Whether a symlink in `folder` that `pattern` matches leads outside the worktree (or there
/// are too many entries to look).
fn links_out(wt: &Worktree, folder: &Path, pattern: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(folder) else { return false };
    for (n, entry) in entries.flatten().enumerate() {
        if n >= MAX_ENTRIES {
            return true;
        }
        let name = entry.file_name();
        if entry.file_type().is_ok_and(|t| t.is_symlink()) && globs::matches(pattern, &name.to_string_lossy())
        {
            let real = real_path(&entry.path());
            if !wt.contains(&real) {
                return true;
            }
        }
    }
    false
}
