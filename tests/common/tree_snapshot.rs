//! Everything under a folder — files with their bytes, folders, symlinks with their targets —
//! except the folders a test allows to change, to prove nothing else changed.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File(Vec<u8>),
    Dir,
    Symlink(PathBuf),
    /// A fifo, socket or device: never opened (reading a fifo would block).
    Special,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeSnapshot(BTreeMap<PathBuf, Entry>);

impl TreeSnapshot {
    /// `base` and everything beneath it, without `allowed` and what is beneath those.
    pub fn take(base: &Path, allowed: &[PathBuf]) -> TreeSnapshot {
        let mut entries = BTreeMap::new();
        collect(base, allowed, &mut entries);
        TreeSnapshot(entries)
    }

    /// The paths that differ between two snapshots, for a readable failure.
    pub fn changes(&self, after: &TreeSnapshot) -> Vec<String> {
        let mut out = Vec::new();
        for (path, entry) in &self.0 {
            match after.0.get(path) {
                None => out.push(format!("removed {}", path.display())),
                Some(other) if other != entry => out.push(format!("changed {}", path.display())),
                Some(_) => {}
            }
        }
        for path in after.0.keys().filter(|path| !self.0.contains_key(*path)) {
            out.push(format!("added {}", path.display()));
        }
        out
    }
}

fn collect(dir: &Path, allowed: &[PathBuf], entries: &mut BTreeMap<PathBuf, Entry>) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    for entry in read.flatten() {
        let path = entry.path();
        if allowed.iter().any(|folder| path.starts_with(folder)) {
            continue;
        }
        let Ok(metadata) = std::fs::symlink_metadata(&path) else { continue };
        if metadata.file_type().is_symlink() {
            entries.insert(path.clone(), Entry::Symlink(std::fs::read_link(&path).unwrap_or_default()));
        } else if metadata.is_dir() {
            entries.insert(path.clone(), Entry::Dir);
            collect(&path, allowed, entries);
        } else if metadata.is_file() {
            entries.insert(path.clone(), Entry::File(std::fs::read(&path).unwrap_or_default()));
        } else {
            entries.insert(path.clone(), Entry::Special);
        }
    }
}
