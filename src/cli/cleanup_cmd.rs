use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::engine::{CleanupReport, CleanupRequest, cleanup, cleanup_pool};
use crate::git::Repo;
use crate::plugin;
use crate::store::{LiveState, StateLayout};
use crate::team::{self, BranchFate, RemoveRequest, Removed, TeamRepo};

#[derive(Args)]
pub struct CleanupArgs {
    /// The run to clean up (its id, see `wt status`), or a team worktree (its name, see `wt list`).
    #[arg(required_unless_present_any = ["all", "pool"], conflicts_with_all = ["all", "pool"], value_name = "RUN_ID|NAME")]
    target: Option<String>,
    /// Clean up every finished run (state done) of this repository.
    #[arg(long, conflicts_with = "pool")]
    all: bool,
    /// Empty the pool of recycled worktrees (`.worktrees/.pool`): remove every worktree parked
    /// there for the next task.
    #[arg(long)]
    pool: bool,
    /// Also remove worktrees with uncommitted or untracked files, and delete a run's unmerged
    /// branches.
    #[arg(long)]
    force: bool,
    /// Also delete the run's branches (only those merged into the base, unless --force). A team
    /// worktree's branch is deleted when its base holds it, and kept otherwise.
    #[arg(long)]
    delete_branches: bool,
    /// Print what was removed as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: CleanupArgs, cwd: &Path) -> Result<u8, CliError> {
    if args.pool {
        return empty_pool(&args, cwd);
    }
    match &args.target {
        Some(target) if !crate::plan::run_id::is_valid(target) => cleanup_team(&args, target, cwd),
        _ => cleanup_runs(&args, cwd),
    }
}

fn cleanup_runs(args: &CleanupArgs, cwd: &Path) -> Result<u8, CliError> {
    let repo = Repo::discover(cwd)?;
    let layout = StateLayout::new(repo.common_dir());
    let run_ids = match &args.target {
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

/// What `wt cleanup --pool` removed.
#[derive(serde::Serialize)]
struct PoolCleanup {
    removed_worktrees: Vec<std::path::PathBuf>,
    /// Bytes on disk the removed worktrees took.
    freed_bytes: u64,
}

fn empty_pool(args: &CleanupArgs, cwd: &Path) -> Result<u8, CliError> {
    if args.force || args.delete_branches {
        return Err(CliError::new(exit::BAD_INPUT, "--pool takes neither --force nor --delete-branches")
            .hint(
                "the pool holds only clean worktrees and no branch; `wt cleanup --pool` removes them all",
            ));
    }
    let repo = Repo::discover(cwd)?;
    let freed_bytes = crate::engine::pool::view(&repo, &StateLayout::new(repo.common_dir())).bytes;
    let removed_worktrees = cleanup_pool(&repo)?;
    let freed_bytes = if removed_worktrees.is_empty() { 0 } else { freed_bytes };
    let report = PoolCleanup { removed_worktrees, freed_bytes };
    if args.json {
        println!("{}", super::to_json(&report)?);
    } else if report.removed_worktrees.is_empty() {
        println!("the pool of recycled worktrees is empty");
    } else {
        println!(
            "pool: removed {} recycled worktree(s), {} freed",
            report.removed_worktrees.len(),
            super::human_size(report.freed_bytes)
        );
        for path in &report.removed_worktrees {
            println!("  removed worktree {}", path.display());
        }
    }
    Ok(exit::OK)
}

/// `wt cleanup <name>` of a team worktree.
fn cleanup_team(args: &CleanupArgs, name: &str, cwd: &Path) -> Result<u8, CliError> {
    if !team::name::is_team_name(name) {
        return Err(CliError::new(
            exit::BAD_INPUT,
            format!("`{name}` is neither a run id (6 lowercase hex characters) nor a team worktree's name"),
        )
        .hint("`wt status` lists this repository's runs, `wt list` its team worktrees"));
    }
    if args.delete_branches {
        return Err(CliError::new(exit::BAD_INPUT, "--delete-branches is for runs").hint(format!(
            "`wt cleanup {name}` deletes the branch when its base holds it, and keeps it otherwise"
        )));
    }
    let team = TeamRepo::open(cwd)?;
    let removed = team::remove(&team, &RemoveRequest { name: name.to_owned(), force: args.force })?;
    if args.json {
        println!("{}", super::to_json(&removed)?);
    } else {
        print_removed(&removed);
    }
    Ok(exit::OK)
}

fn print_removed(removed: &Removed) {
    let name = &removed.name;
    if removed.is_empty() {
        println!("team worktree {name}: nothing left to clean up");
        return;
    }
    println!("team worktree {name}: cleaned up");
    if let Some(base) = removed.base.as_deref().filter(|_| !removed.moved.is_empty()) {
        println!("  moved onto {base}: {}", removed.moved.join(", "));
    }
    if !removed.needs_restack.is_empty() {
        println!("  still need a rebase: {}", removed.needs_restack.join(", "));
    }
    if let Some(path) = &removed.removed_worktree {
        println!("  removed worktree {}", path.display());
    }
    for path in &removed.removed_files {
        println!("  removed {}", path.display());
    }
    match removed.branch {
        BranchFate::Deleted => println!("  deleted branch {name} (its base holds all of it)"),
        BranchFate::Kept => println!(
            "  kept branch {name}: it has commits its base lacks (delete it with `git branch -D {name}` once you \
             no longer need them)"
        ),
        BranchFate::Untracked | BranchFate::Absent => {}
    }
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
    for parked in &report.parked_worktrees {
        println!(
            "  parked worktree {} in the pool of recycled worktrees ({}; `wt cleanup --pool` empties it)",
            parked.worktree.display(),
            parked.slot.display()
        );
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
