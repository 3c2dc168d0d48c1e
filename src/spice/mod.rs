//! The git-spice driver: finds the binary (never Ghostscript's `gs`), checks its version, and
//! offers one typed method per command the engine uses. Every call passes `--no-prompt` first,
//! pins `spice.branchCreate.prefix` to empty so branch names are exactly ours, and gets a null
//! stdin from `process`. Callers serialize calls under the repo lock: git-spice has none.

mod log;
pub mod state;

use std::path::{Path, PathBuf};

pub use log::{Change, ChangeStatus, LoggedBranch, Push};

use crate::error_kind::ErrorKind;
use crate::process::{Cmd, ProcessError};

/// The oldest git-spice whose commands and `--json` output this driver was written against.
pub const MIN_VERSION: (u32, u32, u32) = (0, 31, 0);

const INSTALL_HINT: &str =
    "install git-spice 0.31 or newer (see the README), or set WT_GIT_SPICE to its path";

#[derive(Debug, thiserror::Error)]
pub enum SpiceError {
    #[error("git-spice is not installed (looked for `git-spice` and `gs` on PATH); {INSTALL_HINT}")]
    NotFound,
    #[error("{path} is not git-spice (it printed {printed:?}, probably Ghostscript); {INSTALL_HINT}")]
    NotGitSpice { path: PathBuf, printed: String },
    #[error("{path} is git-spice {version}, older than the {min} wt needs; {INSTALL_HINT}", min = min_version())]
    TooOld { path: PathBuf, version: String },
    #[error("{0}")]
    Command(#[from] ProcessError),
    #[error("unexpected output from `{command}`: {detail}")]
    Output { command: String, detail: String },
}

impl SpiceError {
    /// The kind of this error and the next thing to try.
    pub fn explain(&self) -> (ErrorKind, Option<String>) {
        match self {
            SpiceError::NotFound | SpiceError::NotGitSpice { .. } | SpiceError::TooOld { .. } => (
                ErrorKind::Environment,
                Some(
                    "scripts/demo in a spectacular clone builds it into \
                     ~/.cache/spectacular-tools/git-spice-v0.31.2/bin: put that folder on PATH"
                        .into(),
                ),
            ),
            SpiceError::Command(_) | SpiceError::Output { .. } => (ErrorKind::Internal, None),
        }
    }
}

fn min_version() -> String {
    let (major, minor, patch) = MIN_VERSION;
    format!("{major}.{minor}.{patch}")
}

#[derive(Debug, Clone, Copy)]
pub struct SubmitOptions {
    pub draft: bool,
    pub publish: bool,
}

/// How `branch submit` treats one branch's change request.
#[derive(Debug, Clone, Copy)]
pub struct BranchSubmit {
    /// Open a new change request as a draft (`--draft`); without it an existing one keeps its
    /// draft state (git-spice changes it only when the flag is given).
    pub draft: bool,
    /// Only update an existing change request, never open one (`--update-only`).
    pub update_only: bool,
}

/// Why git-spice refused a submit, for the failures a user can act on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SubmitRefusal {
    /// The remote is no forge git-spice knows.
    UnsupportedRemote,
    /// git-spice has no login for the forge.
    NotLoggedIn,
    /// The branch's base moved: it needs a restack first.
    NeedsRestack,
    /// The push's lease failed: the remote branch is not what git-spice expected.
    PushRejected,
    /// The base branch is not on the remote yet.
    BaseNotSubmitted,
}

impl SpiceError {
    /// Which refusal a failed submit was. git-spice exits 1 for every error, so they are told
    /// apart by the wording of its message (checked against git-spice v0.31.2).
    pub fn submit_refusal(&self) -> Option<SubmitRefusal> {
        let SpiceError::Command(ProcessError::Failed { stderr, .. }) = self else { return None };
        let stderr = stderr.to_lowercase();
        let has = |words: &[&str]| words.iter().any(|w| stderr.contains(w));
        if has(&["unsupported git remote", "could not guess repository"]) {
            Some(SubmitRefusal::UnsupportedRemote)
        } else if has(&["not logged in", "auth login", "authenticat"]) {
            Some(SubmitRefusal::NotLoggedIn)
        } else if has(&["refusing to submit outdated branch", "needs to be restacked"]) {
            Some(SubmitRefusal::NeedsRestack)
        } else if has(&["base branch has not been submitted", "does not exist in the remote"]) {
            Some(SubmitRefusal::BaseNotSubmitted)
        } else if has(&["push failed", "updated by someone else", "stale info"]) {
            Some(SubmitRefusal::PushRejected)
        } else {
            None
        }
    }
}

