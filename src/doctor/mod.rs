//! `wt doctor`: what this machine and repository have and lack, each problem with the command
//! that fixes it. Probes run the tools (`--version`), never change anything.

mod runs;

use std::path::Path;

use serde::Serialize;

use crate::git::{self, Repo};
use crate::process::Cmd;
use crate::sandbox::UnixSocketPolicy;
use crate::spice::{Spice, SpiceError};

pub use runs::{LeftoverWorktree, interrupted_runs, leftover_worktrees};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Ok,
    /// Works without it, but something is worse.
    Warn,
    /// Required and missing: runs fail.
    Missing,
}

#[derive(Debug, Clone, Serialize)]
pub struct Check {
    pub name: &'static str,
    pub status: Status,
    pub detail: String,
    pub fix: Option<String>,
}

impl Check {
    fn ok(name: &'static str, detail: impl Into<String>) -> Check {
        Check { name, status: Status::Ok, detail: detail.into(), fix: None }
    }

    fn problem(
        name: &'static str,
        status: Status,
        detail: impl Into<String>,
        fix: impl Into<String>,
    ) -> Check {
        Check { name, status, detail: detail.into(), fix: Some(fix.into()) }
    }
}

/// The oldest git git-spice supports.
const MIN_GIT: (u32, u32) = (2, 38);

pub fn machine_checks() -> Vec<Check> {
    let spice = spice_check();
    let spice_missing = spice.status == Status::Missing;
    let claude = claude_check();
    let plugin = plugin_check(claude.status == Status::Ok);
    vec![git_check(), spice, go_check(spice_missing), claude, plugin, name_check(), sandbox_check()]
}

/// Whether `wt sandbox` can contain agents here. Without Landlock a run is refused unless the
/// project allows policy-only containment, so it is a warning, not a missing tool.
fn sandbox_check() -> Check {
    let support = crate::sandbox::probe();
    match support.fix() {
        None => Check::ok(
            "sandbox",
            format!(
                "{support}: agents' writes are contained by the kernel; unless a project allows them, {}",
                UnixSocketPolicy::of(true)
            ),
        ),
        Some(fix) => Check::problem(
            "sandbox",
            Status::Warn,
            format!(
                "{support}: runs are refused unless the project sets `[sandbox] required = false` in \
                 .spectacular/guard.toml, and then are contained by policy only"
            ),
            fix,
        ),
    }
}

/// Whether `wt` and `spectacular-wt` on PATH are this program. The plugin's hooks and commands
/// call `spectacular-wt`, a name no other tool installs; another `wt` first on PATH (worktrunk
/// installs one) only shadows this one in a terminal.
fn name_check() -> Check {
    const NAME: &str = "wt on PATH";
    let ours =
        |program: &str| version_line(program, &["--version"]).filter(|line| line.ends_with("(spectacular)"));
    let install = "cargo install --locked --path <spectacular clone> (it installs wt and spectacular-wt)";
    if ours("spectacular-wt").is_none() {
        return Check::problem(
            NAME,
            Status::Warn,
            "spectacular-wt is not on PATH: the Claude Code plugin's hooks call it",
            install,
        );
    }
    match (which::which("wt"), ours("wt")) {
        (_, Some(line)) => Check::ok(NAME, format!("{line}; the plugin calls spectacular-wt")),
        (Ok(other), None) => Check::problem(
            NAME,
            Status::Warn,
            format!(
                "`wt` on PATH is another program ({}), probably worktrunk's; the plugin is not affected \
                 (it calls spectacular-wt)",
                other.display()
            ),
            "call this one as spectacular-wt, or put the folder of spectacular-wt first on PATH",
        ),
        (Err(_), None) => {
            Check::problem(NAME, Status::Warn, "only spectacular-wt is on PATH, not wt", install)
        }
    }
}

fn version_line(program: &str, args: &[&str]) -> Option<String> {
    let out = Cmd::new(program).args(args).read().ok()?;
    Some(out.stdout.lines().next().unwrap_or_default().trim().to_owned())
}

fn git_check() -> Check {
    let Some(line) = version_line("git", &["--version"]) else {
        return Check::problem("git", Status::Missing, "git is not on PATH", "install git 2.38 or newer");
    };
    let version: Vec<u32> =
        line.trim_start_matches("git version ").split('.').take(2).filter_map(|p| p.parse().ok()).collect();
    match version.as_slice() {
        [major, minor] if (*major, *minor) < MIN_GIT => Check::problem(
            "git",
            Status::Missing,
            format!("{line}; git-spice needs 2.38 or newer"),
            "upgrade git",
        ),
        _ => Check::ok("git", line),
    }
}

fn spice_check() -> Check {
    let install = "run scripts/demo in a spectacular clone (it builds git-spice v0.31.2), then put \
                   ~/.cache/spectacular-tools/git-spice-v0.31.2/bin on PATH; a plain `go install go.abhg.dev/gs@v0.31.2` \
                   fails on the replace directive in git-spice's go.mod";
    match Spice::discover() {
        Ok(spice) => Check::ok("git-spice", spice.describe()),
        Err(err @ (SpiceError::NotGitSpice { .. } | SpiceError::TooOld { .. } | SpiceError::NotFound)) => {
            Check::problem("git-spice", Status::Missing, err.to_string(), install)
        }
        Err(err) => Check::problem("git-spice", Status::Missing, err.to_string(), install),
    }
}

fn go_check(required: bool) -> Check {
    match version_line("go", &["version"]) {
        Some(line) => Check::ok("go", line),
        None => Check::problem(
            "go",
            if required { Status::Missing } else { Status::Warn },
            "Go is not on PATH (it builds git-spice)",
            "install Go 1.26 or newer (https://go.dev/doc/install)",
        ),
    }
}

