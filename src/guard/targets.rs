//! Where a write goes: every file a command writes (a redirection, a writer's targets, a
//! variable that names a build folder) is checked here, from every place the working directory
//! may be. Inside the worktree it is remembered (`written`); outside, or on the worktree's
//! `.git` link, it is refused; a path wt cannot know is unclear. A write to a glob (`rm -f *.o`)
//! stays inside when the folder before the pattern is inside, the pattern is in the last
//! component, cannot match `.git` or `..` (it does not start with `.` or `[`), and no symlink in
//! that folder leads out; anything else is not followed.

use std::path::{Path, PathBuf};

use super::arg::Arg;
use super::checker::Checker;
use super::globs;
use super::options::Parsed;
use super::paths::{Place, Worktree, is_device, lexical, real_path, resolve, through_descriptor};
use super::shell::{Redirect, RedirectKind};
use super::state::{Dir, Opened, State};
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
        let root = [Dir { logical: "/".into(), physical: "/".into() }];
        let dirs = match state.cwd.dirs() {
            Some(dirs) => dirs,
            None if path.starts_with('/') => &root[..],
            None => {
                self.unclear(format!("`{command}` writes to {path} in a folder wt could not follow"));
                return;
            }
        };
        let mut reached = Vec::with_capacity(dirs.len());
        for dir in dirs {
            match self.destination(path, &dir.physical, state) {
                Err(why) => return self.unclear(format!("`{command}` writes to {why}")),
                Ok((Place::Inside, real)) => reached.push(real),
                Ok((Place::Device, _)) => {}
                Ok((place, _)) => return self.write_place(command, place),
            }
        }
        for real in reached {
            self.writes.remember(real);
        }
    }

    /// Where `path`, from the physical directory `dir`, leads, and the real path there; a path
    /// through a descriptor (`/dev/fd/5/x`) leads into what the command opened on it, and is
    /// not known when the command did not open it (or opened it on a path wt cannot know).
    fn destination(&self, path: &str, dir: &Path, state: &State) -> Result<(Place, PathBuf), String> {
        let text = lexical(&dir.join(path));
        if is_device(&text)
            && !matches!(through_descriptor(&text), Some((fd, _)) if state.descriptor(fd) != Opened::Inherited)
        {
            return Ok((Place::Device, text));
        }
        let Some((fd, rest)) = through_descriptor(&text) else {
            let real = resolve(Path::new(path), dir, &state.links);
            return Ok((self.wt.place_of(&real), real));
        };
        match state.descriptor(fd) {
            Opened::Path(open) => {
                let real = resolve(&rest, &open, &state.links);
                Ok((self.wt.place_of(&real), real))
            }
            Opened::Nothing => Ok((Place::Device, text)),
            Opened::Inherited if rest.as_os_str().is_empty() => Ok((Place::Device, text)),
            Opened::Inherited => Err(format!(
                "{path}, a path inside whatever descriptor {fd} is open on, which this command does not open \
                 (a folder open on it would let the write land anywhere); name the file by its path"
            )),
            Opened::Unknown => Err(format!(
                "{path}, through descriptor {fd}, which this command opens on a path wt cannot know before it \
                 runs; name the file by its path"
            )),
        }
    }

    /// What a redirection opens on its descriptor (`5< dir`, `3> log`, `6<&5`, `5<&-`).
    pub fn open_descriptor(&self, redirect: &Redirect, target: &Arg, state: &State) -> Opened {
        match redirect.kind {
            RedirectKind::Heredoc | RedirectKind::HereString => return Opened::Nothing,
            RedirectKind::Duplicate => {
                return match target.value.as_deref() {
                    Some("-") => Opened::Nothing,
                    Some(number) => number.parse().map_or(Opened::Unknown, |from| state.descriptor(from)),
                    None => Opened::Unknown,
                };
            }
            RedirectKind::Read | RedirectKind::Write => {}
        }
        let (Some(path), false) = (target.value.as_deref(), target.glob) else { return Opened::Unknown };
        let root = [Dir { logical: "/".into(), physical: "/".into() }];
        let dirs = match state.cwd.dirs() {
            Some(dirs) => dirs,
            None if path.starts_with('/') => &root[..],
            None => return Opened::Unknown,
        };
        let mut opened = None;
        for dir in dirs {
            let here = match self.destination(path, &dir.physical, state) {
                Ok((Place::Device, text)) => match through_descriptor(&text) {
                    Some((fd, _)) => state.descriptor(fd),
                    None => Opened::Nothing,
                },
                Ok((_, real)) => Opened::Path(real),
                Err(_) => Opened::Unknown,
            };
            if opened.as_ref().is_some_and(|o| *o != here) {
                return Opened::Unknown;
            }
            opened = Some(here);
        }
        opened.unwrap_or(Opened::Unknown)
    }

    /// The files a hard link is made to (`ln`, `cp -l`, `rsync --link-dest`): a hard link is the
    /// same file under a second name, so one inside the worktree to a file outside would make
    /// that file writable from inside, where no later check sees where it really is. Each must
    /// be inside the worktree (the kernel sandbox refuses such links, the hook alone must too).
    pub fn hard_link_sources(&mut self, command: &str, sources: &[Arg], state: &State) {
        let root = self.root();
        for source in sources {
            let Some(all) = source.exact().and_then(|s| self.resolve_all(s, state)) else {
                self.unclear(format!(
                    "`{command}` makes a hard link to `{}`, a file wt cannot know before it runs",
                    source.shown
                ));
                continue;
            };
            for real in all {
                match self.wt.place_of(&real) {
                    Place::Inside | Place::Device => {}
                    Place::GitLink => self.deny(format!(
                        "`{command}` would make a hard link to the worktree's .git link in {root}: writing the \
                         link would point the worktree elsewhere; leave it alone"
                    )),
                    Place::Outside(real) => self.deny(format!(
                        "`{command}` would make a hard link to {}, outside the worktree {root}: a hard link is \
                         the same file under a second name, so writing it would change the file outside; copy \
                         it into the worktree instead (`cp {} …`)",
                        real.display(),
                        source.shown
                    )),
                }
            }
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
