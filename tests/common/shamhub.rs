//! git-spice's offline forge, shamhub, on loopback for one test: the server, its CLI, and the
//! git-spice built with it (`WT_TEST_SHAMHUB`, which scripts/test and /work/tools/env.sh set).

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::TestRepo;

/// A shamhub server on loopback, stopped when dropped.
pub struct Shamhub {
    child: Child,
    bin: PathBuf,
    /// The git-spice built with the shamhub forge.
    gs: PathBuf,
    env: Vec<(String, String)>,
}

impl Shamhub {
    pub fn start(repo: &TestRepo) -> Shamhub {
        let bin = PathBuf::from(
            std::env::var_os("WT_TEST_SHAMHUB")
                .expect("WT_TEST_SHAMHUB is not set: run the tests with scripts/test"),
        );
        let env_file = repo.scratch.join("shamhub.env");
        let child = Command::new(bin.join("shamhub-serve"))
            .args(["--env-file", env_file.to_str().unwrap()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let start = Instant::now();
        while !env_file.exists() {
            assert!(start.elapsed() < Duration::from_secs(20), "shamhub-serve did not start");
            std::thread::sleep(Duration::from_millis(20));
        }
        std::thread::sleep(Duration::from_millis(50));
        let env = std::fs::read_to_string(&env_file)
            .unwrap()
            .lines()
            .filter_map(|line| line.strip_prefix("export "))
            .filter_map(|line| line.split_once('='))
            .map(|(k, v)| (k.to_owned(), v.trim_matches('"').to_owned()))
            .collect();
        let gs = bin.join("gs");
        Shamhub { child, bin, gs, env }
    }

    pub fn env(&self) -> Vec<(&str, &str)> {
        let mut env: Vec<(&str, &str)> = self.env.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
        env.push(("WT_GIT_SPICE", self.gs.to_str().unwrap()));
        env.push(("SHAMHUB_USERNAME", "alice"));
        env
    }

    /// Runs one of shamhub's programs (`shamhub`, or `gs`, the git-spice built with it) in the
    /// repository's main checkout; panics with its stderr when it fails.
    pub fn run(&self, repo: &TestRepo, program: &str, args: &[&str]) -> String {
        self.run_in(repo, &repo.root, program, args)
    }

    /// As [`Shamhub::run`], in `dir` (a worktree).
    pub fn run_in(&self, repo: &TestRepo, dir: &Path, program: &str, args: &[&str]) -> String {
        let mut cmd = repo.command(self.bin.join(program).to_str().unwrap(), dir);
        cmd.args(args).envs(self.env());
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "{program} {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    }
}

impl Drop for Shamhub {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The repository `alice/app` on the forge as `origin`, with `main` pushed.
pub fn forge_repo(repo: &TestRepo, hub: &Shamhub) {
    hub.run(repo, "shamhub", &["register", "alice"]);
    hub.run(repo, "shamhub", &["new", "origin", "alice/app.git"]);
    repo.git(&["push", "--quiet", "origin", "main"]);
}
