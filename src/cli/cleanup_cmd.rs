use std::path::Path;

use clap::Args;

use super::run_cmd::check_run_id;
use super::{CliError, exit};
use crate::engine::{CleanupReport, CleanupRequest, cleanup};
use crate::git::Repo;
use crate::store::{LiveState, StateLayout};

#[derive(Args)]
pub struct CleanupArgs {
    /// The run to clean up (see `wt status`).
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    run_id: Option<String>,
    /// Clean up every finished run (state done) of this repository.
    #[arg(long)]
    all: bool,
    /// Also remove worktrees with uncommitted or untracked files, and delete unmerged branches.
    #[arg(long)]
    force: bool,
    /// Also delete the run's branches (only those merged into the base, unless --force).
    #[arg(long)]
    delete_branches: bool,
    /// Print what was removed as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: CleanupArgs, cwd: &Path) -> Result<u8, CliError> {
    let repo = Repo::discover(cwd)?;
    let run_ids = match &args.run_id {
        Some(id) => {
            check_run_id(id)?;
            vec![id.clone()]
        }
        None => finished_runs(&repo)?,
    };
    let mut reports = Vec::new();
    for run_id in run_ids {
        let request = CleanupRequest { run_id, force: args.force, delete_branches: args.delete_branches };
        reports.push(cleanup(&repo, &request)?);
    }
    if args.json {
        let text = serde_json::to_string_pretty(&reports)
            .map_err(|err| CliError::new(exit::INTERNAL, err.to_string()))?;
        println!("{text}");
    } else if reports.is_empty() {
        println!("no finished runs to clean up (`wt status` lists the runs)");
    } else {
        reports.iter().for_each(print_report);
    }
    Ok(exit::OK)
}

/// Runs that are done and whose lock nobody holds.
fn finished_runs(repo: &Repo) -> Result<Vec<String>, CliError> {
    let layout = StateLayout::new(repo.common_dir());
    let mut ids: Vec<String> = layout
        .runs()
        .readable
        .iter()
        .filter(|m| LiveState::of(&layout, m) == LiveState::Done)
        .map(|m| m.run_id.clone())
        .collect();
    ids.sort();
    Ok(ids)
}

fn print_report(report: &CleanupReport) {
    if report.is_empty() && report.kept_branches.is_empty() {
        println!("run {}: nothing left to clean up", report.run_id);
        return;
    }
    println!("run {}: cleaned up", report.run_id);
    for path in &report.removed_worktrees {
        println!("  removed worktree {}", path.display());
    }
    for path in &report.removed_files {
        println!("  removed {}", path.display());
    }
    for branch in &report.deleted_branches {
        println!("  deleted branch {branch}");
    }
    if !report.kept_branches.is_empty() {
        println!("  kept {} branch(es): {}", report.kept_branches.len(), report.kept_branches.join(", "));
        println!("  (delete them with `wt cleanup {} --delete-branches` once merged)", report.run_id);
    }
}