#[derive(Debug, Clone)]
pub struct Spice {
    bin: PathBuf,
}

impl Spice {
    /// `WT_GIT_SPICE` if set, else `git-spice`, else `gs` on PATH, accepted only if `--version`
    /// says it is git-spice. Which binary passed is remembered in the user's cache (by path,
    /// size and modification time), so later calls skip the `--version` process while it is
    /// unchanged.
    pub fn discover() -> Result<Spice, SpiceError> {
        let candidates: Vec<PathBuf> = match std::env::var_os("WT_GIT_SPICE") {
            Some(path) => vec![PathBuf::from(path)],
            None => ["git-spice", "gs"].iter().filter_map(|name| which::which(name).ok()).collect(),
        };
        Self::first_accepted(candidates, crate::store::user_cache_file("git-spice.accepted").as_deref())
    }

    fn first_accepted(candidates: Vec<PathBuf>, accepted: Option<&Path>) -> Result<Spice, SpiceError> {
        let remembered = accepted.and_then(|file| std::fs::read_to_string(file).ok());
        let mut rejected = None;
        for bin in candidates {
            let stamp = stamp(&bin);
            if stamp.is_some() && remembered.as_deref() == stamp.as_deref() {
                return Ok(Spice { bin });
            }
            match Self::check(&bin) {
                Ok(spice) => {
                    if let (Some(file), Some(stamp)) = (accepted, stamp) {
                        // Only a shortcut: a run that cannot write it checks again next time.
                        let _ = crate::store::write_atomic(file, stamp.as_bytes());
                    }
                    return Ok(spice);
                }
                Err(err) => rejected = Some(err),
            }
        }
        Err(rejected.unwrap_or(SpiceError::NotFound))
    }

    fn check(bin: &Path) -> Result<Spice, SpiceError> {
        let out = Cmd::new(bin).arg("--version").read_unchecked()?;
        let first_line = out.stdout.lines().next().unwrap_or("").trim().to_owned();
        let Some(version) = first_line.strip_prefix("git-spice ") else {
            return Err(SpiceError::NotGitSpice { path: bin.to_owned(), printed: first_line });
        };
        if let Some(parsed) = parse_version(version)
            && parsed < MIN_VERSION
        {
            return Err(SpiceError::TooOld { path: bin.to_owned(), version: version.to_owned() });
        }
        Ok(Spice { bin: bin.to_owned() })
    }

    /// The binary and its version, for reports.
    pub fn describe(&self) -> String {
        let version = Cmd::new(&self.bin).arg("--version").read().ok();
        let line = version.and_then(|out| out.stdout.lines().next().map(str::to_owned)).unwrap_or_default();
        format!("{} ({})", line.trim(), self.bin.display())
    }

    fn cmd(&self, dir: &Path) -> Cmd {
        let cmd = Cmd::new(&self.bin).dir(dir).arg("--no-prompt");
        crate::git::with_config(cmd, &[("spice.branchCreate.prefix", "")])
    }

    /// `repo init --trunk <trunk>`: makes git-spice know the repository.
    pub fn repo_init(&self, root: &Path, trunk: &str) -> Result<(), SpiceError> {
        self.cmd(root).args(["repo", "init", "--trunk", trunk]).read()?;
        Ok(())
    }

    /// `branch create <name> --target <target> --no-commit`, run in `dir`, which it checks out.
    pub fn branch_create(&self, dir: &Path, name: &str, target: &str) -> Result<(), SpiceError> {
        self.cmd(dir).args(["branch", "create", name, "--target", target, "--no-commit"]).read()?;
        Ok(())
    }

