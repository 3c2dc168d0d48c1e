//! The layout the guard corpus assumes (`tests/guard_corpus.rs`), made real: a git repository
//! whose linked worktree `.worktrees/abc123-task-1-1` is on `abc123-task-1-1-feature`, a second
//! linked worktree `.worktrees/abc123-task-1-10` as its sibling, the symlink `etc-link` that
//! leads out, a bare remote `origin` on disk, and a scratch folder standing in for what the
//! cases aim at outside the test's folder (`/tmp`, `/var/tmp`, `/etc`, `/` and the home folder).
//!
//! A template is built once with git; each case gets a copy (the absolute paths git writes —
//! the worktrees' links, the remote's URL — rewritten), which is much faster than `git init`.

use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const WORKTREE: &str = "abc123-task-1-1";
pub const BRANCH: &str = "abc123-task-1-1-feature";
const SIBLING: &str = "abc123-task-1-10";
/// A branch the corpus deletes and moves (`git branch -D abc123-task-1-2-other`).
const OTHER_BRANCH: &str = "abc123-task-1-2-other";

/// Commands wt cannot follow name values it cannot know (`rm -rf $TARGET`, `$CMD push`): under
/// the sandbox they get the worst ones, aimed outside. `$S` is the scratch folder.
const UNKNOWN_VALUES: &[(&str, &str)] = &[
    ("TARGET", "$S/tmp/x"),
    ("CMD", "git"),
    ("SUB", "push"),
    ("SRC", "$S/tmp/x"),
    ("DIR", "$S/tmp"),
    ("RANGE", "main"),
];

