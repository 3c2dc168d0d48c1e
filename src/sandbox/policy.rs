//! The folders a contained command may write (and, with `reads = "deny-outside"`, read): each
//! with the reason it is there, and the ones left out because they do not exist.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::SandboxError;
use super::caches::{self, HostEnv, Named};
use super::worktree::TaskWorktree;
use crate::guard::SandboxConfig;

/// Device files an ordinary shell writes or opens for writing. No terminal: the command runs in
/// a session of its own without one (a terminal it could write to or type into — TIOCSTI — is a
/// way out of any sandbox), so `/dev/tty`, `/dev/pts` and `/dev/ptmx` are left out; a project
/// whose tests need a pseudo-terminal can add them with `allow_write`.
const DEVICES: &[(&str, &str)] = &[
    ("/dev/null", "discarded output (`> /dev/null`)"),
    ("/dev/zero", "zeros for `dd` and test fixtures"),
    ("/dev/full", "test suites checking how a write error is handled; stores nothing"),
    ("/dev/shm", "POSIX shared memory and semaphores (Python multiprocessing); holds no project file"),
];

/// Folders a process reads to start and run at all, when reads outside are denied.
const SYSTEM_READS: &[&str] = &[
    "/usr",
    "/bin",
    "/sbin",
    "/lib",
    "/lib32",
    "/lib64",
    "/libx32",
    "/etc",
    "/opt",
    "/proc",
    "/sys",
    "/dev",
    "/run",
    "/var/lib",
    "/var/cache",
    "/nix",
    "/snap",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// Write, create, remove, rename, link, truncate (and read, when reads are handled).
    Write,
    Read,
}

/// One path the command may use, and why.
#[derive(Debug, Clone)]
pub struct Grant {
    pub path: PathBuf,
    pub access: Access,
    pub why: String,
    /// A folder (rights beneath it) rather than a single file.
    pub is_dir: bool,
}

/// A path the policy names that could not be used (it does not exist, most often).
#[derive(Debug, Clone)]
pub struct Skipped {
    pub path: PathBuf,
    pub why: String,
    pub reason: String,
}

/// What the caller asks for beyond the built-in set.
#[derive(Debug, Clone, Default)]
pub struct Request {
    /// `--tmp`; default `<common>/spectacular/tmp/<worktree folder name>`.
    pub tmp: Option<PathBuf>,
    /// `--objects`; default `<common>/spectacular/objects/<worktree folder name>`.
    pub objects: Option<PathBuf>,
    /// `--allow-write`, absolute.
    pub allow_write: Vec<PathBuf>,
    pub config: SandboxConfig,
    /// `reads = "deny-outside"`: reads are allowed only beneath the listed folders.
    pub deny_reads: bool,
    /// The command, which must stay readable and executable when reads are denied.
    pub program: Option<OsString>,
}

#[derive(Debug, Clone)]
pub struct Policy {
    pub grants: Vec<Grant>,
    pub skipped: Vec<Skipped>,
    /// The task's temporary folder (created), for TMPDIR, TMP and TEMP.
    pub tmp: PathBuf,
    /// The task's own object folder (created), for GIT_OBJECT_DIRECTORY: the repository's objects
    /// are read through GIT_ALTERNATE_OBJECT_DIRECTORIES and cannot be changed or removed.
    pub objects: PathBuf,
    /// The repository's object folder.
    pub alternate: PathBuf,
    pub deny_reads: bool,
    /// `[sandbox] network = "deny"`: TCP connect and bind are refused.
    pub deny_network: bool,
    /// `[sandbox] unix_sockets = "deny"` (the default): new Unix sockets are refused.
    pub deny_unix_sockets: bool,
}

