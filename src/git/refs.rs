//! References as a whole: every ref of the repository read in one pass, what the main checkout's
//! index records, and putting a ref back where it was.

use std::collections::BTreeMap;
use std::path::Path;

use super::{GitError, Repo, git};

impl Repo {
    /// Every reference by full name (`refs/heads/main`, `refs/tags/v1`), with the object it points
    /// at, or `ref: <name>` for a symbolic one. A reference libgit2 cannot read is an error, not
    /// left out: a check must not pass over what it cannot see.
    pub fn refs(&self) -> Result<BTreeMap<String, String>, GitError> {
        let repo = git2::Repository::open(self.common_dir())?;
        let mut refs = BTreeMap::new();
        for reference in repo.references()? {
            let reference = reference?;
            let name = reference.name()?;
            let value = match (reference.target(), reference.symbolic_target()?) {
                (Some(target), _) => target.to_string(),
                (None, Some(symbolic)) => format!("{SYMBOLIC}{symbolic}"),
                (None, None) => continue,
            };
            refs.insert(name.to_owned(), value);
        }
        Ok(refs)
    }

    /// A digest of what the main checkout's index records (path, mode, object and stage of each
    /// entry), blind to the file times a `git status` refreshes.
    pub fn index_digest(&self) -> Result<String, GitError> {
        let repo = git2::Repository::open(self.root())?;
        let mut lines = Vec::new();
        for entry in repo.index()?.iter() {
            let stage = (entry.flags >> 12) & 0x3;
            lines.extend_from_slice(&entry.path);
            lines.extend_from_slice(format!(" {:o} {} {stage}\n", entry.mode, entry.id).as_bytes());
        }
        Ok(crate::digest::sha256_hex([lines.as_slice()]))
    }
}

/// How `Repo::refs` writes a symbolic reference's value.
pub const SYMBOLIC: &str = "ref: ";

/// Points `name` at `value` again (None: deletes it; `ref: <name>`: makes it symbolic), only if it
/// still points at `current` (None: it does not exist), so a ref someone moves meanwhile is left
/// alone. A symbolic `current` is replaced without that check (git cannot compare one).
pub fn put_back_ref(
    root: &Path,
    name: &str,
    value: Option<&str>,
    current: Option<&str>,
) -> Result<(), GitError> {
    const ZERO: &str = "0000000000000000000000000000000000000000";
    let message = "wt: put back after a task changed it";
    let expected = match current {
        Some(current) if current.starts_with(SYMBOLIC) => None,
        other => Some(other.unwrap_or(ZERO)),
    };
    let cmd = match value.map(|value| value.strip_prefix(SYMBOLIC).ok_or(value)) {
        Some(Ok(target)) => git(root).args(["symbolic-ref", "-m", message, name, target]),
        Some(Err(value)) => {
            git(root).args(["update-ref", "--no-deref", "-m", message, name, value]).args(expected)
        }
        None => git(root).args(["update-ref", "--no-deref", "-m", message, "-d", name]).args(expected),
    };
    cmd.read()?;
    Ok(())
}