/// Files outside the worktree that give the corpus's commands something real to act on.
const SCRATCH_FILES: &[(&str, &str)] = &[
    ("tmp/x", "outside\n"),
    ("tmp/y", "outside\n"),
    ("tmp/z", "outside\n"),
    ("tmp/evil", "outside\n"),
    ("tmp/file", "outside file\n"),
    ("tmp/c", "[user]\n\tname = included\n"),
    ("tmp/Makefile", "all install:\n\techo made > made\n"),
    ("tmp/evil.mk", "all:\n\techo made > \"$$HOME/made-by-mk\"\n"),
    ("tmp/other.mk", "all:\n\techo made > \"$$HOME/made-by-mk\"\n"),
    ("tmp/script.sh", "echo ran > \"$HOME/script-ran\"\n"),
    ("tmp/p/Cargo.toml", "[package]\nname = \"p\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
    ("tmp/p/src/lib.rs", "pub fn p() {}\n"),
    ("var/tmp/keep", "keep\n"),
    ("etc/hosts", "127.0.0.1 localhost\n"),
    ("etc/passwd", "root:x:0:0:root:/root:/bin/sh\n"),
    ("root/tmp/keep", "keep\n"),
    ("home/.bashrc", "echo sourced >> \"$HOME/sourced\"\n"),
    ("home/project/keep", "keep\n"),
];

/// The repository's committed files: a tiny crate, so cargo's cases build for real.
const COMMITTED: &[(&str, &str)] = &[
    ("README.md", "# project\n"),
    ("Cargo.toml", "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"),
    ("src/lib.rs", "pub fn a() {}\n"),
];

/// A copy of the layout in its own temporary folder.
pub struct Layout {
    _temp: tempfile::TempDir,
    /// Holds `repo`, `remote.git`, `scratch` and `logs`.
    pub base: PathBuf,
    pub repo: PathBuf,
    /// The worktree the cases run in.
    pub root: PathBuf,
    pub scratch: PathBuf,
    /// Where the test keeps what is not part of the layout (outputs, plans): never compared.
    pub logs: PathBuf,
}

impl Layout {
    fn at(temp: tempfile::TempDir) -> Layout {
        let base = temp.path().canonicalize().unwrap();
        let repo = base.join("repo");
        Layout {
            root: repo.join(".worktrees").join(WORKTREE),
            scratch: base.join("scratch"),
            logs: base.join("logs"),
            repo,
            base,
            _temp: temp,
        }
    }

    /// Builds the template with git: takes a few hundred milliseconds.
    pub fn template() -> Layout {
        let layout = Layout::at(tempfile::tempdir().unwrap());
        for dir in [&layout.repo, &layout.logs] {
            std::fs::create_dir_all(dir).unwrap();
        }
        for (path, content) in SCRATCH_FILES {
            write(&layout.scratch.join(path), content);
        }
        for (path, content) in COMMITTED {
            write(&layout.repo.join(path), content);
        }
        // `read GIT_DIR < /tmp/d`: the main checkout's git folder.
        write(&layout.scratch.join("tmp/d"), &format!("{}\n", layout.repo.join(".git").display()));
        layout.git(&layout.repo, &["init", "--quiet", "--initial-branch=main"]);
        layout.git(&layout.repo, &["add", "."]);
        layout.git(&layout.repo, &["commit", "--quiet", "-m", "initial commit"]);
        let exclude = layout.repo.join(".git/info/exclude");
        let text = std::fs::read_to_string(&exclude).unwrap();
        // The rules wt run writes (`git::WT_EXCLUDES`), so that a run adds nothing there.
        std::fs::write(&exclude, format!("{text}/.worktrees/\n/.claude/agents/wt-*.md\n")).unwrap();
        layout.remote();
        layout.git(&layout.repo, &["branch", OTHER_BRANCH]);
        let sibling_branch = format!("{SIBLING}-sibling");
        for (folder, branch) in [(WORKTREE, BRANCH), (SIBLING, sibling_branch.as_str())] {
            let path = format!(".worktrees/{folder}");
            layout.git(&layout.repo, &["worktree", "add", "--quiet", "-b", branch, &path]);
        }
        // The task's branch is on the remote and one commit ahead of it: `git push` has work to do.
        layout.git(&layout.root, &["push", "--quiet", "--set-upstream", "origin", BRANCH]);
        write(&layout.root.join("src/lib.rs"), "pub fn a() {}\npub fn b() {}\n");
        layout.git(&layout.root, &["commit", "--quiet", "-am", "task work"]);
        layout.task_fixtures();
        layout.spice();
        // wt makes the task's temporary folder before it restricts itself: make it now, so a case's
        // comparison shows only what the case did.
        let out = layout.sandbox(&["true"]).output().unwrap();
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        layout
    }

    /// `origin`, a bare repository on disk whose `main` is one commit ahead: `git fetch` and
    /// `git pull` have something to bring.
    fn remote(&self) {
        let remote = self.base.join("remote.git");
        self.git(&self.base, &["init", "--quiet", "--bare", "--initial-branch=main", "remote.git"]);
        self.git(&self.repo, &["remote", "add", "origin", remote.to_str().unwrap()]);
        let main = self.git(&self.repo, &["rev-parse", "main"]);
        let ahead =
            self.git(&self.repo, &["commit-tree", "main^{tree}", "-p", "main", "-m", "upstream work"]);
        self.git(&self.repo, &["push", "--quiet", "origin", &format!("{ahead}:refs/heads/main")]);
        self.git(&self.repo, &["update-ref", "refs/remotes/origin/main", &main]);
    }

    /// git-spice knows the repository and tracks the task's branch on main, as in a run:
    /// `gs upstack onto main` and `gs branch create x` have work to do.
    fn spice(&self) {
        let init = ["--no-prompt", "repo", "init", "--trunk=main", "--remote=origin"];
        run(self.command("gs", &self.repo).args(init));
        let track = ["--no-prompt", "branch", "track", BRANCH, "--base=main"];
        run(self.command("gs", &self.repo).args(track));
    }

    /// What the corpus's commands expect in the worktree, untracked as an agent would leave it.
    fn task_fixtures(&self) {
        std::os::unix::fs::symlink("../../../scratch/etc", self.root.join("etc-link")).unwrap();
        write(&self.root.join("fix.patch"), "--- /dev/null\n+++ b/created.txt\n@@ -0,0 +1 @@\n+created\n");
        let vendor = self.logs.join("vendor");
        write(&vendor.join("v.txt"), "vendored\n");
        let tar = ["czf", "vendor.tgz", "-C", self.logs.to_str().unwrap(), "vendor"];
        run(self.command("tar", &self.root).args(tar));
        run(self.command("python3", &self.root).args(["-m", "zipfile", "-c", "x.zip", "README.md"]));
        std::fs::remove_dir_all(vendor).unwrap();
        crate::escape_corpus::write_worktree_scripts(&self.root);
    }

    /// A copy of `template` in a new temporary folder.
    pub fn copy_of(template: &Layout) -> Layout {
        let layout = Layout::at(tempfile::tempdir().unwrap());
        let (from, to) = (template.base.to_str().unwrap(), layout.base.to_str().unwrap());
        copy_tree(&template.base, &layout.base, from.as_bytes(), to.as_bytes());
        layout
    }

    /// `program` in `dir` with the hermetic environment of the tests, the values the corpus's
    /// commands leave unknown, and no network beyond the machine.
    pub fn command(&self, program: impl AsRef<std::ffi::OsStr>, dir: &Path) -> Command {
        let mut cmd = Command::new(program);
        cmd.env_clear()
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .env("HOME", self.scratch.join("home"))
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_AUTHOR_NAME", "Test Author")
            .env("GIT_AUTHOR_EMAIL", "author@example.com")
            .env("GIT_COMMITTER_NAME", "Test Committer")
            .env("GIT_COMMITTER_EMAIL", "committer@example.com")
            .env("GIT_AUTHOR_DATE", "2026-01-01T00:00:00Z")
            .env("GIT_COMMITTER_DATE", "2026-01-01T00:00:00Z")
            .env("TZ", "UTC")
            .env("LC_ALL", "C")
            .env("CARGO_NET_OFFLINE", "true")
            // What wt gives its agents (src/process.rs): git and git-spice commit and rebase
            // without waiting for an editor.
            .env("GIT_EDITOR", "true")
            .env("GIT_SEQUENCE_EDITOR", "true")
            .env("GIT_TERMINAL_PROMPT", "0")
            .current_dir(dir)
            .stdin(Stdio::null());
        // curl, wget and cargo fail at once rather than reach the internet.
        for proxy in ["http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"] {
            cmd.env(proxy, "http://127.0.0.1:9");
        }
        // The real toolchain, read where rustup keeps it (cargo's cases build a crate).
        if let Some(rustup) = rustup_home() {
            cmd.env("RUSTUP_HOME", rustup);
        }
        // Servers outside the sandbox that a case asks to run something (tmux, docker, emacs) are
        // looked for in a folder of the test's own, where none runs: on a developer's machine
        // the real ones are out of reach.
        let servers = self.logs.join("servers");
        cmd.env("TMUX_TMPDIR", &servers)
            .env("SCREENDIR", servers.join("screen"))
            .env("DOCKER_HOST", format!("unix://{}", servers.join("docker.sock").display()))
            .env("CONTAINER_HOST", format!("unix://{}", servers.join("podman.sock").display()))
            .env("EMACS_SOCKET_NAME", servers.join("emacs"));
        let scratch = self.scratch.to_str().unwrap();
        for (key, value) in UNKNOWN_VALUES {
            cmd.env(key, value.replace("$S", scratch));
        }
        cmd
    }

    /// `wt sandbox` for the worktree, running `command`.
    pub fn sandbox(&self, command: &[&str]) -> Command {
        let mut cmd = self.command(env!("CARGO_BIN_EXE_wt"), &self.root);
        cmd.arg("sandbox").arg("--root").arg(&self.root).args(["--branch", BRANCH, "--"]).args(command);
        cmd
    }

    /// Runs git in `dir`; returns stdout, trimmed.
    pub fn git(&self, dir: &Path, args: &[&str]) -> String {
        let out = self.command("git", dir).args(args).output().unwrap();
        assert!(out.status.success(), "git {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    }

    /// `text` with the corpus's placeholders (`$ROOT` the worktree, `$REPO` the main checkout)
    /// filled in for `root`, and its absolute paths outside the test's folder moved to their
    /// stand-ins in the scratch folder.
    pub fn case_text(&self, text: &str, root: &Path) -> StandIn {
        let mut stand_in = stand_in(text, self.scratch.to_str().unwrap());
        stand_in.text = stand_in
            .text
            .replace("$ROOT", root.to_str().unwrap())
            .replace("$REPO", self.repo.to_str().unwrap());
        stand_in
    }
}

fn rustup_home() -> Option<PathBuf> {
    std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".rustup")))
        .filter(|path| path.is_dir())
}

