use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::team::{self, PrReport, TeamRepo};

#[derive(Args)]
pub struct PrArgs {
    /// The team worktree whose branch to open (as a draft) or update, based on its base.
    name: String,
    /// Print the change request as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: PrArgs, cwd: &Path) -> Result<u8, CliError> {
    let team = TeamRepo::open(cwd)?;
    let report = team::open_or_update(&team, &args.name)?;
    if args.json {
        println!("{}", super::to_json(&report)?);
    } else {
        print_report(&report);
    }
    Ok(exit::OK)
}

fn print_report(report: &PrReport) {
    let what = if report.created { "opened as a draft" } else { "updated" };
    println!("{}: change request {} {what}, based on {}", report.branch, report.id, report.base);
    if let Some(url) = &report.url {
        println!("  {url}");
    }
}
