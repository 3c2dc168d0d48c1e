//! Scripts a command writes and then runs (`echo 'git push' > s.sh && sh s.sh`, `curl -o s.sh
//! … && bash s.sh`): where a file the command wrote (`written`) is run, the text it wrote is
//! checked as a nested script; a file whose content wt cannot see is not followed.

use super::arg::Arg;
use super::checker::Checker;
use super::state::State;
use super::written::Content;

impl Checker<'_> {
    /// A file run as a script (`sh file`, `source file`) or, when `direct`, as a program
    /// (`./file`): when this command wrote it, the text it wrote is checked, and a file whose
    /// content wt cannot see is not followed. Returns whether it was such a file.
    pub fn run_written(&mut self, how: &str, file: &Arg, state: &State, direct: bool) -> bool {
        let Some(paths) = file.exact().and_then(|f| self.resolve_all(f, state)) else { return false };
        let written = self.writes.last(&paths);
        let unseen =
            format!("`{how}` runs {}, which this command writes with content wt cannot see", file.shown);
        match written {
            Some(Content::Text(text)) => {
                self.nested(&text, state.clone());
            }
            Some(Content::Download) => self.unclear(unseen),
            Some(Content::Unknown) if !direct => self.unclear(unseen),
            Some(Content::Unknown | Content::Unchanged) => {}
            None if self.writes.overflowed() => self.unclear(unseen),
            None => return false,
        }
        true
    }
}
