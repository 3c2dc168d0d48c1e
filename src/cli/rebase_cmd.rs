use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::team::{self, RebaseOutcome, RebaseReport, RebaseRequest, TeamRepo};

#[derive(Args)]
pub struct RebaseArgs {
    /// The team worktree whose branch to rebase onto its base (the next surviving base when its
    /// own was merged or deleted); what sits on it is restacked. Run again to continue a rebase
    /// left on a conflict, once the files are resolved and staged.
    name: String,
    /// Undo a rebase left on a conflict in the worktree.
    #[arg(long)]
    abort: bool,
    /// Print what was done as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: RebaseArgs, cwd: &Path) -> Result<u8, CliError> {
    let team = TeamRepo::open(cwd)?;
    let report = team::rebase(&team, &RebaseRequest { name: args.name, abort: args.abort })?;
    if args.json {
        println!("{}", super::to_json(&report)?);
    } else {
        print_report(&report);
    }
    Ok(exit::OK)
}

fn print_report(report: &RebaseReport) {
    let branch = &report.branch;
    let base = report.base.as_deref().unwrap_or("its base");
    match report.outcome {
        RebaseOutcome::AlreadyCurrent => println!("{branch}: already on {base}'s tip, nothing to rebase"),
        RebaseOutcome::Rebased => println!("{branch}: rebased onto {base}"),
        RebaseOutcome::Moved => println!(
            "{branch}: moved onto {base} with its own commits ({} merged or gone)",
            report.passed.join(", ")
        ),
        RebaseOutcome::Continued => println!("{branch}: rebase finished, on {base}"),
        RebaseOutcome::Aborted => println!("{branch}: rebase undone, back on {base} as it was"),
    }
    if !report.restacked.is_empty() {
        println!("  restacked on it: {}", report.restacked.join(", "));
    }
    if !report.needs_restack.is_empty() {
        println!("  still need a rebase: {}", report.needs_restack.join(", "));
    }
    if matches!(report.outcome, RebaseOutcome::Rebased | RebaseOutcome::Moved | RebaseOutcome::Continued) {
        let wt = crate::process::own_name();
        println!(
            "  push it with `{wt} push {branch}`, or `{wt} pr {branch}` to update its change request and base"
        );
    }
}
