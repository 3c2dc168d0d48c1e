//! Scripts a command writes and then runs (`echo 'git push' > s.sh && sh s.sh`, `curl -o s.sh
//! … && bash s.sh`): wt remembers what each write inside the worktree put in a file, when it can
//! see it, and checks that text where the file is run. Files persist across subshells, so the
//! record is kept for the whole command, in the order the writes appear.

use std::path::PathBuf;

use super::arg::Arg;
use super::bash::Checker;
use super::state::State;

/// Writes remembered in one command; past this, any script run is not followed.
const MAX_WRITES: usize = 256;

/// What a write put in a file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Content {
    /// This text (`echo '…' >`, `cat <<EOF >`).
    Text(String),
    /// Something wt cannot see (a copy, a build, a command's output).
    #[default]
    Unknown,
    /// A download (`curl -o`, `wget`): someone else's code.
    Download,
    /// Only the file's metadata changes (`chmod`, `touch`): what it held stays.
    Unchanged,
}

#[derive(Debug, Default)]
pub struct Writes {
    /// What the write being checked puts in its targets.
    pub writing: Content,
    files: Vec<(PathBuf, Content)>,
    overflow: bool,
}

impl Writes {
    pub fn remember(&mut self, path: PathBuf) {
        if self.writing == Content::Unchanged {
            return;
        }
        if self.files.len() >= MAX_WRITES {
            self.overflow = true;
        } else {
            self.files.push((path, self.writing.clone()));
        }
    }
}

impl Checker<'_> {
    /// A file run as a script (`sh file`, `source file`) or, when `direct`, as a program
    /// (`./file`): when this command wrote it, the text it wrote is checked, and a file whose
    /// content wt cannot see is not followed. Returns whether it was such a file.
    pub fn run_written(&mut self, how: &str, file: &Arg, state: &State, direct: bool) -> bool {
        let Some(paths) = file.exact().and_then(|f| self.resolve_all(f, state)) else { return false };
        let written = self.writes.files.iter().rev().find(|(p, _)| paths.contains(p)).map(|(_, c)| c.clone());
        let unseen =
            format!("`{how}` runs {}, which this command writes with content wt cannot see", file.shown);
        match written {
            Some(Content::Text(text)) => {
                self.nested(&text, state.clone());
            }
            Some(Content::Download) => self.unclear(unseen),
            Some(Content::Unknown) if !direct => self.unclear(unseen),
            Some(Content::Unknown | Content::Unchanged) => {}
            None if self.writes.overflow => self.unclear(unseen),
            None => return false,
        }
        true
    }
}
