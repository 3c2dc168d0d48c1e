//! Where a path really is: made absolute against the working directory, `..` folded, and the
//! symlinks of its longest existing prefix followed. Containment is by path components, never
//! by string prefix (`/r/wt-main2` is not inside `/r/wt-main`).

use std::path::{Component, Path, PathBuf};

/// Devices every command may write to.
const HARMLESS_DEVICES: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Place {
    Inside,
    /// The worktree's own `.git` file: writing it would point the worktree elsewhere.
    GitLink,
    Device,
    Outside(PathBuf),
}

#[derive(Debug, Clone)]
pub struct Worktree {
    root: PathBuf,
}

impl Worktree {
    pub fn new(root: &Path) -> Self {
        Worktree { root: real_path(&lexical(root)) }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Where `path` (relative to `cwd`) is.
    pub fn place(&self, path: &str, cwd: &Path) -> Place {
        let absolute = lexical(&cwd.join(path));
        let text = absolute.to_string_lossy();
        if HARMLESS_DEVICES.contains(&text.as_ref()) || text.starts_with("/dev/fd/") {
            return Place::Device;
        }
        let real = real_path(&absolute);
        if real == self.root.join(".git") || real.starts_with(self.root.join(".git")) {
            Place::GitLink
        } else if real.starts_with(&self.root) {
            Place::Inside
        } else {
            Place::Outside(real)
        }
    }

    /// The directory `path` names, for `cd`: inside, or where it leads.
    pub fn directory(&self, path: &str, cwd: &Path) -> Result<PathBuf, PathBuf> {
        let real = real_path(&lexical(&cwd.join(path)));
        if real.starts_with(&self.root) { Ok(real) } else { Err(real) }
    }
}

/// `..` and `.` folded without touching the file system (`/a/b/../c` is `/a/c`).
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Follows the symlinks of the longest prefix of `path` that exists; the rest is kept as is.
pub fn real_path(path: &Path) -> PathBuf {
    let mut existing = path.to_owned();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(&existing) {
            let mut out = real;
            out.extend(rest.iter().rev());
            return lexical(&out);
        }
        match (existing.file_name().map(|n| n.to_owned()), existing.parent()) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_owned();
            }
            _ => return path.to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containment_is_by_components_and_follows_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("wt-main");
        let sibling = dir.path().join("wt-main2");
        std::fs::create_dir_all(root.join("src")).unwrap();
        std::fs::create_dir_all(&sibling).unwrap();
        std::os::unix::fs::symlink(&sibling, root.join("escape")).unwrap();
        let wt = Worktree::new(&root);
        assert_eq!(wt.place("src/new.rs", &root), Place::Inside);
        assert_eq!(wt.place("src/../../wt-main/x", &root), Place::Inside);
        assert!(matches!(wt.place("../wt-main2/x", &root), Place::Outside(_)));
        assert!(matches!(wt.place(&sibling.join("x").to_string_lossy(), &root), Place::Outside(_)));
        assert!(matches!(wt.place("escape/x", &root), Place::Outside(_)), "a symlink out is outside");
        assert_eq!(wt.place(".git", &root), Place::GitLink);
        assert_eq!(wt.place("/dev/null", &root), Place::Device);
        assert_eq!(wt.place("not/yet/made.txt", &root.join("src")), Place::Inside);
    }
}
