use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::team::{self, PushOutcome, PushReport, TeamRepo};

#[derive(Args)]
pub struct PushArgs {
    /// The team worktree whose branch to push (its own branch only; never the trunk).
    name: String,
    /// Print what was pushed as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: PushArgs, cwd: &Path) -> Result<u8, CliError> {
    let team = TeamRepo::open(cwd)?;
    let report = team::push(&team, &args.name)?;
    if args.json {
        println!("{}", super::to_json(&report)?);
    } else {
        print_report(&report);
    }
    Ok(exit::OK)
}

fn print_report(report: &PushReport) {
    let PushReport { branch, remote, sha, .. } = report;
    let sha = &sha[..sha.len().min(12)];
    match report.outcome {
        PushOutcome::Created => {
            println!("{branch}: pushed to {remote} at {sha} (new branch, now its upstream)")
        }
        PushOutcome::FastForward => println!("{branch}: pushed to {remote} at {sha}"),
        PushOutcome::Replaced => {
            let before = report.before.as_deref().unwrap_or_default();
            let before = &before[..before.len().min(12)];
            println!("{branch}: pushed to {remote} at {sha}, replacing {before} (wt's own last push)")
        }
        PushOutcome::UpToDate => println!("{branch}: {remote} has it already ({sha})"),
    }
}
