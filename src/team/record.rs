//! What wt keeps about a team worktree that neither git nor git-spice holds:
//! `<common>/spectacular/team/<name>.toml` (versioned; written atomically under the repo lock).
//! Today that is the verify command the TaskCompleted gate runs. The base, the dependents and the
//! change request are git-spice's and are never copied here.

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::TeamError;

/// The layout of the record this code writes and reads.
pub const FORMAT: u32 = 1;

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TeamRecord {
    pub format: u32,
    /// Run in the worktree before its agent may call a task done (`wt create --verify`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub verify: Option<String>,
}

impl TeamRecord {
    /// The record at `path`; None when there is none.
    pub fn load(path: &Path) -> Result<Option<TeamRecord>, TeamError> {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(err) => return Err(TeamError::io(format!("reading {}", path.display()))(err)),
        };
        let record: TeamRecord = toml::from_str(&text).map_err(|err| {
            TeamError::io(format!("reading {}", path.display()))(std::io::Error::other(err.to_string()))
        })?;
        if record.format != FORMAT {
            let detail = format!("format {} (this wt reads {FORMAT}); a newer wt wrote it", record.format);
            return Err(TeamError::io(format!("reading {}", path.display()))(std::io::Error::other(detail)));
        }
        Ok(Some(record))
    }

    pub fn save(&self, path: &Path) -> Result<(), TeamError> {
        let record = TeamRecord { format: FORMAT, ..self.clone() };
        let io = TeamError::io(format!("writing {}", path.display()));
        let text = toml::to_string(&record).map_err(|err| std::io::Error::other(err.to_string()));
        text.and_then(|text| crate::store::write_atomic(path, text.as_bytes())).map_err(io)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_record_round_trips_and_another_format_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let path = temp.path().join("team/a.toml");
        assert_eq!(TeamRecord::load(&path).unwrap(), None);
        let record = TeamRecord { format: FORMAT, verify: Some("cargo test".into()) };
        record.save(&path).unwrap();
        assert_eq!(TeamRecord::load(&path).unwrap(), Some(record));
        std::fs::write(&path, "format = 2\n").unwrap();
        assert!(TeamRecord::load(&path).unwrap_err().to_string().contains("format 2"));
    }
}
