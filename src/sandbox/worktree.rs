//! The linked worktree a command is contained in, read from git's own files (its `.git` file,
//! the admin folder's `commondir`, `gitdir` and `HEAD`) without starting git.

use std::path::{Path, PathBuf};

use super::SandboxError;

/// A linked worktree: `<root>/.git` names its admin folder `<common>/worktrees/<id>`.
#[derive(Debug, Clone)]
pub struct TaskWorktree {
    root: PathBuf,
    admin: PathBuf,
    common: PathBuf,
}

/// What a worktree's HEAD points at.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Head {
    Branch(String),
    /// Detached at a commit (or another ref outside `refs/heads/`).
    Other(String),
}

impl std::fmt::Display for Head {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Head::Branch(branch) => write!(f, "branch {branch}"),
            Head::Other(target) => write!(f, "{target} (no branch)"),
        }
    }
}

impl TaskWorktree {
    pub fn open(root: &Path) -> Result<TaskWorktree, SandboxError> {
        let not_linked = |reason: String| SandboxError::NotALinkedWorktree { root: root.to_owned(), reason };
        let root = root.canonicalize().map_err(|err| not_linked(format!("cannot open it: {err}")))?;
        let dot_git = root.join(".git");
        if dot_git.is_dir() {
            return Err(not_linked(
                "it is a main checkout, whose .git folder holds the config and hooks of every worktree"
                    .into(),
            ));
        }
        let link = std::fs::read_to_string(&dot_git)
            .map_err(|err| not_linked(format!("cannot read {}: {err}", dot_git.display())))?;
        let admin = link
            .trim()
            .strip_prefix("gitdir:")
            .map(|path| root.join(path.trim()))
            .ok_or_else(|| not_linked(format!("{} does not start with `gitdir:`", dot_git.display())))?;
        let admin = admin.canonicalize().map_err(|err| not_linked(format!("its git folder: {err}")))?;
        let common = std::fs::read_to_string(admin.join("commondir"))
            .map_err(|err| not_linked(format!("{} has no commondir: {err}", admin.display())))?;
        let common = admin
            .join(common.trim())
            .canonicalize()
            .map_err(|err| not_linked(format!("its repository's git folder: {err}")))?;
        if admin.parent() != Some(common.join("worktrees").as_path()) {
            return Err(not_linked(format!("{} is not in {}/worktrees", admin.display(), common.display())));
        }
        let registered = std::fs::read_to_string(admin.join("gitdir")).unwrap_or_default();
        if Path::new(registered.trim()).canonicalize().ok() != Some(dot_git.clone()) {
            return Err(not_linked(format!("git records another path for it in {}/gitdir", admin.display())));
        }
        Ok(TaskWorktree { root, admin, common })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `<common>/worktrees/<id>`: its index, HEAD, logs and per-worktree refs.
    #[cfg(test)]
    pub fn admin(&self) -> &Path {
        &self.admin
    }

    /// The repository's git folder, shared by every worktree.
    pub fn common(&self) -> &Path {
        &self.common
    }

    /// The main checkout (relative `[sandbox] allow_write` entries start there).
    pub fn repo_root(&self) -> &Path {
        self.common.parent().unwrap_or(&self.common)
    }

    pub fn head(&self) -> Result<Head, SandboxError> {
        let path = self.admin.join("HEAD");
        let text = std::fs::read_to_string(&path).map_err(|source| SandboxError::Read { path, source })?;
        let text = text.trim();
        Ok(match text.strip_prefix("ref: refs/heads/") {
            Some(branch) => Head::Branch(branch.to_owned()),
            None => Head::Other(text.strip_prefix("ref: ").unwrap_or(text).to_owned()),
        })
    }

    /// Refuses a worktree that is not on `branch` (a task must commit on its own branch), but for
    /// one whose HEAD is detached by a rebase of `branch` itself (a conflict `wt rebase` left for
    /// the agent to resolve: the rebase ends on `branch`).
    pub fn check_branch(&self, branch: &str) -> Result<(), SandboxError> {
        let rebasing = |state: &str| {
            let head = std::fs::read_to_string(self.admin.join(state).join("head-name")).unwrap_or_default();
            head.trim().strip_prefix("refs/heads/") == Some(branch)
        };
        match self.head()? {
            Head::Branch(actual) if actual == branch => Ok(()),
            Head::Other(_) if rebasing("rebase-merge") || rebasing("rebase-apply") => Ok(()),
            actual => Err(SandboxError::WrongBranch {
                root: self.root.clone(),
                expected: branch.to_owned(),
                actual,
            }),
        }
    }

    /// What a commit in this worktree writes besides the worktree itself, with the objects going
    /// to `objects` (the task's own object folder, see `Policy::objects`).
    pub fn git_write_folders(&self, objects: &Path) -> [(PathBuf, &'static str); 4] {
        [
            (self.admin.clone(), "the worktree's git folder (index, HEAD, logs)"),
            (objects.to_owned(), "the task's own objects (the repository's are read, not written)"),
            (self.common.join("refs").join("heads"), "the repository's branches"),
            // Not all of `logs`: `logs/HEAD` is the main checkout's, whose moves the check after
            // a task trusts as yours.
            (self.common.join("logs").join("refs").join("heads"), "the branches' reflogs"),
        ]
    }

    /// The repository's object folder, which a task reads through git's alternates.
    pub fn objects(&self) -> PathBuf {
        self.common.join("objects")
    }

    /// `<common>/spectacular/objects/<worktree folder name>`: the objects a task makes, until wt
    /// takes them into the repository.
    pub fn default_objects(&self) -> PathBuf {
        self.common.join("spectacular").join("objects").join(self.name())
    }

    fn name(&self) -> std::ffi::OsString {
        self.root.file_name().map(|n| n.to_owned()).unwrap_or_else(|| "worktree".into())
    }

    /// `<common>/spectacular/tmp/<worktree folder name>`: private to this worktree, outside it
    /// (so temporary files never show up in `git status`), removed with the run's state.
    pub fn default_tmp(&self) -> PathBuf {
        self.common.join("spectacular").join("tmp").join(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fake linked worktree the way git lays one out, without running git.
    fn layout(base: &Path, head: &str) -> PathBuf {
        let common = base.join("repo/.git");
        let admin = common.join("worktrees/run1-task-1-1");
        let root = base.join("repo/.worktrees/run1-task-1-1");
        std::fs::create_dir_all(&admin).unwrap();
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join(".git"), format!("gitdir: {}\n", admin.display())).unwrap();
        std::fs::write(admin.join("commondir"), "../..\n").unwrap();
        std::fs::write(admin.join("gitdir"), format!("{}\n", root.join(".git").display())).unwrap();
        std::fs::write(admin.join("HEAD"), head).unwrap();
        root
    }

    #[test]
    fn a_linked_worktree_knows_its_git_folders() {
        let temp = tempfile::tempdir().unwrap();
        let base = temp.path().canonicalize().unwrap();
        let worktree = TaskWorktree::open(&layout(&base, "ref: refs/heads/task-1-1\n")).unwrap();
        assert_eq!(worktree.common(), base.join("repo/.git"));
        assert_eq!(worktree.admin(), base.join("repo/.git/worktrees/run1-task-1-1"));
        assert_eq!(worktree.repo_root(), base.join("repo"));
        assert_eq!(worktree.default_tmp(), base.join("repo/.git/spectacular/tmp/run1-task-1-1"));
        assert!(worktree.check_branch("task-1-1").is_ok());
        let err = worktree.check_branch("task-1-2").unwrap_err();
        assert!(err.to_string().contains("is on branch task-1-1"), "{err}");
    }

    #[test]
    fn a_detached_head_is_no_branch() {
        let temp = tempfile::tempdir().unwrap();
        let worktree = TaskWorktree::open(&layout(temp.path(), "0123abcd\n")).unwrap();
        assert_eq!(worktree.head().unwrap(), Head::Other("0123abcd".into()));
        assert!(worktree.check_branch("main").is_err());
    }

    #[test]
    fn a_main_checkout_or_a_plain_folder_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(temp.path().join("main/.git")).unwrap();
        let err = TaskWorktree::open(&temp.path().join("main")).unwrap_err();
        assert!(err.to_string().contains("main checkout"), "{err}");
        assert!(TaskWorktree::open(temp.path()).is_err());
    }

    #[test]
    fn a_worktree_git_does_not_list_is_refused() {
        let temp = tempfile::tempdir().unwrap();
        let root = layout(temp.path(), "ref: refs/heads/x\n");
        let admin = temp.path().join("repo/.git/worktrees/run1-task-1-1");
        std::fs::write(admin.join("gitdir"), "/elsewhere/.git\n").unwrap();
        let err = TaskWorktree::open(&root).unwrap_err();
        assert!(err.to_string().contains("another path"), "{err}");
    }
}