    /// `branch create <name> --target <above> --below --no-restack --no-commit`, run in `dir`,
    /// which it checks out: the new branch starts where git-spice records `above`'s base commit,
    /// on `above`'s base, and `above` is recorded on the new branch (nothing is rebased). Unlike a
    /// restack or `upstack onto`, it never loads the branch graph: its cost does not grow with the
    /// number of tracked branches.
    pub fn branch_create_below(&self, dir: &Path, name: &str, above: &str) -> Result<(), SpiceError> {
        self.cmd(dir)
            .args(["branch", "create", name, "--target", above, "--below", "--no-restack", "--no-commit"])
            .read()?;
        Ok(())
    }

    /// `branch track <branch> --base <base>`: records an existing branch. For a tracked branch it
    /// records the new base without rebasing; git-spice keeps the commit the branch forked from
    /// as its base commit, so a later restack replays only the branch's own commits.
    pub fn branch_track(&self, dir: &Path, branch: &str, base: &str) -> Result<(), SpiceError> {
        self.cmd(dir).args(["branch", "track", branch, "--base", base]).read()?;
        Ok(())
    }

    /// `branch untrack <branch>`: git-spice forgets the branch; git keeps it. Branches above it
    /// get its base (and its base's commit), so move them first when its commits must leave them.
    pub fn branch_untrack(&self, dir: &Path, branch: &str) -> Result<(), SpiceError> {
        self.cmd(dir).args(["branch", "untrack", branch]).read()?;
        Ok(())
    }

    /// `branch restack --branch <branch>`: rebases `branch` onto its base's tip, in `dir`, which
    /// must be the worktree that has it checked out (git-spice skips a branch checked out in
    /// another worktree and still exits 0: read `needsRestack` afterwards).
    pub fn branch_restack(&self, dir: &Path, branch: &str) -> Result<(), SpiceError> {
        self.cmd(dir).args(["branch", "restack", "--branch", branch]).read()?;
        Ok(())
    }

    /// `branch delete --force <branches…>`: deletes branches and forgets them. Branches above
    /// them are retargeted by git-spice, not rebased.
    pub fn branch_delete(&self, dir: &Path, branches: &[String]) -> Result<(), SpiceError> {
        self.cmd(dir).args(["branch", "delete", "--force", "--restack=none"]).args(branches).read()?;
        Ok(())
    }

    /// `stack submit --fill --no-web` (draft or not; `--no-publish` only pushes), from `dir`.
    pub fn stack_submit(&self, dir: &Path, options: SubmitOptions) -> Result<(), SpiceError> {
        let mut cmd = self.cmd(dir).args(["stack", "submit", "--fill", "--no-web"]);
        cmd = cmd.arg(if options.draft { "--draft" } else { "--no-draft" });
        if !options.publish {
            cmd = cmd.arg("--no-publish");
        }
        cmd.read()?;
        Ok(())
    }

    /// `branch submit --branch <branch> --fill --no-web --nav-comment=false`, run in `dir`:
    /// pushes that branch only (git-spice leases on its remote-tracking ref) and opens or
    /// updates its change request, based on the branch's base (an update retargets it).
    pub fn branch_submit(&self, dir: &Path, branch: &str, options: BranchSubmit) -> Result<(), SpiceError> {
        let mut cmd = self.cmd(dir).args(["branch", "submit", "--branch", branch, "--fill", "--no-web"]);
        cmd = cmd.arg("--nav-comment=false");
        if options.draft {
            cmd = cmd.arg("--draft");
        }
        if options.update_only {
            cmd = cmd.arg("--update-only");
        }
        cmd.read()?;
        Ok(())
    }

    /// `rebase continue --no-edit`: finishes a rebase git-spice stopped on a conflict (once the
    /// conflict is resolved and staged) and runs what git-spice had left to do after it (a move's
    /// new base, the restacks above).
    pub fn rebase_continue(&self, dir: &Path) -> Result<(), SpiceError> {
        self.cmd(dir).args(["rebase", "continue", "--no-edit"]).read()?;
        Ok(())
    }

