//! Making a used worktree fit for the next task, or saying why it is not. A worktree is fit when
//! its tracked files are exactly its HEAD commit's (checked against an index wt's own git wrote,
//! not the one the task left), nothing untracked is left but the ignored paths the policy keeps
//! (`git clean` says when it could not remove something), HEAD is detached, no process works in
//! it, and its git admin folder holds nothing but what every worktree has. Whatever else a task
//! may have left — an admin folder linking it to another repository or folder, a rebase or merge
//! under way, refs or configuration of the worktree's own, sparse-checkout, a split index, locks,
//! a submodule's files, a tracked file hard-linked from elsewhere, files git cannot remove — makes
//! it unfit: it is removed, never reused. So does, when it is taken, kept output that the commit
//! it is checked out at does not ignore.

use std::path::{Path, PathBuf};

use crate::git;
use crate::store::StateLayout;

/// Why a worktree cannot be recycled.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unfit(pub String);

impl<E: std::fmt::Display> From<E> for Unfit {
    fn from(err: E) -> Self {
        Unfit(err.to_string())
    }
}

/// What every worktree's admin folder holds.
const ADMIN_FILES: &[&str] = &["HEAD", "commondir", "gitdir", "index", "locked", "logs"];

/// Leftovers of ordinary work (a commit's message, the last reset's or fetch's tip) that say
/// something of the last task and nothing the next one needs: removed.
const ADMIN_LEFTOVERS: &[&str] = &["ORIG_HEAD", "COMMIT_EDITMSG", "FETCH_HEAD", "AUTO_MERGE"];

/// Cleans `worktree` (admin folder `admin`) in place: tracked files back to HEAD's, untracked
/// files gone but those `keep` matches, HEAD detached. The caller has made sure nothing in it
/// is work to keep (every commit is on its branch; no uncommitted file is wanted).
pub fn make_fit(layout: &StateLayout, worktree: &Path, admin: &Path, keep: &[String]) -> Result<(), Unfit> {
    check_unused(worktree)?;
    check_links(worktree, admin)?;
    check_admin(admin)?;
    restore_trusted_index(layout, admin)?;
    // Every file whose stat data differs from the trusted index is compared by content, then
    // whatever differs from HEAD is written again (and the index is HEAD's): together what
    // `git reset --hard` does, without writing again a file that only looks changed.
    git::refresh_index(worktree)?;
    git::detach_hard(worktree)?;
    check_tracked_paths(worktree)?;
    git::clean_except(worktree, keep)?;
    remove_leftovers(admin)?;
    check_admin(admin)?;
    if git::current_branch(worktree)?.is_some() {
        return Err(Unfit("it is still on a branch".into()));
    }
    Ok(())
}

/// Checks a parked worktree before it is handed out: what could change while it waited without
/// any task (its files were checked when it was parked).
pub fn check_parked(worktree: &Path, admin: &Path) -> Result<(), Unfit> {
    check_unused(worktree)?;
    check_links(worktree, admin)?;
    check_admin(admin)?;
    if git::current_branch(worktree)?.is_some() {
        return Err(Unfit("it is on a branch".into()));
    }
    Ok(())
}

/// Checks a worktree just checked out at `commitish` from the pool: what it kept was ignored at
/// the commit it was parked at, and must be at this one too — else it would be the next task's to
/// see as its own, and to commit (one task's commit, or a `.gitignore` it left in a kept folder,
/// may ignore what the next task's commit does not).
pub fn check_untracked(worktree: &Path, commitish: &str) -> Result<(), Unfit> {
    let found = git::unaccounted_untracked(worktree)?;
    if let Some(first) = found.first() {
        return Err(Unfit(format!("it holds {first}, which {commitish} does not ignore on its own")));
    }
    Ok(())
}

/// Copies the worktree's index as wt's git just wrote it to the pool's record, out of any task's
/// reach (see `StateLayout::trusted_index`).
pub fn save_trusted_index(layout: &StateLayout, admin: &Path) -> std::io::Result<()> {
    let copy = layout.trusted_index(&admin_name(admin));
    copy_index(&admin.join("index"), &copy)
}

/// Puts the trusted copy back as the worktree's index. Every file whose stat data git recorded
/// there is unchanged since (its ctime included) really is; any other is read again and compared
/// by content. Without a copy nothing the index says can be trusted.
fn restore_trusted_index(layout: &StateLayout, admin: &Path) -> Result<(), Unfit> {
    let copy = layout.trusted_index(&admin_name(admin));
    if !copy.is_file() {
        return Err(Unfit("wt has no index of its own making for it (made by an older wt?)".into()));
    }
    copy_index(&copy, &admin.join("index"))?;
    Ok(())
}