fn claude_check() -> Check {
    match version_line("claude", &["--version"]) {
        Some(line) => Check::ok("claude", line),
        None => Check::problem(
            "claude",
            Status::Warn,
            "Claude Code is not on PATH (needed for the claude agent and /spectacular:execute)",
            "npm install -g @anthropic-ai/claude-code",
        ),
    }
}

fn plugin_check(claude_found: bool) -> Check {
    let install = "in Claude Code: /plugin marketplace add <this repository>, then /plugin install spectacular@spectacular";
    if !claude_found {
        return Check::problem("plugin", Status::Warn, "cannot tell without Claude Code", install);
    }
    let listed = Cmd::new("claude").args(["plugin", "list", "--json"]).read().ok();
    let installed = listed.is_some_and(|out| {
        serde_json::from_str::<serde_json::Value>(&out.stdout).is_ok_and(|v| {
            v.as_array().is_some_and(|plugins| {
                plugins.iter().any(|p| {
                    let id =
                        p.get("id").or_else(|| p.get("name")).and_then(|n| n.as_str()).unwrap_or_default();
                    id == "spectacular" || id.starts_with("spectacular@")
                })
            })
        })
    });
    if installed {
        Check::ok("plugin", "the spectacular plugin is installed")
    } else {
        Check::problem(
            "plugin",
            Status::Warn,
            "the spectacular plugin is not installed in Claude Code",
            install,
        )
    }
}

/// Checks of the repository `dir` is in: ignore rules.
pub fn repository_checks(repo: &Repo) -> Vec<Check> {
    let samples = [
        ("worktrees ignored", ".worktrees/x/file", "wt adds the rule before a run and at `wt create`"),
        (
            "generated agents ignored",
            ".claude/agents/wt-x.md",
            "wt adds the rule at `wt create` and before a run",
        ),
    ];
    let mut checks: Vec<Check> = samples
        .iter()
        .map(|(name, sample, when)| match git::is_ignored(repo.root(), sample) {
            Ok(true) => Check::ok(name, format!("{sample} is ignored")),
            Ok(false) => Check::problem(
                name,
                Status::Warn,
                format!("git does not ignore {sample} ({when})"),
                "wt check-ignore --fix",
            ),
            Err(err) => Check::problem(name, Status::Warn, err.to_string(), "wt check-ignore --fix"),
        })
        .collect();
    checks.extend(containment_check(repo));
    checks.push(pool_check(repo));
    checks
}

/// The pool of recycled worktrees: how many wait, their disk use, and what a killed process left
/// under way (the next run or `wt cleanup --pool` finishes it).
fn pool_check(repo: &Repo) -> Check {
    const NAME: &str = "worktree pool";
    let pool = crate::engine::pool::view(repo, &crate::store::StateLayout::new(repo.common_dir()));
    let mib = pool.bytes as f64 / (1024.0 * 1024.0);
    let recycling = if pool.recycle {
        "runs recycle their worktrees"
    } else {
        "recycling is off (.spectacular/worktree.toml)"
    };
    let detail = format!(
        "{} recycled worktree(s) in {}, {mib:.1} MiB on disk; {recycling}",
        pool.worktrees.len(),
        pool.dir.display()
    );
    match pool.problems.first() {
        None => Check::ok(NAME, detail),
        Some(problem) => Check::problem(
            NAME,
            Status::Warn,
            format!("{detail}; {problem}"),
            "wt cleanup --pool (or the next run) finishes what a killed move left; what wt set aside is yours to remove",
        ),
    }
}

/// How this repository's runs would be contained, when it is not simply by the kernel with Unix
/// sockets refused: the project's `[sandbox]` decides what happens on a machine without Landlock,
/// and may allow Unix sockets.
fn containment_check(repo: &Repo) -> Option<Check> {
    const NAME: &str = "containment";
    let rules = repo.root().join(".spectacular").join("guard.toml");
    let sandbox = match crate::guard::GuardConfig::load_toml(&rules) {
        Ok(config) => config.unwrap_or_default().sandbox,
        Err(err) => return Some(Check::problem(NAME, Status::Missing, err, "fix .spectacular/guard.toml")),
    };
    let sockets = UnixSocketPolicy::of(sandbox.denies_unix_sockets());
    if crate::sandbox::probe().abi().is_some() {
        return (sockets == UnixSocketPolicy::Allowed).then(|| {
            Check::problem(
                NAME,
                Status::Warn,
                format!("runs in this repository are contained by the kernel, but {sockets}"),
                "remove `unix_sockets = \"allow\"` from [sandbox] in .spectacular/guard.toml unless tasks need \
                 Unix sockets (gpg signing, ssh-agent, tests that open sockets)",
            )
        });
    }
    Some(match sandbox.is_required() {
        true => Check::problem(
            NAME,
            Status::Missing,
            "runs in this repository are refused: no kernel sandbox, and the project requires one",
            "make Landlock available (see the sandbox check), or set `[sandbox] required = false` in .spectacular/guard.toml",
        ),
        false => Check::problem(
            NAME,
            Status::Warn,
            format!(
                "runs in this repository are contained by policy only ([sandbox] required = false): the guard \
                 and the check after each task, no kernel sandbox; {sockets}"
            ),
            "make Landlock available (see the sandbox check)",
        ),
    })
}

/// Whether `dir` is inside a repository, for checks that need one.
pub fn repository(dir: &Path) -> Option<Repo> {
    Repo::discover(dir).ok()
}