    /// `upstack onto <onto> --branch <branch>`: rebases `branch` (and its upstack) onto `onto` in
    /// `dir` and checks `branch` out there.
    pub fn upstack_onto(&self, dir: &Path, branch: &str, onto: &str) -> Result<(), SpiceError> {
        self.cmd(dir).args(["upstack", "onto", onto, "--branch", branch]).read()?;
        Ok(())
    }

    /// `rebase abort`: leaves a conflicted `upstack onto` as it was before.
    pub fn rebase_abort(&self, dir: &Path) -> Result<(), SpiceError> {
        self.cmd(dir).args(["rebase", "abort"]).read()?;
        Ok(())
    }

    /// `log short --all --json`: every tracked branch with its base and restack state.
    pub fn log_all(&self, dir: &Path) -> Result<Vec<LoggedBranch>, SpiceError> {
        self.log(self.cmd(dir).args(["log", "short", "--all", "--json"]))
    }

    /// `log short --all --cr-status --cr-comments --json` (`-a -S -c`): as [`Spice::log_all`],
    /// with each change request's state and review comments asked of the forge. git-spice
    /// itself leaves the state out (and warns) when it cannot reach the forge or is not logged
    /// in; this fails only when git-spice does.
    pub fn log_all_with_changes(&self, dir: &Path) -> Result<Vec<LoggedBranch>, SpiceError> {
        self.log(self.cmd(dir).args(["log", "short", "--all", "--cr-status", "--cr-comments", "--json"]))
    }

    fn log(&self, cmd: Cmd) -> Result<Vec<LoggedBranch>, SpiceError> {
        let out = cmd.read()?;
        log::parse(&out.stdout).map_err(|detail| SpiceError::Output { command: cmd.display(), detail })
    }
}

/// `0.31.2`, `v0.31.2`; None for builds without a release version (`dev`).
/// What identifies a binary's build (its resolved path, size and modification time) and the
/// check it passed (the minimum version).
fn stamp(bin: &Path) -> Option<String> {
    let path = std::fs::canonicalize(bin).ok()?;
    let meta = std::fs::metadata(&path).ok()?;
    let modified = meta.modified().ok()?.duration_since(std::time::UNIX_EPOCH).ok()?;
    Some(format!("{}\n{}\n{}\n{}\n", path.display(), meta.len(), modified.as_nanos(), min_version()))
}

fn parse_version(text: &str) -> Option<(u32, u32, u32)> {
    let mut parts = text.trim().trim_start_matches('v').split(['.', '-', '+']);
    let mut next = || parts.next()?.parse::<u32>().ok();
    Some((next()?, next()?, next()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accepted_binary_is_not_asked_again_until_it_changes() {
        use std::os::unix::fs::PermissionsExt;
        let temp = tempfile::tempdir().unwrap();
        let (bin, calls, accepted) =
            (temp.path().join("gs"), temp.path().join("calls"), temp.path().join("accepted"));
        let write = |version: &str| {
            let script = format!("#!/bin/sh\necho x >> {}\necho 'git-spice {version}'\n", calls.display());
            std::fs::write(&bin, script).unwrap();
            std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
        };
        let asked = || std::fs::read_to_string(&calls).unwrap_or_default().lines().count();
        write("0.31.2");
        for _ in 0..3 {
            Spice::first_accepted(vec![bin.clone()], Some(&accepted)).unwrap();
        }
        assert_eq!(asked(), 1, "asked once, then remembered");
        write("0.30.0\n# an older build");
        let err = Spice::first_accepted(vec![bin.clone()], Some(&accepted)).unwrap_err();
        assert!(matches!(err, SpiceError::TooOld { .. }), "a changed binary is checked again: {err}");
    }

    #[test]
    fn versions() {
        assert_eq!(parse_version("0.31.2"), Some((0, 31, 2)));
        assert_eq!(parse_version("v1.2.3-rc1"), Some((1, 2, 3)));
        assert_eq!(parse_version("dev"), None);
    }
}