/// Copies an index through a temporary file renamed into place, with the mtime of the one copied:
/// git takes that mtime for when the index was written, and compares by content every file
/// whose mtime is not older (racily clean) — one changed in the second it was written, whose
/// stat data, ctime included to the second, can match the index's. Not synced to disk: a copy
/// lost or torn by a crash only costs the worktree its reuse (an index git cannot read makes it
/// unfit; any index git wrote, however old, is still one whose stat data can be trusted).
fn copy_index(from: &Path, to: &Path) -> std::io::Result<()> {
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let temp = to.with_extension(format!("tmp-{}", std::process::id()));
    std::fs::copy(from, &temp)?;
    let written = std::fs::metadata(from)?.modified()?;
    std::fs::File::options().write(true).open(&temp)?.set_modified(written)?;
    std::fs::rename(&temp, to)
}

pub fn admin_name(admin: &Path) -> String {
    admin.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
}

/// A process whose working folder is inside the worktree (an agent left running, your shell or
/// editor) would find its folder moved away or handed to another task.
fn check_unused(worktree: &Path) -> Result<(), Unfit> {
    let worktree = worktree.canonicalize()?;
    let Ok(processes) = std::fs::read_dir("/proc") else { return Ok(()) };
    for entry in processes.flatten() {
        let name = entry.file_name();
        let Some(pid) = name.to_str().filter(|n| n.bytes().all(|b| b.is_ascii_digit())) else { continue };
        if std::fs::read_link(entry.path().join("cwd")).is_ok_and(|cwd| cwd.starts_with(&worktree)) {
            return Err(Unfit(format!("process {pid} works in it")));
        }
    }
    Ok(())
}

/// The admin folder links the worktree to this repository and no other: git in the worktree reads
/// the config (and runs the filters it names) of the repository its `commondir` names, and its
/// `gitdir` says which folder is the worktree. Both are the task's to write; the check after a
/// task puts them back, but not what a process it left behind writes later.
fn check_links(worktree: &Path, admin: &Path) -> Result<(), Unfit> {
    let read = |name: &str| std::fs::read_to_string(admin.join(name)).map(|text| text.trim_end().to_owned());
    let common = admin.parent().and_then(Path::parent).ok_or_else(|| Unfit("it has no git folder".into()))?;
    let named = admin.join(read("commondir")?);
    if !same_folder(&named, common) {
        return Err(Unfit(format!("its git folder links it to {}", named.display())));
    }
    let gitdir = PathBuf::from(read("gitdir")?);
    if !same_folder(&gitdir, &worktree.join(".git")) {
        return Err(Unfit(format!("its git folder says it is at {}", gitdir.display())));
    }
    Ok(())
}

fn same_folder(a: &Path, b: &Path) -> bool {
    matches!((a.canonicalize(), b.canonicalize()), (Ok(a), Ok(b)) if a == b)
}

/// The admin folder holds what every worktree has, and leftovers of ordinary work.
fn check_admin(admin: &Path) -> Result<(), Unfit> {
    for entry in std::fs::read_dir(admin)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        let kind = entry.file_type()?;
        let expected = match name.as_str() {
            "logs" => kind.is_dir() && only_head_log(&entry.path())?,
            _ if ADMIN_FILES.contains(&name.as_str()) || ADMIN_LEFTOVERS.contains(&name.as_str()) => {
                kind.is_file()
            }
            _ => false,
        };
        if !expected {
            return Err(Unfit(format!("its git folder holds {}", describe_admin_entry(&name))));
        }
    }
    Ok(())
}

fn only_head_log(logs: &Path) -> std::io::Result<bool> {
    for entry in std::fs::read_dir(logs)? {
        let entry = entry?;
        if entry.file_name() != "HEAD" || !entry.file_type()?.is_file() {
            return Ok(false);
        }
    }
    Ok(true)
}

fn describe_admin_entry(name: &str) -> String {
    let what = match name {
        "rebase-merge" | "rebase-apply" | "REBASE_HEAD" => "a rebase under way",
        "MERGE_HEAD" | "MERGE_MSG" | "MERGE_MODE" | "MERGE_RR" => "a merge under way",
        "CHERRY_PICK_HEAD" | "REVERT_HEAD" | "sequencer" => "a cherry-pick or revert under way",
        "BISECT_LOG"
        | "BISECT_START"
        | "BISECT_TERMS"
        | "BISECT_EXPECTED_REV"
        | "BISECT_ANCESTORS_OK"
        | "BISECT_NAMES"
        | "BISECT_RUN" => "a bisect under way",
        "refs" => "refs of its own (refs/worktree, refs/bisect)",
        "logs" => "reflogs of its own refs",
        "config.worktree" => "git configuration of its own",
        "info" => "sparse-checkout or exclude rules of its own",
        "modules" => "submodules",
        _ if name.ends_with(".lock") => "a lock file",
        _ if name.starts_with("sharedindex.") => "a split index",
        _ => "a file git does not make there",
    };
    format!("{what} ({name})")
}