impl Policy {
    /// The policy of `worktree`; creates its temporary folder.
    pub fn for_worktree(
        worktree: &TaskWorktree,
        request: &Request,
        env: &HostEnv,
    ) -> Result<Policy, SandboxError> {
        let tmp = request.tmp.clone().unwrap_or_else(|| worktree.default_tmp());
        std::fs::create_dir_all(&tmp).map_err(|source| SandboxError::Tmp { path: tmp.clone(), source })?;
        let objects = request.objects.clone().unwrap_or_else(|| worktree.default_objects());
        std::fs::create_dir_all(&objects)
            .map_err(|source| SandboxError::Tmp { path: objects.clone(), source })?;
        let mut builder = Builder::default();
        builder.write(worktree.root(), "the worktree");
        for (path, why) in worktree.git_write_folders(&objects) {
            // A fresh repository may have no branch reflog yet; git would make the folder on the
            // first commit, which it could not do under the ruleset.
            let _ = std::fs::create_dir_all(&path);
            builder.write(&path, why);
        }
        builder.write(&tmp, "the task's temporary folder");
        for (path, why) in DEVICES {
            builder.write(Path::new(path), why);
        }
        for path in inherited_output_files() {
            builder.write(&path, "the file the command's output already goes to");
        }
        if request.config.grants_caches() {
            builder.write_all(caches::cache_folders(env));
        }
        for path in request.config.allow_write_paths(worktree.repo_root(), env.home().as_deref()) {
            builder.write(&path, "[sandbox] allow_write in guard.toml");
        }
        for path in &request.allow_write {
            builder.write(path, "--allow-write");
        }
        if request.deny_reads {
            for path in SYSTEM_READS {
                builder.read(Path::new(path), "a system folder");
            }
            builder.read(worktree.common(), "the repository's git folder");
            for (path, why) in caches::toolchain_folders(env) {
                builder.read(&path, why);
            }
            if let Some(path) = request.program.as_ref().and_then(|program| which::which(program).ok()) {
                builder.read(&path, "the program to run");
            }
            if let Ok(wt) = std::env::current_exe() {
                builder.read(&wt, "wt itself (hooks call `wt guard`)");
            }
        }
        Ok(Policy {
            grants: builder.grants,
            skipped: builder.skipped,
            tmp,
            objects,
            alternate: worktree.objects(),
            deny_reads: request.deny_reads,
            deny_network: request.config.denies_network(),
            deny_unix_sockets: request.config.denies_unix_sockets(),
        })
    }
}

#[derive(Default)]
struct Builder {
    grants: Vec<Grant>,
    skipped: Vec<Skipped>,
}

impl Builder {
    fn write(&mut self, path: &Path, why: &str) {
        self.add(path, Access::Write, why);
    }

    fn write_all(&mut self, named: Vec<Named>) {
        for (path, why) in named {
            self.write(&path, why);
        }
    }

    fn read(&mut self, path: &Path, why: &str) {
        self.add(path, Access::Read, why);
    }

    /// A rule needs an existing path (Landlock attaches it to the file, not to the name).
    fn add(&mut self, path: &Path, access: Access, why: &str) {
        match std::fs::metadata(path) {
            Ok(metadata) => self.grants.push(Grant {
                path: path.to_owned(),
                access,
                why: why.to_owned(),
                is_dir: metadata.is_dir(),
            }),
            Err(err) => {
                let reason = match err.kind() {
                    std::io::ErrorKind::NotFound => "does not exist".to_owned(),
                    _ => err.to_string(),
                };
                self.skipped.push(Skipped { path: path.to_owned(), why: why.to_owned(), reason });
            }
        }
    }
}

/// The regular files stdout and stderr were opened on (a run's log, a redirect). The command
/// can already write and truncate them through those descriptors; allowing the same file by
/// name lets `echo x > /dev/stderr` work, which reopens it.
fn inherited_output_files() -> Vec<PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut files: Vec<PathBuf> = Vec::new();
    for fd in [1, 2] {
        let link = PathBuf::from(format!("/proc/self/fd/{fd}"));
        let (Ok(opened), Ok(path)) = (std::fs::metadata(&link), std::fs::read_link(&link)) else { continue };
        // The name must still lead to the open file: it may have been renamed or replaced.
        let same = std::fs::metadata(&path)
            .is_ok_and(|named| named.dev() == opened.dev() && named.ino() == opened.ino());
        if opened.is_file() && same && !files.contains(&path) {
            files.push(path);
        }
    }
    files
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_paths_are_skipped_with_the_reason() {
        let mut builder = Builder::default();
        builder.write(Path::new("/dev/null"), "discarded output");
        builder.write(Path::new("/no/such/folder"), "a cache");
        assert_eq!(builder.grants.len(), 1);
        assert!(!builder.grants[0].is_dir);
        assert_eq!(builder.skipped[0].reason, "does not exist");
        assert_eq!(builder.skipped[0].why, "a cache");
    }

    #[test]
    fn output_to_a_pipe_or_terminal_grants_no_file() {
        // Under the test harness stdout is a pipe or a file; whichever it is, a granted path
        // is a regular file.
        for path in inherited_output_files() {
            assert!(path.is_file(), "{}", path.display());
        }
    }
}
