//! The record of the files one command writes inside the worktree, and what it puts in each
//! (`echo '…' > s.sh`, `curl -o s.sh …`), so that a script it runs later (`sh s.sh`) is checked
//! as the text it wrote (`scripts`). Files persist across subshells, so the record is kept for
//! the whole command, in the order the writes appear.

use std::path::PathBuf;

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

    /// What the last write to any of `paths` put there.
    pub fn last(&self, paths: &[PathBuf]) -> Option<Content> {
        self.files.iter().rev().find(|(p, _)| paths.contains(p)).map(|(_, c)| c.clone())
    }

    /// Whether writes were left out of the record (a file it does not hold may have been written).
    pub fn overflowed(&self) -> bool {
        self.overflow
    }
}
