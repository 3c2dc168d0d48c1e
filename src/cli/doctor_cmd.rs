use std::path::Path;

use clap::Args;
use serde::Serialize;

use super::{CliError, exit};
use crate::doctor::{self, Check, LeftoverWorktree, Status};

#[derive(Args)]
pub struct DoctorArgs {
    /// Print the report as JSON.
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct Report {
    checks: Vec<Check>,
    interrupted_runs: Vec<String>,
    worktrees: Vec<LeftoverWorktree>,
}

pub fn run(args: DoctorArgs, cwd: &Path) -> Result<u8, CliError> {
    let mut checks = doctor::machine_checks();
    let (interrupted_runs, worktrees) = match doctor::repository(cwd) {
        Some(repo) => {
            checks.extend(doctor::repository_checks(&repo));
            (doctor::interrupted_runs(&repo), doctor::leftover_worktrees(&repo))
        }
        None => (Vec::new(), Vec::new()),
    };
    let missing = checks.iter().any(|c| c.status == Status::Missing);
    let report = Report { checks, interrupted_runs, worktrees };
    if args.json {
        let text = serde_json::to_string_pretty(&report)
            .map_err(|err| CliError::new(exit::INTERNAL, err.to_string()))?;
        println!("{text}");
    } else {
        print(&report);
    }
    Ok(if missing { exit::ENVIRONMENT } else { exit::OK })
}

fn print(report: &Report) {
    let width = report.checks.iter().map(|check| check.name.chars().count()).max().unwrap_or(0);
    for check in &report.checks {
        let status = match check.status {
            Status::Ok => "ok     ",
            Status::Warn => "warn   ",
            Status::Missing => "MISSING",
        };
        println!("{status}  {:<width$} {}", check.name, check.detail);
        if let Some(fix) = &check.fix {
            println!("         {:<width$} fix: {fix}", "");
        }
    }
    for run_id in &report.interrupted_runs {
        println!(
            "warn     interrupted run    {run_id}: resume it with `wt resume {run_id}` or remove it with `wt cleanup {run_id}`"
        );
    }
    for worktree in &report.worktrees {
        println!(
            "note     worktree           {} ({}, {}): {}",
            worktree.path.display(),
            super::human_size(worktree.bytes),
            worktree.status_name(),
            worktree.fix
        );
    }
}
