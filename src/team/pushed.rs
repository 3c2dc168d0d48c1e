//! What wt last pushed of each branch: `<common>/spectacular/team/pushed.json` (versioned;
//! written atomically under the repo lock). It is the lease of every later push: a remote branch
//! wt no longer finds at the commit it pushed was pushed by someone else, whatever a broad
//! `git fetch` did to the remote-tracking ref since (research/teams/FINDINGS §1f).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::{TeamError, TeamRepo};

/// The layout of the file this code writes and reads.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PushedRecord {
    pub format: u32,
    /// By branch name.
    #[serde(default)]
    pub branches: BTreeMap<String, Pushed>,
}

/// The last push of one branch.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pushed {
    pub remote: String,
    pub sha: String,
}

fn path(team: &TeamRepo) -> PathBuf {
    team.layout().team_dir().join("pushed.json")
}

impl PushedRecord {
    fn load(path: &Path) -> Result<PushedRecord, TeamError> {
        let context = || format!("reading {}", path.display());
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(PushedRecord::default()),
            Err(err) => return Err(TeamError::io(context())(err)),
        };
        let record: PushedRecord = serde_json::from_str(&text)
            .map_err(|err| TeamError::io(context())(std::io::Error::other(err.to_string())))?;
        if record.format != FORMAT {
            let detail = format!("format {} (this wt reads {FORMAT}); a newer wt wrote it", record.format);
            return Err(TeamError::io(context())(std::io::Error::other(detail)));
        }
        Ok(record)
    }

    fn save(&self, path: &Path) -> Result<(), TeamError> {
        let record = PushedRecord { format: FORMAT, ..self.clone() };
        let io = TeamError::io(format!("writing {}", path.display()));
        let text =
            serde_json::to_string_pretty(&record).map_err(|err| std::io::Error::other(err.to_string()));
        text.and_then(|text| crate::store::write_atomic(path, text.as_bytes())).map_err(io)
    }
}

/// The commit wt last pushed of `branch` to `remote`; None when it never did (or pushed it to
/// another remote).
pub fn last_pushed(team: &TeamRepo, branch: &str, remote: &str) -> Result<Option<String>, TeamError> {
    let record = PushedRecord::load(&path(team))?;
    Ok(record.branches.get(branch).filter(|pushed| pushed.remote == remote).map(|pushed| pushed.sha.clone()))
}

/// Records that `remote` now has `branch` at `sha` because wt put it there. The caller holds
/// the repo lock (this reloads, changes one entry and writes the file back).
pub(super) fn record(team: &TeamRepo, branch: &str, remote: &str, sha: &str) -> Result<(), TeamError> {
    let file = path(team);
    let mut record = PushedRecord::load(&file)?;
    let pushed = Pushed { remote: remote.to_owned(), sha: sha.to_owned() };
    if record.branches.get(branch) == Some(&pushed) {
        return Ok(());
    }
    record.branches.insert(branch.to_owned(), pushed);
    record.save(&file)
}

/// Forgets `branch` (it was deleted). The caller holds the repo lock.
pub(super) fn forget(team: &TeamRepo, branch: &str) -> Result<(), TeamError> {
    let file = path(team);
    let mut record = PushedRecord::load(&file)?;
    if record.branches.remove(branch).is_some() {
        record.save(&file)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_another_format_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let file = temp.path().join("team/pushed.json");
        assert_eq!(PushedRecord::load(&file).unwrap(), PushedRecord::default());
        let mut record = PushedRecord::default();
        record.branches.insert("a".into(), Pushed { remote: "origin".into(), sha: "abc".into() });
        record.save(&file).unwrap();
        let loaded = PushedRecord::load(&file).unwrap();
        assert_eq!((loaded.format, loaded.branches), (FORMAT, record.branches));
        std::fs::write(&file, r#"{"format":2,"branches":{}}"#).unwrap();
        assert!(PushedRecord::load(&file).unwrap_err().to_string().contains("format 2"));
    }
}
