//! Where a path really is, resolved as the kernel does: component by component from the
//! working directory, following each symlink where it stands, so `link/..` is the parent of the
//! link's target, not the folder holding the link. Containment is by path components, never by
//! string prefix (`/r/wt-main2` is not inside `/r/wt-main`).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// Devices every command may write to.
const HARMLESS_DEVICES: &[&str] = &["/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"];

/// The names of the standard descriptors under `/dev`.
const STANDARD_DESCRIPTORS: &[(&str, u32)] = &[("/dev/stdin", 0), ("/dev/stdout", 1), ("/dev/stderr", 2)];

/// Symlinks followed in one resolution before giving up, as the kernel's ELOOP.
const MAX_LINKS: usize = 40;

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

    /// Where `path` (relative to the hook's `cwd`) is.
    pub fn place(&self, path: &str, cwd: &Path) -> Place {
        self.place_from(path, &real_path(cwd), &[])
    }

    /// Where `path` is, relative to the physical directory `dir`, with `links` (symlinks the
    /// command made before this point) followed as if they existed. A path through an open
    /// descriptor (`/dev/fd/5/x`: `x` in the folder open on 5) leads where wt cannot see from
    /// here: it is outside, as written (the Bash policy follows the descriptors a command opens,
    /// `Checker::write_target`).
    pub fn place_from(&self, path: &str, dir: &Path, links: &[(PathBuf, PathBuf)]) -> Place {
        let text = lexical(&dir.join(path));
        if is_device(&text) {
            return Place::Device;
        }
        if through_descriptor(&text).is_some() {
            return Place::Outside(text);
        }
        self.place_of(&resolve(Path::new(path), dir, links))
    }

    /// Where an already resolved path is.
    pub fn place_of(&self, real: &Path) -> Place {
        if real.starts_with(self.root.join(".git")) {
            Place::GitLink
        } else if real.starts_with(&self.root) {
            Place::Inside
        } else {
            Place::Outside(real.to_owned())
        }
    }

    pub fn contains(&self, real: &Path) -> bool {
        real.starts_with(&self.root)
    }
}

/// Whether `lexical` (a path with `..` folded) is a device every command may write to: one of
/// `HARMLESS_DEVICES`, or an open descriptor itself (`/dev/fd/5`; what is open on it is the
/// Bash policy's business). `/dev/fd/5/x` is not a device: it is a path inside the folder open
/// on 5.
pub fn is_device(lexical: &Path) -> bool {
    let text = lexical.to_string_lossy();
    HARMLESS_DEVICES.contains(&text.as_ref())
        || text
            .strip_prefix("/dev/fd/")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// A path that goes through an open descriptor: `/dev/fd/N[/rest]`, `/dev/stdin`,
/// `/dev/stdout` or `/dev/stderr` (`[/rest]`). Returns the descriptor and the rest (empty for
/// the descriptor itself). `u32::MAX` stands for a number too large to be a descriptor.
pub fn through_descriptor(lexical: &Path) -> Option<(u32, PathBuf)> {
    for (name, fd) in STANDARD_DESCRIPTORS {
        if let Ok(rest) = lexical.strip_prefix(name) {
            return Some((*fd, rest.to_owned()));
        }
    }
    let mut parts = lexical.strip_prefix("/dev/fd").ok()?.components();
    let number = parts.next()?.as_os_str().to_str()?;
    if !number.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((number.parse().unwrap_or(u32::MAX), parts.as_path().to_owned()))
}

/// `..` and `.` folded without touching the file system (`/a/b/../c` is `/a/c`): how bash's
/// `cd` (without `-P`) computes the new `$PWD`.
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

/// `path` resolved from the physical directory `dir` as the kernel would: each symlink is
/// followed where it stands (also links the command made, in `links`), `..` goes to the parent
/// of what is really there. Past the first component that does not exist, the rest is folded
/// lexically (nothing there can be a symlink yet).
pub fn resolve(path: &Path, dir: &Path, links: &[(PathBuf, PathBuf)]) -> PathBuf {
    let mut out = if path.is_absolute() { PathBuf::from("/") } else { dir.to_owned() };
    let mut pending: VecDeque<OsString> = VecDeque::new();
    push_components(&mut pending, path, false);
    let mut followed = 0;
    let mut exists = true;
    while let Some(name) = pending.pop_front() {
        match name.to_str() {
            Some("/") => out = PathBuf::from("/"),
            Some(".") => {}
            Some("..") => {
                out.pop();
            }
            _ => {
                out.push(&name);
                let target = links.iter().rev().find(|(link, _)| *link == out).map(|(_, t)| t.clone());
                let target = target.or_else(|| if exists { link_target(&out, &mut exists) } else { None });
                if let Some(target) = target {
                    followed += 1;
                    if followed > MAX_LINKS {
                        return out;
                    }
                    out.pop();
                    push_components(&mut pending, &target, true);
                }
            }
        }
    }
    out
}

/// The target of `path` when it is a symlink; clears `exists` when it is not there at all.
fn link_target(path: &Path, exists: &mut bool) -> Option<PathBuf> {
    match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::read_link(path).ok(),
        Ok(_) => None,
        Err(_) => {
            *exists = false;
            None
        }
    }
}

