//! Taking a task's objects into the repository. A task writes its objects into a folder of its
//! own (its sandbox cannot change or remove the repository's); wt then reads each one, which
//! checks that its content has the name it is stored under, and writes it into the repository's
//! object store, which names it by its content again. Nothing a task wrote there can replace an
//! existing object.

use std::path::Path;

use super::{GitError, Repo};

/// What came of taking a task's objects in.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Imported {
    pub objects: usize,
    /// Objects whose content does not match their name, left out.
    pub mislabeled: Vec<String>,
}

impl Repo {
    /// Copies every object under `folder` (loose or packed) into the repository, then empties
    /// the folder. A folder that does not exist holds nothing.
    pub fn import_objects(&self, folder: &Path) -> Result<Imported, GitError> {
        let mut imported = Imported::default();
        if !holds_anything(folder) {
            return Ok(imported);
        }
        let source = git2::Odb::new()?;
        source.add_disk_alternate(&folder.to_string_lossy())?;
        let repo = git2::Repository::open(self.common_dir())?;
        let target = repo.odb()?;
        let mut ids = Vec::new();
        source.foreach(|id| {
            ids.push(*id);
            true
        })?;
        for id in ids {
            match source.read(id) {
                Ok(object) if target.write(object.kind(), object.data())? == id => imported.objects += 1,
                _ => imported.mislabeled.push(id.to_string()),
            }
        }
        clear(folder).map_err(|source| GitError::Io { path: folder.to_owned(), source })?;
        Ok(imported)
    }
}

/// Whether `folder` exists and holds anything (git makes its subfolders only when it writes an
/// object there): most commands make no object, and then there is no repository to open.
pub fn holds_anything(folder: &Path) -> bool {
    std::fs::read_dir(folder).is_ok_and(|mut entries| entries.next().is_some())
}

/// Removes what `folder` holds, keeping the folder itself (the next command of the task writes
/// there again).
fn clear(folder: &Path) -> std::io::Result<()> {
    for entry in std::fs::read_dir(folder)? {
        let path = entry?.path();
        if std::fs::symlink_metadata(&path)?.is_dir() {
            std::fs::remove_dir_all(&path)?;
        } else {
            std::fs::remove_file(&path)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::Cmd;

    #[test]
    fn a_tasks_objects_are_taken_in_and_a_mislabeled_one_left_out() {
        let temp = tempfile::tempdir().unwrap();
        let dir = temp.path().join("repo");
        let task = temp.path().join("task-objects");
        std::fs::create_dir_all(&task).unwrap();
        let git =
            |args: &[&str]| Cmd::new("git").args(args).dir(&dir).read().unwrap().stdout.trim().to_owned();
        Cmd::new("git").args(["init", "-q"]).arg(&dir).read().unwrap();
        let honest = Cmd::new("git")
            .args(["hash-object", "-w", "--stdin"])
            .dir(&dir)
            .env("GIT_OBJECT_DIRECTORY", &task)
            .read();
        // `hash-object --stdin` reads a null stdin: the empty blob.
        let honest = honest.unwrap().stdout.trim().to_owned();
        // A file under another object's name.
        let liar = "0123456789abcdef0123456789abcdef01234567";
        let (fan, rest) = liar.split_at(2);
        std::fs::create_dir_all(task.join(fan)).unwrap();
        std::fs::copy(task.join(&honest[..2]).join(&honest[2..]), task.join(fan).join(rest)).unwrap();
        let repo = Repo::discover(&dir).unwrap();
        let imported = repo.import_objects(&task).unwrap();
        assert_eq!(imported, Imported { objects: 1, mislabeled: vec![liar.to_owned()] });
        assert_eq!(git(&["cat-file", "-t", &honest]), "blob");
        assert!(std::fs::read_dir(&task).unwrap().next().is_none(), "the task's folder is emptied");
    }
}
