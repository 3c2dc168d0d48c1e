use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::engine::{CleanupReport, CleanupRequest, cleanup};
use crate::git::Repo;
use crate::plugin;
use crate::store::{LiveState, StateLayout};

#[derive(Args)]
pub struct CleanupArgs {
    /// The run to clean up (see `wt status`).
    #[arg(required_unless_present = "all", conflicts_with = "all", value_parser = super::run_id_arg)]
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
    let layout = StateLayout::new(repo.common_dir());
    let run_ids = match &args.run_id {
        Some(id) => vec![id.clone()],
        // Runs that are done and whose lock nobody holds.
        None => layout.run_ids_in(LiveState::Done),
    };
    let mut reports = Vec::new();
    for run_id in run_ids {
        let request = CleanupRequest { run_id, force: args.force, delete_branches: args.delete_branches };
        let mut report = cleanup(&repo, &request)?;
        report.removed_files.extend(plugin::release_run(&layout, &request.run_id)?);
        reports.push(report);
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
