//! Seeding a fresh worktree with ignored paths of the main checkout (`[worktree] copy`): the
//! dependency and build folders a new checkout lacks (`node_modules`, `target`), so that a task's
//! first build is not a cold one. A file is cloned copy-on-write where the file system can (btrfs,
//! XFS) and copied otherwise; a symlink is made again as the same symlink, never followed; other
//! kinds (fifos, sockets, devices) are skipped. Modification times are not kept: a copy is newer
//! than the sources just checked out, which is what a build tool needs to trust it.

use std::fs;
use std::io;
use std::path::{Component, Path};

use crate::git::{self, GitError};
use crate::plan::WorktreeConfig;

/// How a run's fresh worktree is made beyond `git worktree add` (its `[worktree]` table).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeedPolicy {
    /// Folders a fresh worktree checks out; all when empty.
    pub sparse: Vec<String>,
    /// Ignored paths of the main checkout copied into a fresh worktree.
    pub copy: Vec<String>,
    /// Run once in each fresh worktree, inside its sandbox, before its first agent.
    pub setup: Option<String>,
}

impl SeedPolicy {
    pub fn new(config: &WorktreeConfig) -> SeedPolicy {
        SeedPolicy {
            sparse: config.sparse.clone().unwrap_or_default(),
            copy: config.copy.clone().unwrap_or_default(),
            setup: config.setup.clone(),
        }
    }
}

/// Whether files cloned from the main checkout into `.worktrees` share their blocks (a file
/// system with copy-on-write), tried once with a file of wt's own.
pub fn clones_files(root: &Path) -> bool {
    let dir = root.join(git::WORKTREES_DIR);
    let (from, to) = (dir.join(".wt-clone-probe"), dir.join(".wt-clone-probe.copy"));
    let cloned = fs::create_dir_all(&dir).is_ok()
        && fs::write(&from, b"probe").is_ok()
        && reflink_copy::reflink(&from, &to).is_ok();
    let _ = (fs::remove_file(&from), fs::remove_file(&to));
    cloned
}

#[derive(Debug, thiserror::Error)]
pub enum SeedError {
    #[error("[worktree] copy: {path:?} must be a path inside the main checkout, relative to its root")]
    NotInside { path: String },
    #[error(
        "[worktree] copy: {path} is not ignored by git, so a checkout already has it or it is not a build folder"
    )]
    NotIgnored { path: String },
    #[error(transparent)]
    Git(#[from] GitError),
    #[error("copying {path} into {}: {source}", worktree.display())]
    Io { path: String, worktree: std::path::PathBuf, source: io::Error },
}

/// What a seeding did.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Seeded {
    /// The paths copied, as written.
    pub copied: Vec<String>,
    /// Paths the main checkout does not have, or the worktree already has: left alone.
    pub skipped: Vec<String>,
    pub files: u64,
    pub bytes: u64,
    /// How many of the files were cloned copy-on-write rather than copied.
    pub cloned: u64,
}

/// Copies each of `paths` (relative to the main checkout at `root`, each ignored by git) into the
/// same place in `worktree`.
pub fn copy_ignored(root: &Path, worktree: &Path, paths: &[String]) -> Result<Seeded, SeedError> {
    check_copy(root, paths)?;
    let mut seeded = Seeded::default();
    for path in paths {
        let (from, to) = (root.join(path), worktree.join(path));
        if fs::symlink_metadata(&from).is_err() || fs::symlink_metadata(&to).is_ok() {
            seeded.skipped.push(path.clone());
            continue;
        }
        let io = |source| SeedError::Io { path: path.clone(), worktree: worktree.to_owned(), source };
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent).map_err(io)?;
        }
        copy_tree(&from, &to, &mut seeded).map_err(io)?;
        seeded.copied.push(path.clone());
    }
    Ok(seeded)
}

/// Each of `paths` lies inside the main checkout at `root` and is ignored by git: checked when a
/// run starts, before any worktree is made.
pub fn check_copy(root: &Path, paths: &[String]) -> Result<(), SeedError> {
    for path in paths {
        let relative = Path::new(path);
        let inside = relative.components().all(|c| matches!(c, Component::Normal(_)));
        if path.is_empty() || !inside {
            return Err(SeedError::NotInside { path: path.clone() });
        }
        if !git::is_ignored(root, path)? {
            return Err(SeedError::NotIgnored { path: path.clone() });
        }
    }
    Ok(())
}

fn copy_tree(from: &Path, to: &Path, seeded: &mut Seeded) -> io::Result<()> {
    let meta = fs::symlink_metadata(from)?;
    let kind = meta.file_type();
    if kind.is_symlink() {
        std::os::unix::fs::symlink(fs::read_link(from)?, to)?;
    } else if kind.is_dir() {
        fs::create_dir(to)?;
        for entry in fs::read_dir(from)? {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()), seeded)?;
        }
        fs::set_permissions(to, meta.permissions())?;
    } else if kind.is_file() {
        if reflink_copy::reflink_or_copy(from, to)?.is_none() {
            seeded.cloned += 1;
        }
        fs::set_permissions(to, meta.permissions())?;
        seeded.files += 1;
        seeded.bytes += meta.len();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    #[test]
    fn a_tree_is_copied_with_its_symlinks_as_symlinks_and_its_modes() {
        let dir = tempfile::tempdir().unwrap();
        let (from, to) = (dir.path().join("from"), dir.path().join("to"));
        fs::create_dir_all(from.join("pkg/bin")).unwrap();
        fs::write(from.join("pkg/index.js"), "module.exports = 1\n").unwrap();
        fs::write(from.join("pkg/bin/run"), "#!/bin/sh\n").unwrap();
        fs::set_permissions(from.join("pkg/bin/run"), fs::Permissions::from_mode(0o755)).unwrap();
        std::os::unix::fs::symlink("../pkg/bin/run", from.join("pkg/link")).unwrap();
        std::os::unix::fs::symlink("/etc/hostname", from.join("outside")).unwrap();
        let mut seeded = Seeded::default();
        copy_tree(&from, &to, &mut seeded).unwrap();

        assert_eq!(fs::read_to_string(to.join("pkg/index.js")).unwrap(), "module.exports = 1\n");
        let mode = fs::metadata(to.join("pkg/bin/run")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o755);
        assert_eq!(fs::read_link(to.join("pkg/link")).unwrap(), Path::new("../pkg/bin/run"));
        assert_eq!(fs::read_link(to.join("outside")).unwrap(), Path::new("/etc/hostname"), "not followed");
        assert_eq!((seeded.files, seeded.bytes), (2, 29));
        fs::write(to.join("pkg/index.js"), "changed\n").unwrap();
        assert_eq!(fs::read_to_string(from.join("pkg/index.js")).unwrap(), "module.exports = 1\n", "a copy");
    }
}