/// Puts `path`'s components in `pending`, at the front when `front` (a link's target, read
/// before what followed the link).
fn push_components(pending: &mut VecDeque<OsString>, path: &Path, front: bool) {
    let names: Vec<OsString> = path
        .components()
        .map(|c| match c {
            Component::RootDir | Component::Prefix(_) => OsString::from("/"),
            Component::CurDir => OsString::from("."),
            Component::ParentDir => OsString::from(".."),
            Component::Normal(name) => name.to_owned(),
        })
        .collect();
    if front {
        for name in names.into_iter().rev() {
            pending.push_front(name);
        }
    } else {
        pending.extend(names);
    }
}

/// `path` resolved from the root: every symlink followed (`/tmp/x` on a system where `/tmp` is
/// a link is its target's `x`).
pub fn real_path(path: &Path) -> PathBuf {
    match std::env::current_dir() {
        Ok(dir) if path.is_relative() => resolve(path, &dir, &[]),
        _ => resolve(path, Path::new("/"), &[]),
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
        let root = wt.root().to_owned();
        assert_eq!(wt.place("src/new.rs", &root), Place::Inside);
        assert_eq!(wt.place("src/../../wt-main/x", &root), Place::Inside);
        assert!(matches!(wt.place("../wt-main2/x", &root), Place::Outside(_)));
        assert!(matches!(wt.place(&sibling.join("x").to_string_lossy(), &root), Place::Outside(_)));
        assert!(matches!(wt.place("escape/x", &root), Place::Outside(_)), "a symlink out is outside");
        assert_eq!(wt.place(".git", &root), Place::GitLink);
        assert_eq!(wt.place("/dev/null", &root), Place::Device);
        assert_eq!(wt.place("not/yet/made.txt", &root.join("src")), Place::Inside);
    }

    #[test]
    fn only_a_descriptor_itself_is_a_device_a_path_through_it_is_not() {
        assert!(is_device(Path::new("/dev/fd/5")));
        assert!(is_device(Path::new("/dev/null")));
        assert!(!is_device(Path::new("/dev/fd/5/x")));
        assert!(!is_device(Path::new("/dev/fd/")));
        assert_eq!(through_descriptor(Path::new("/dev/fd/5/a/b")), Some((5, PathBuf::from("a/b"))));
        assert_eq!(through_descriptor(Path::new("/dev/fd/5")), Some((5, PathBuf::new())));
        assert_eq!(through_descriptor(Path::new("/dev/stdin/x")), Some((0, PathBuf::from("x"))));
        assert_eq!(through_descriptor(Path::new("/dev/stdoutx")), None);
        assert_eq!(
            through_descriptor(Path::new("/dev/fd/99999999999/x")),
            Some((u32::MAX, PathBuf::from("x")))
        );
        let dir = tempfile::tempdir().unwrap();
        let wt = Worktree::new(dir.path());
        let root = wt.root().to_owned();
        assert_eq!(wt.place("/dev/fd/1", &root), Place::Device);
        assert_eq!(wt.place("/dev/fd/5/x", &root), Place::Outside(PathBuf::from("/dev/fd/5/x")));
    }

    #[test]
    fn dot_dot_after_a_symlink_leaves_from_the_links_target() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("wt");
        let deep = dir.path().join("a/b");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&deep).unwrap();
        std::os::unix::fs::symlink(&deep, root.join("link")).unwrap();
        let wt = Worktree::new(&root);
        let root = wt.root().to_owned();
        // Lexically `link/../x` is `<root>/x`; the kernel goes to `<tmp>/a/x`.
        assert!(matches!(wt.place("link/../x", &root), Place::Outside(p) if p.ends_with("a/x")));
        let made = vec![(root.join("new"), PathBuf::from("/etc"))];
        assert!(
            matches!(wt.place_from("new/passwd", &root, &made), Place::Outside(p) if p == Path::new("/etc/passwd"))
        );
    }
}