/// The roots of the paths the corpus aims at outside a worktree, and their stand-ins under the
/// scratch folder. `/usr`, `/dev` and `/x` are only read or executed, and stay.
const ROOTS: &[(&str, &str)] = &[("/var/tmp", "/var/tmp"), ("/tmp", "/tmp"), ("/etc", "/etc")];

/// A case's command with its paths outside moved to their stand-ins.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StandIn {
    pub text: String,
    /// The real paths it named instead (`/tmp/x`; no globs): they must not change either, should
    /// a spelling have escaped the move.
    pub real: Vec<PathBuf>,
}

/// Moves each absolute path under `/tmp`, `/var/tmp` or `/etc`, and `/` itself, into `scratch`.
/// A path starts where a shell word, an assignment or an option's value does (`> /tmp/x`,
/// `of=/tmp/x`, `-t/tmp`, `'w /tmp/x'`), never in the middle of a relative path
/// (`etc-link/../tmp/x` already leads to the stand-in through the symlink) or a URL.
pub fn stand_in(text: &str, scratch: &str) -> StandIn {
    let mut out = StandIn { text: String::new(), real: Vec::new() };
    let mut rest = text;
    while !rest.is_empty() {
        let root = if starts_a_path(&out.text) { root_at(rest, scratch) } else { None };
        if let Some((spelled, moved)) = root {
            let word = rest.split([' ', '\t', '\n', ';', '&', '|', ')', '\'', '"', '<', '>']).next().unwrap();
            let real = word.replace("\\057", "/");
            if real.len() > 1 && !real.contains(['*', '{', '$']) {
                out.real.push(PathBuf::from(real));
            }
            out.text.push_str(&moved);
            rest = &rest[spelled..];
            continue;
        }
        let next = rest.chars().next().unwrap();
        out.text.push(next);
        rest = &rest[next.len_utf8()..];
    }
    out
}

