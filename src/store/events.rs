use std::io::Write;
use std::path::{Path, PathBuf};

use serde::Serialize;

/// The append-only `events.jsonl` of a run: one JSON object per line, each with a `ts` in
/// milliseconds since the epoch.
#[derive(Debug, Clone)]
pub struct EventLog {
    path: PathBuf,
}

impl EventLog {
    pub fn new(path: &Path) -> Self {
        EventLog { path: path.to_owned() }
    }

    pub fn append(&self, event: &impl Serialize) -> std::io::Result<()> {
        let mut value = serde_json::to_value(event).map_err(std::io::Error::other)?;
        let ts = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as u64);
        if let Some(object) = value.as_object_mut() {
            object.insert("ts".into(), ts.into());
        }
        let mut line = serde_json::to_string(&value).map_err(std::io::Error::other)?;
        line.push('\n');
        let mut file = std::fs::OpenOptions::new().create(true).append(true).open(&self.path)?;
        file.write_all(line.as_bytes())
    }
}
