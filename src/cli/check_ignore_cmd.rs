use std::path::Path;

use clap::Args;
use serde::Serialize;

use super::{CliError, exit};
use crate::git::{self, Repo, WT_EXCLUDES};

#[derive(Args)]
pub struct CheckIgnoreArgs {
    /// Add what is missing to .git/info/exclude (never to a tracked .gitignore).
    #[arg(long)]
    fix: bool,
    /// Print the result as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Check {
    pattern: &'static str,
    ignored: bool,
}

/// A path each pattern must cover: a file in a worktree under a folder pattern, a generated
/// agent's file for a glob.
fn sample(pattern: &str) -> String {
    let path = pattern.trim_start_matches('/').replace('*', "example");
    if path.ends_with('/') { format!("{path}abc123-main/file") } else { path }
}

pub fn run(args: CheckIgnoreArgs, cwd: &Path) -> Result<u8, CliError> {
    let repo = Repo::discover(cwd)?;
    if args.fix {
        git::ensure_excluded(repo.common_dir(), WT_EXCLUDES)?;
    }
    let mut checks = Vec::new();
    for pattern in WT_EXCLUDES {
        checks.push(Check { pattern, ignored: git::is_ignored(repo.root(), &sample(pattern))? });
    }
    let missing: Vec<&str> = checks.iter().filter(|c| !c.ignored).map(|c| c.pattern).collect();
    if args.json {
        let text = serde_json::to_string_pretty(&checks)
            .map_err(|err| CliError::new(exit::INTERNAL, err.to_string()))?;
        println!("{text}");
    } else {
        for check in &checks {
            println!("{} {}", if check.ignored { "ignored    " } else { "NOT ignored" }, check.pattern);
        }
    }
    if missing.is_empty() {
        return Ok(exit::OK);
    }
    Err(CliError::new(
        exit::ENVIRONMENT,
        format!("git does not ignore {} in {}", missing.join(" and "), repo.root().display()),
    )
    .hint("run `wt check-ignore --fix` (it adds them to .git/info/exclude)"))
}
