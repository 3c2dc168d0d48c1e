//! An argument of a command as the policy sees it, after expansion: its value when wt can know
//! it, how it was written (for messages), and whether the shell would replace it by the paths a
//! glob matches. Every rule reads its command's arguments as these.

/// An argument as the policy sees it: its value when wt can know it, and how it was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Arg {
    pub value: Option<String>,
    pub shown: String,
    /// Holds unquoted glob characters: the shell replaces it by the paths that match.
    pub glob: bool,
}

impl Arg {
    pub fn literal(text: &str) -> Arg {
        Arg { value: Some(text.to_owned()), shown: text.to_owned(), glob: false }
    }

    pub fn is(&self, text: &str) -> bool {
        self.value.as_deref() == Some(text)
    }

    pub fn text(&self) -> &str {
        self.value.as_deref().unwrap_or("")
    }

    /// The value when it is known exactly (not a pattern).
    pub fn exact(&self) -> Option<&str> {
        self.value.as_deref().filter(|_| !self.glob)
    }
}
