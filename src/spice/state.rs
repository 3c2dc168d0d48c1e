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

/// The recorded base of each of `branches` (None for a branch git-spice does not track), read
/// in one pass; None when the state is missing or in a layout this driver does not know (then
/// ask git-spice).
pub fn recorded_bases(repo: &Repo, branches: &[&str]) -> Result<Option<Vec<Option<RecordedBase>>>, GitError> {
    let paths: Vec<String> = std::iter::once("version".to_owned())
        .chain(branches.iter().map(|b| format!("branches/{b}")))
        .collect();
    let Some(files) = repo.read_files_at(STATE_REF, &paths)? else { return Ok(None) };
    let (layout, branch_files) = files.split_first().expect("version is always asked for");
    if layout.as_deref().map(|v| String::from_utf8_lossy(v).trim().to_owned()).as_deref()
        != Some(KNOWN_LAYOUT)
    {
        return Ok(None);
    }
    let mut bases = Vec::with_capacity(branches.len());
    for file in branch_files {
        match file {
            None => bases.push(None),
            Some(bytes) => match serde_json::from_slice::<BranchState>(bytes) {
                Ok(state) => bases.push(Some(state.base)),
                Err(_) => return Ok(None),
            },
        }
    }
    Ok(Some(bases))
}

/// The remote git-spice pulls from and opens change requests on: the repository record's
/// `remote` (a name, or `{upstream, push}`), or `remotes.upstream` in fork mode (git-spice
/// v0.31.2 `state/repo.go`); None before git-spice was given one, or in a layout not known here.
pub fn upstream_remote(repo: &Repo) -> Result<Option<String>, GitError> {
    #[derive(Deserialize)]
    struct Remotes {
        #[serde(default)]
        upstream: String,
    }
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum Remote {
        Name(String),
        Pair(Remotes),
    }
    #[derive(Deserialize)]
    struct RepoInfo {
        remote: Option<Remote>,
        remotes: Option<Remotes>,
    }
    let Some(files) = repo.read_files_at(STATE_REF, &["repo".to_owned()])? else { return Ok(None) };
    let Some(Some(bytes)) = files.into_iter().next() else { return Ok(None) };
    let Ok(info) = serde_json::from_slice::<RepoInfo>(&bytes) else { return Ok(None) };
    let upstream = match (info.remotes, info.remote) {
        (Some(remotes), _) => remotes.upstream,
        (None, Some(Remote::Name(name))) => name,
        (None, Some(Remote::Pair(remotes))) => remotes.upstream,
        (None, None) => String::new(),
    };
    Ok(Some(upstream).filter(|name| !name.is_empty()))
}
