//! git-spice's record of each branch's base, read straight from its state ref
//! (`refs/spice/data`: a commit whose tree holds `version` and one JSON `branches/<name>` per
//! tracked branch). Reading it in-process answers "does each branch sit on the one below?" in
//! microseconds instead of a `git-spice log` process. Only the layout this driver was written
//! against is read; any other version makes the caller ask git-spice itself.

use serde::Deserialize;

use crate::git::{GitError, Repo};

const STATE_REF: &str = "refs/spice/data";
const KNOWN_LAYOUT: &str = "1";

/// The base git-spice recorded for a branch: its name and the commit it was last stacked on.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
pub struct RecordedBase {
    pub name: String,
    pub hash: String,
}

#[derive(Deserialize)]
struct BranchState {
    base: RecordedBase,
}

pub enum Recorded {
    /// The state is in a layout this driver does not know (or missing): ask git-spice.
    Unknown,
    /// The branch's recorded base; None when git-spice does not track the branch.
    Base(Option<RecordedBase>),
}

pub fn recorded_base(repo: &Repo, branch: &str) -> Result<Recorded, GitError> {
    let layout = repo.read_file_at(STATE_REF, "version")?;
    if layout.as_deref().map(|v| String::from_utf8_lossy(v).trim().to_owned()).as_deref()
        != Some(KNOWN_LAYOUT)
    {
        return Ok(Recorded::Unknown);
    }
    let Some(bytes) = repo.read_file_at(STATE_REF, &format!("branches/{branch}"))? else {
        return Ok(Recorded::Base(None));
    };
    Ok(match serde_json::from_slice::<BranchState>(&bytes) {
        Ok(state) => Recorded::Base(Some(state.base)),
        Err(_) => Recorded::Unknown,
    })
}
