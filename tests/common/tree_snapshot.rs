//! Everything under a folder — files with their bytes, folders, symlinks with their targets,
//! each with its mode and owner — except the folders a test allows to change, to prove nothing
//! else changed.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File(Vec<u8>),
    Dir,
    Symlink(PathBuf),
    /// A fifo, socket or device: never opened (reading a fifo would block).
    Special,
}

/// What `chmod` and `chown` change (the kernel sandbox does not cover them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    pub mode: u32,
    pub uid: u32,
    pub gid: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Change {
    Added,
    Removed,
    /// Content, kind or symlink target.
    Content,
    /// Mode or owner only.
    Meta,
}

#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct TreeSnapshot(BTreeMap<PathBuf, (Entry, Meta)>);

impl TreeSnapshot {
    /// `base` and everything beneath it, without `allowed` and what is beneath those.
    pub fn take(base: &Path, allowed: &[PathBuf]) -> TreeSnapshot {
        let mut entries = BTreeMap::new();
        collect(base, allowed, &mut entries);
        TreeSnapshot(entries)
    }

    /// Adds one path (a file inside an allowed folder that must not change all the same).
    pub fn add(&mut self, path: &Path) {
        if let Some(entry) = read_entry(path) {
            self.0.insert(path.to_owned(), entry);
        }
    }

    pub fn get(&self, path: &Path) -> Option<&(Entry, Meta)> {
        self.0.get(path)
    }

    /// The paths that differ between two snapshots, for a readable failure.
    pub fn changes(&self, after: &TreeSnapshot) -> Vec<String> {
        let word = |change| match change {
            Change::Added => "added",
            Change::Removed => "removed",
            Change::Content => "changed",
            Change::Meta => "changed the mode or owner of",
        };
        self.diff(after)
            .into_iter()
            .map(|(path, change)| format!("{} {}", word(change), path.display()))
            .collect()
    }

    /// The paths that differ between two snapshots, and how, in path order.
    pub fn diff(&self, after: &TreeSnapshot) -> Vec<(PathBuf, Change)> {
        let mut out = Vec::new();
        for (path, (entry, meta)) in &self.0 {
            match after.0.get(path) {
                None => out.push((path.clone(), Change::Removed)),
                Some((other, _)) if other != entry => out.push((path.clone(), Change::Content)),
                Some((_, other)) if other != meta => out.push((path.clone(), Change::Meta)),
                Some(_) => {}
            }
        }
        for path in after.0.keys().filter(|path| !self.0.contains_key(*path)) {
            out.push((path.clone(), Change::Added));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        out
    }
}

fn collect(dir: &Path, allowed: &[PathBuf], entries: &mut BTreeMap<PathBuf, (Entry, Meta)>) {
    let Ok(read) = std::fs::read_dir(dir) else { return };
    for entry in read.flatten() {
        let path = entry.path();
        if allowed.iter().any(|folder| path.starts_with(folder)) {
            continue;
        }
        let Some(found) = read_entry(&path) else { continue };
        let is_dir = found.0 == Entry::Dir;
        entries.insert(path.clone(), found);
        if is_dir {
            collect(&path, allowed, entries);
        }
    }
}

fn read_entry(path: &Path) -> Option<(Entry, Meta)> {
    let metadata = std::fs::symlink_metadata(path).ok()?;
    let meta = Meta { mode: metadata.mode(), uid: metadata.uid(), gid: metadata.gid() };
    let entry = if metadata.file_type().is_symlink() {
        Entry::Symlink(std::fs::read_link(path).unwrap_or_default())
    } else if metadata.is_dir() {
        Entry::Dir
    } else if metadata.is_file() {
        Entry::File(std::fs::read(path).unwrap_or_default())
    } else {
        Entry::Special
    };
    Some((entry, meta))
}
