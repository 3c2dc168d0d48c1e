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

/// git-spice's `repo` record names its remotes as `remote` (a name, or `{upstream, push}`) or, in
/// fork mode, `remotes` (git-spice v0.31.2 `state/repo.go`).
#[derive(Deserialize)]
struct RepoInfo {
    remote: Option<RemoteField>,
    remotes: Option<RemotePair>,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RemoteField {
    Name(String),
    Pair(RemotePair),
}

#[derive(Deserialize)]
struct RemotePair {
    #[serde(default)]
    upstream: String,
    #[serde(default)]
    push: String,
}

/// The remotes git-spice recorded as (upstream, push); None before git-spice was given one, or in
/// a layout not known here.
fn recorded_remotes(repo: &Repo) -> Result<Option<(String, String)>, GitError> {
    let paths = ["version".to_owned(), "repo".to_owned()];
    let Some(files) = repo.read_files_at(STATE_REF, &paths)? else { return Ok(None) };
    let layout = files[0].as_deref().map(|v| String::from_utf8_lossy(v).trim().to_owned());
    if layout.as_deref() != Some(KNOWN_LAYOUT) {
        return Ok(None);
    }
    let Some(Ok(info)) = files[1].as_deref().map(serde_json::from_slice::<RepoInfo>) else {
        return Ok(None);
    };
    Ok(match (info.remotes, info.remote) {
        (Some(pair), _) | (None, Some(RemoteField::Pair(pair))) => Some((pair.upstream, pair.push)),
        (None, Some(RemoteField::Name(name))) => Some((name.clone(), name)),
        (None, None) => None,
    })
}

/// The remote git-spice pulls from and opens change requests on.
pub fn upstream_remote(repo: &Repo) -> Result<Option<String>, GitError> {
    Ok(recorded_remotes(repo)?.map(|(upstream, _)| upstream).filter(|name| !name.is_empty()))
}

/// The remote git-spice pushes branches to (in fork mode, the fork).
pub fn push_remote(repo: &Repo) -> Result<Option<String>, GitError> {
    Ok(recorded_remotes(repo)?.map(|(_, push)| push).filter(|name| !name.is_empty()))
}
