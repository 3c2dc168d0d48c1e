use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::engine::{SubmitRequest, SubmittedBranch, submit};
use crate::git::Repo;

#[derive(Args)]
pub struct SubmitArgs {
    /// The finished run whose stack to submit (see `wt status`).
    #[arg(value_parser = super::run_id_arg)]
    run_id: String,
    #[command(flatten)]
    flags: SubmitFlags,
    /// Print the submitted branches as JSON.
    #[arg(long)]
    json: bool,
}

/// How the stack goes up (shared with `wt run --submit`).
#[derive(Args, Clone, Copy)]
pub struct SubmitFlags {
    /// Open the change requests ready for review instead of as drafts.
    #[arg(long)]
    no_draft: bool,
    /// Only push the branches (for a remote that is not a forge git-spice knows).
    #[arg(long)]
    no_publish: bool,
}

pub fn run(args: SubmitArgs, cwd: &Path) -> Result<u8, CliError> {
    submit_run(cwd, &args.run_id, args.flags, args.json)
}

pub fn submit_run(cwd: &Path, run_id: &str, flags: SubmitFlags, json: bool) -> Result<u8, CliError> {
    let repo = Repo::discover(cwd)?;
    let request =
        SubmitRequest { run_id: run_id.to_owned(), draft: !flags.no_draft, publish: !flags.no_publish };
    let branches = submit(&repo, &request)?;
    if json {
        // One line, so it also fits the JSON-lines stream of `wt run --json --submit`.
        let value = serde_json::json!({ "event": "stack_submitted", "run_id": run_id, "branches": branches });
        println!("{value}");
    } else {
        print_branches(run_id, &branches, flags);
    }
    Ok(exit::OK)
}

fn print_branches(run_id: &str, branches: &[SubmittedBranch], flags: SubmitFlags) {
    let what = if flags.no_publish {
        "pushed"
    } else if flags.no_draft {
        "submitted"
    } else {
        "submitted as drafts"
    };
    println!("run {run_id}: {} branch(es) {what}", branches.len());
    for branch in branches {
        match (&branch.change, &branch.url) {
            (Some(change), Some(url)) => println!("  {}  {change}  {url}", branch.branch),
            (Some(change), None) => println!("  {}  {change}", branch.branch),
            _ => println!("  {}", branch.branch),
        }
    }
}
