//! A place in a file the user wrote (a plan, `guard.toml`), printed as `file:line:column`
//! (1-based), so a message about bad input can say where to look.

use std::fmt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Location {
    pub file: PathBuf,
    pub line: usize,
    pub column: usize,
}

impl Location {
    /// The place of byte `offset` of `text`, the contents of `file` (a parser's span).
    pub fn at(file: &Path, text: &str, offset: usize) -> Location {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = &text[..offset];
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before[line_start..].chars().count() + 1;
        Location { file: file.to_owned(), line, column }
    }
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}", self.file.display(), self.line, self.column)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_and_columns_count_from_one_in_characters() {
        let text = "a = 1\nbé = \"x\"\n";
        let at = |offset| Location::at(Path::new("f.toml"), text, offset).to_string();
        assert_eq!(at(0), "f.toml:1:1");
        assert_eq!(at(6), "f.toml:2:1");
        assert_eq!(at(11), "f.toml:2:5", "é is one column");
        assert_eq!(at(8), "f.toml:2:2", "inside é: é");
        assert_eq!(at(999), "f.toml:3:1", "past the end: the end");
    }
}
