//! Following what a running agent appends to its output file, for the live display.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

/// Reads the lines appended to a file since the last call.
pub struct Follower<'a> {
    path: &'a Path,
    offset: u64,
    partial: String,
}

impl<'a> Follower<'a> {
    /// Starts at the file's current end: what an earlier attempt wrote is not news.
    pub fn new(path: &'a Path) -> Self {
        let offset = std::fs::metadata(path).map_or(0, |m| m.len());
        Follower { path, offset, partial: String::new() }
    }

    /// What `describe` makes of the newest complete line that it describes.
    pub fn latest(&mut self, describe: impl Fn(&str) -> Option<String>) -> Option<String> {
        let mut file = std::fs::File::open(self.path).ok()?;
        file.seek(SeekFrom::Start(self.offset)).ok()?;
        let mut fresh = String::new();
        let read = file.read_to_string(&mut fresh).ok()?;
        self.offset += read as u64;
        self.partial.push_str(&fresh);
        let complete = self.partial.rfind('\n')?;
        let lines: String = self.partial.drain(..=complete).collect();
        lines.lines().rev().find_map(describe)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_only_complete_new_lines() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.jsonl");
        std::fs::write(&path, "old\n").unwrap();
        let mut follower = Follower::new(&path);
        let upper = |line: &str| (!line.is_empty()).then(|| line.to_uppercase());
        assert_eq!(follower.latest(upper), None);
        std::fs::write(&path, "old\none\ntw").unwrap();
        assert_eq!(follower.latest(upper).as_deref(), Some("ONE"));
        std::fs::write(&path, "old\none\ntwo\n").unwrap();
        assert_eq!(follower.latest(upper).as_deref(), Some("TWO"));
    }
}