/// What the tracked paths may hide that no checkout or clean undoes: a submodule's folder (a
/// gitlink) holding files, and a file hard-linked elsewhere (from kept build output, say: the next
/// task writing there would change it).
fn check_tracked_paths(worktree: &Path) -> Result<(), Unfit> {
    use std::os::unix::fs::MetadataExt;
    for (path, mode) in git::index_entries(worktree)? {
        if mode == git::GITLINK_MODE {
            if std::fs::read_dir(&path).is_ok_and(|mut entries| entries.next().is_some()) {
                return Err(Unfit(format!("a submodule's files are in {}", path.display())));
            }
        } else if std::fs::symlink_metadata(&path).is_ok_and(|meta| meta.is_file() && meta.nlink() > 1) {
            return Err(Unfit(format!("{} is hard-linked from elsewhere", path.display())));
        }
    }
    Ok(())
}

fn remove_leftovers(admin: &Path) -> std::io::Result<()> {
    for name in ADMIN_LEFTOVERS {
        match std::fs::remove_file(admin.join(name)) {
            Err(err) if err.kind() != std::io::ErrorKind::NotFound => return Err(err),
            _ => {}
        }
    }
    Ok(())
}

/// Removes `path` and everything below it, making folders writable first where a task took that
/// away; a missing path is fine.
pub fn remove_tree(path: &Path) -> std::io::Result<()> {
    match std::fs::symlink_metadata(path) {
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(err) => return Err(err),
        Ok(meta) if !meta.is_dir() => return std::fs::remove_file(path),
        Ok(_) => {}
    }
    if std::fs::remove_dir_all(path).is_ok() {
        return Ok(());
    }
    make_writable(path);
    std::fs::remove_dir_all(path)
}

fn make_writable(dir: &Path) {
    use std::os::unix::fs::PermissionsExt;
    let mut pending: Vec<PathBuf> = vec![dir.to_owned()];
    while let Some(folder) = pending.pop() {
        if let Ok(meta) = std::fs::symlink_metadata(&folder)
            && meta.is_dir()
        {
            let mode = meta.permissions().mode() | 0o700;
            let _ = std::fs::set_permissions(&folder, std::fs::Permissions::from_mode(mode));
            for entry in std::fs::read_dir(&folder).into_iter().flatten().flatten() {
                if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
                    pending.push(entry.path());
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_admin_folder_with_state_of_its_own_is_unfit() {
        let dir = tempfile::tempdir().unwrap();
        let admin = dir.path();
        for file in ["HEAD", "commondir", "gitdir", "index", "locked", "ORIG_HEAD"] {
            std::fs::write(admin.join(file), "x").unwrap();
        }
        std::fs::create_dir_all(admin.join("logs")).unwrap();
        std::fs::write(admin.join("logs/HEAD"), "x").unwrap();
        assert_eq!(check_admin(admin), Ok(()));
        for (made, folder, said) in [
            ("rebase-merge", true, "a rebase under way"),
            ("refs", true, "refs of its own"),
            ("config.worktree", false, "git configuration of its own"),
            ("index.lock", false, "a lock file"),
            ("info", true, "sparse-checkout"),
            ("sharedindex.0123", false, "a split index"),
        ] {
            let path = admin.join(made);
            if folder {
                std::fs::create_dir_all(&path).unwrap();
            } else {
                std::fs::write(&path, "x").unwrap();
            }
            let Err(Unfit(reason)) = check_admin(admin) else { panic!("{made} passed") };
            assert!(reason.contains(said), "{made}: {reason}");
            remove_tree(&path).unwrap();
        }
        std::fs::create_dir_all(admin.join("logs/refs/worktree")).unwrap();
        assert!(check_admin(admin).is_err(), "a per-worktree ref's reflog");
    }

    #[test]
    fn a_tree_made_unwritable_is_still_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("t");
        std::fs::create_dir_all(tree.join("a/b")).unwrap();
        std::fs::write(tree.join("a/b/f"), "x").unwrap();
        std::fs::set_permissions(tree.join("a/b"), std::fs::Permissions::from_mode(0o500)).unwrap();
        std::fs::set_permissions(tree.join("a"), std::fs::Permissions::from_mode(0o500)).unwrap();
        remove_tree(&tree).unwrap();
        assert!(!tree.exists());
        remove_tree(&tree).unwrap();
    }
}
