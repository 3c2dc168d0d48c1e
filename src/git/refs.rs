//! References as a whole: every ref of the repository read in one pass, the main checkout's HEAD
//! log, and putting a ref back where it was.

use std::collections::BTreeMap;
use std::path::Path;

use super::{GitError, Repo, git};

impl Repo {
    /// Every reference that points at an object, by full name (`refs/heads/main`, `refs/tags/v1`),
    /// with the object it points at. Symbolic references are left out.
    pub fn refs(&self) -> Result<BTreeMap<String, String>, GitError> {
        let repo = git2::Repository::open(self.common_dir())?;
        let mut refs = BTreeMap::new();
        for reference in repo.references()? {
            let reference = reference?;
            if let (Ok(name), Some(target)) = (reference.name(), reference.target()) {
                refs.insert(name.to_owned(), target.to_string());
            }
        }
        Ok(refs)
    }

    /// How many entries the main checkout's HEAD log has, and the moves (old, new) of the newest
    /// ones past `known` entries, oldest first: what was done through the main checkout's HEAD
    /// (commit, merge, reset, checkout) since the log had `known` entries.
    pub fn head_log_since(&self, known: usize) -> Result<(usize, Vec<(String, String)>), GitError> {
        let repo = git2::Repository::open(self.common_dir())?;
        let log = repo.reflog("HEAD")?;
        let fresh = log.len().saturating_sub(known);
        // git2 lists a reflog newest first.
        let moves = (0..fresh)
            .rev()
            .filter_map(|i| log.get(i))
            .map(|entry| (entry.id_old().to_string(), entry.id_new().to_string()))
            .collect();
        Ok((log.len(), moves))
    }
}

impl Repo {
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

/// Points `name` at `value` again (None: deletes it), only if it still points at `current`
/// (None: it does not exist), so a ref someone moves meanwhile is left alone.
pub fn put_back_ref(
    root: &Path,
    name: &str,
    value: Option<&str>,
    current: Option<&str>,
) -> Result<(), GitError> {
    const ZERO: &str = "0000000000000000000000000000000000000000";
    let message = "wt: put back after a task changed it";
    let cmd = match value {
        Some(value) => git(root).args(["update-ref", "-m", message, name, value, current.unwrap_or(ZERO)]),
        None => git(root).args(["update-ref", "-m", message, "-d", name, current.unwrap_or(ZERO)]),
    };
    cmd.read()?;
    Ok(())
}

/// Checks `branch` out again in `worktree` as HEAD only (`git symbolic-ref`): the files stay as
/// they are.
pub fn point_head_at(worktree: &Path, branch: &str) -> Result<(), GitError> {
    git(worktree).args(["symbolic-ref", "HEAD"]).arg(format!("refs/heads/{branch}")).read()?;
    Ok(())
}
