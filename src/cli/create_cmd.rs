use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::team::{self, CreateRequest, Created, TeamRepo};

#[derive(Args)]
pub struct CreateArgs {
    /// The worktree's name: its folder `.worktrees/<name>`, its new branch and its agent `wt-<name>`
    /// (letters, digits, `.`, `_`, `-`; at most 64).
    name: String,
    /// The branch it stacks on: the trunk or a branch git-spice tracks (another team worktree's).
    #[arg(long)]
    base: String,
    /// A command that must pass in the worktree before its agent may call a task done.
    #[arg(long, value_name = "CMD")]
    verify: Option<String>,
    /// Print what was made (or found) as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: CreateArgs, cwd: &Path) -> Result<u8, CliError> {
    let team = TeamRepo::open(cwd)?;
    let request = CreateRequest { name: args.name, base: args.base, verify: args.verify };
    let created = team::create(&team, &request)?;
    if args.json {
        println!("{}", super::to_json(&created)?);
    } else {
        print_created(&created);
    }
    Ok(exit::OK)
}

fn print_created(created: &Created) {
    let what = if created.created { "created" } else { "already there" };
    println!("team worktree {}: {what}", created.name);
    println!("  worktree   {}", created.worktree.display());
    println!("  branch     {} on {}", created.branch, created.base);
    println!("  agent      {} ({})", created.agent, created.agent_file.display());
    if let Some(verify) = &created.verify {
        println!("  verify     {verify}");
    }
    println!("  spawn it as subagent_type {} (and name a teammate {})", created.agent, created.agent);
}
