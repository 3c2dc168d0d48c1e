use std::path::{Path, PathBuf};

use git2::{BranchType, Repository};

use super::GitError;

/// The user's repository: its main working tree and the git directory all worktrees share.
#[derive(Debug, Clone)]
pub struct Repo {
    root: PathBuf,
    common_dir: PathBuf,
}

impl Repo {
    /// Finds the repository containing `from` (from a linked worktree too: the root is always the
    /// main working tree).
    pub fn discover(from: &Path) -> Result<Repo, GitError> {
        let found =
            Repository::discover(from).map_err(|_| GitError::NotARepository { path: from.to_owned() })?;
        let common_dir = canonical(found.commondir());
        let main = Repository::open(&common_dir)?;
        if main.is_bare() {
            return Err(GitError::Bare { path: common_dir });
        }
        let root = main.workdir().map(canonical).ok_or(GitError::Bare { path: common_dir.clone() })?;
        Ok(Repo { root, common_dir })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn common_dir(&self) -> &Path {
        &self.common_dir
    }

    fn open(&self) -> Result<Repository, GitError> {
        Ok(Repository::open(&self.root)?)
    }

    /// A value of the repository's git configuration (with the user's and the system's, as git
    /// reads them); None when it is not set.
    pub fn config_value(&self, key: &str) -> Result<Option<String>, GitError> {
        let config = self.open()?.config()?;
        match config.get_string(key) {
            Ok(value) => Ok(Some(value)),
            Err(err) if err.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// The branch checked out in the main working tree, or None when it is detached.
    pub fn main_branch(&self) -> Result<Option<String>, GitError> {
        let repo = self.open()?;
        let head = repo.find_reference("HEAD")?;
        let target = head.symbolic_target()?;
        Ok(target.and_then(|target| target.strip_prefix("refs/heads/")).map(str::to_owned))
    }

    pub fn branch_exists(&self, name: &str) -> Result<bool, GitError> {
        Ok(self.branch_commit(name)?.is_some())
    }

    /// The commit a local branch points at.
    pub fn branch_commit(&self, name: &str) -> Result<Option<String>, GitError> {
        let repo = self.open()?;
        match repo.find_branch(name, BranchType::Local) {
            Ok(branch) => Ok(branch.get().target().map(|oid| oid.to_string())),
            Err(err) if err.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// Local branches whose name starts with `prefix`, sorted.
    pub fn branches_with_prefix(&self, prefix: &str) -> Result<Vec<String>, GitError> {
        let repo = self.open()?;
        let mut names = Vec::new();
        for branch in repo.branches(Some(BranchType::Local))? {
            let (branch, _) = branch?;
            if let Some(name) = branch.name()?
                && name.starts_with(prefix)
            {
                names.push(name.to_owned());
            }
        }
        names.sort();
        Ok(names)
    }

    /// Whether `ancestor` is `descendant` or one of its ancestors.
    pub fn is_ancestor(&self, ancestor: &str, descendant: &str) -> Result<bool, GitError> {
        let repo = self.open()?;
        let (a, d) = (git2::Oid::from_str(ancestor)?, git2::Oid::from_str(descendant)?);
        Ok(a == d || repo.graph_descendant_of(d, a)?)
    }

    /// The commit the full reference `name` (`refs/remotes/origin/main`) points at; None when it
    /// does not exist.
    pub fn reference_commit(&self, name: &str) -> Result<Option<String>, GitError> {
        match self.open()?.find_reference(name) {
            Ok(found) => Ok(Some(found.peel_to_commit()?.id().to_string())),
            Err(err) if err.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// Whether `descendant` contains `ancestor`, false when either commit is not here (a commit
    /// someone else pushed and nobody fetched).
    pub fn contains_commit(&self, descendant: &str, ancestor: &str) -> Result<bool, GitError> {
        let repo = self.open()?;
        let present = |sha: &str| git2::Oid::from_str(sha).is_ok_and(|oid| repo.find_commit(oid).is_ok());
        if !present(descendant) || !present(ancestor) {
            return Ok(false);
        }
        self.is_ancestor(ancestor, descendant)
    }

    /// The commit this clone itself last pushed to `remote`'s `branch`, as git's own record says:
    /// the remote-tracking ref's newest reflog entry, when a push wrote it (`update by push`) and
    /// the ref still points there. A fetch that moved the ref since (someone else's push fetched)
    /// writes a newer entry of its own, so it never passes for ours.
    pub fn pushed_from_here(&self, remote: &str, branch: &str) -> Result<Option<String>, GitError> {
        let repo = self.open()?;
        let name = format!("refs/remotes/{remote}/{branch}");
        let current = match repo.find_reference(&name) {
            Ok(found) => found.target(),
            Err(err) if err.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(err) => return Err(err.into()),
        };
        let reflog = repo.reflog(&name)?;
        let Some(newest) = reflog.get(0) else { return Ok(None) };
        let by_push = matches!(newest.message(), Ok(Some(message)) if message.starts_with("update by push"));
        Ok((by_push && Some(newest.id_new()) == current).then(|| newest.id_new().to_string()))
    }

    /// Whether a remote named `name` is configured.
    pub fn has_remote(&self, name: &str) -> Result<bool, GitError> {
        match self.open()?.find_remote(name) {
            Ok(_) => Ok(true),
            Err(err) if err.code() == git2::ErrorCode::NotFound => Ok(false),
            Err(err) => Err(err.into()),
        }
    }

    pub fn reference_exists(&self, name: &str) -> Result<bool, GitError> {
        match self.open()?.find_reference(name) {
            Ok(_) => Ok(true),
            Err(err) if err.code() == git2::ErrorCode::NotFound => Ok(false),
            Err(err) => Err(err.into()),
        }
    }

    /// Number of commits reachable from `to` but not from `from` (`git rev-list --count from..to`).
    pub fn count_commits(&self, from: &str, to: &str) -> Result<usize, GitError> {
        let repo = self.open()?;
        let mut walk = repo.revwalk()?;
        walk.push(git2::Oid::from_str(to)?)?;
        walk.hide(git2::Oid::from_str(from)?)?;
        Ok(walk.count())
    }

    /// The best common ancestor of two commits (`git merge-base`); None when they share none.
    pub fn merge_base(&self, a: &str, b: &str) -> Result<Option<String>, GitError> {
        let repo = self.open()?;
        match repo.merge_base(git2::Oid::from_str(a)?, git2::Oid::from_str(b)?) {
            Ok(oid) => Ok(Some(oid.to_string())),
            Err(err) if err.code() == git2::ErrorCode::NotFound => Ok(None),
            Err(err) => Err(err.into()),
        }
    }

    /// Whether the main checkout's index holds `path` (relative to the root): a file the user
    /// tracks, which wt must never write.
    pub fn is_tracked(&self, path: &Path) -> Result<bool, GitError> {
        Ok(self.open()?.index()?.get_path(path, 0).is_some())
    }

    /// The folders of the repository's linked worktrees, as git records them (in-process; no
    /// `git worktree list`).
    pub fn worktree_paths(&self) -> Result<Vec<PathBuf>, GitError> {
        let repo = self.open()?;
        let names = repo.worktrees()?;
        let mut paths = Vec::new();
        for name in names.iter().filter_map(|name| name.ok().flatten()) {
            paths.push(repo.find_worktree(name)?.path().to_owned());
        }
        Ok(paths)
    }

    /// The contents of the files at `paths` in the tree of the commit `reference` points at
    /// (None for a file that does not exist); None when the reference does not exist.
    pub fn read_files_at(
        &self,
        reference: &str,
        paths: &[String],
    ) -> Result<Option<Vec<Option<Vec<u8>>>>, GitError> {
        let repo = self.open()?;
        let tree = match repo.find_reference(reference) {
            Ok(found) => found.peel_to_commit()?.tree()?,
            Err(err) if err.code() == git2::ErrorCode::NotFound => return Ok(None),
            Err(err) => return Err(err.into()),
        };
        let mut files = Vec::with_capacity(paths.len());
        for path in paths {
            let entry = match tree.get_path(Path::new(path)) {
                Ok(entry) => entry,
                Err(err) if err.code() == git2::ErrorCode::NotFound => {
                    files.push(None);
                    continue;
                }
                Err(err) => return Err(err.into()),
            };
            files.push(entry.to_object(&repo)?.as_blob().map(|blob| blob.content().to_vec()));
        }
        Ok(Some(files))
    }
}

fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}