/// Whether a path may start after `before`: at the start, after a blank, `=`, a quote, a
/// redirection or `(`, or glued to a short option (`-t/tmp`, `-uo/tmp`).
fn starts_a_path(before: &str) -> bool {
    let Some(last) = before.chars().last() else { return true };
    if " \t\n='\"<>(".contains(last) {
        return true;
    }
    let word = before.rsplit([' ', '\t', '\n']).next().unwrap_or_default();
    word.len() > 1
        && word.starts_with('-')
        && !word.starts_with("--")
        && word[1..].chars().all(char::is_alphabetic)
}

/// The root at the start of `rest` and its stand-in: how many bytes it spells, and the text that
/// replaces them.
fn root_at(rest: &str, scratch: &str) -> Option<(usize, String)> {
    let ends = |tail: &str| tail.chars().next().is_none_or(|c| !(c.is_alphanumeric() || "_.-".contains(c)));
    for (root, stand_in) in ROOTS {
        if rest.starts_with(root) && ends(&rest[root.len()..]) {
            return Some((root.len(), format!("{scratch}{stand_in}")));
        }
    }
    // `$'\057tmp\057x'`: `/tmp/x` spelled in octal inside ANSI-C quotes.
    if rest.starts_with("\\057tmp\\057") {
        return Some(("\\057tmp".len(), format!("{scratch}/tmp")));
    }
    // `/` alone: `cd /`, `rm -rf /`, `GIT_WORK_TREE=/`.
    if rest.starts_with('/') && rest[1..].chars().next().is_none_or(|c| " \t\n;&|)'\"".contains(c)) {
        return Some((1, format!("{scratch}/root")));
    }
    None
}

fn write(path: &Path, content: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, content).unwrap();
}

fn run(cmd: &mut Command) {
    let out = cmd.output().unwrap();
    assert!(out.status.success(), "{cmd:?}: {}", String::from_utf8_lossy(&out.stderr));
}

/// Copies `from` into `to` with modes and symlinks, replacing the bytes `old` with `new` in files
/// and symlink targets (git records the worktrees and the remote by absolute path).
fn copy_tree(from: &Path, to: &Path, old: &[u8], new: &[u8]) {
    std::fs::create_dir_all(to).unwrap();
    let mut entries: Vec<_> = std::fs::read_dir(from).unwrap().map(|entry| entry.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        let target = to.join(path.file_name().unwrap());
        let metadata = std::fs::symlink_metadata(&path).unwrap();
        if metadata.file_type().is_symlink() {
            let link = std::fs::read_link(&path).unwrap();
            let link = replace(link.as_os_str().as_bytes(), old, new);
            std::os::unix::fs::symlink(std::ffi::OsStr::from_bytes(&link), &target).unwrap();
        } else if metadata.is_dir() {
            copy_tree(&path, &target, old, new);
            std::fs::set_permissions(&target, metadata.permissions()).unwrap();
        } else {
            std::fs::write(&target, replace(&std::fs::read(&path).unwrap(), old, new)).unwrap();
            std::fs::set_permissions(&target, std::fs::Permissions::from_mode(metadata.permissions().mode()))
                .unwrap();
        }
    }
}

fn replace(bytes: &[u8], old: &[u8], new: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index..].starts_with(old) {
            out.extend_from_slice(new);
            index += old.len();
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    out
}
