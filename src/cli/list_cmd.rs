use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::team::view::{self, ChangeState, Entry, Kind, Listing};
use crate::team::{ChangesRead, TeamRepo};

#[derive(Args)]
pub struct ListArgs {
    /// Show the worktrees as the stack they form (as `wt stack`).
    #[arg(long)]
    stack: bool,
    /// Print them as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: ListArgs, cwd: &Path) -> Result<u8, CliError> {
    let team = TeamRepo::open(cwd)?;
    if args.stack {
        return show_stack(&team, args.json);
    }
    let listing = view::list(&team)?;
    if args.json {
        println!("{}", super::to_json(&listing)?);
        return Ok(exit::OK);
    }
    if listing.entries.is_empty() {
        println!(
            "no wt worktrees in {} (`wt create <name> --base <branch>` makes one)",
            team.repo().root().display()
        );
    }
    let width = listing.entries.iter().map(|e| e.name.len()).max().unwrap_or(0);
    for entry in &listing.entries {
        println!("{:<width$}  {}", entry.name, summary(entry));
    }
    print_changes_note(&listing);
    Ok(exit::OK)
}

/// One line about an entry: kind, branch and base, files, commits, change request, worktree.
pub fn summary(entry: &Entry) -> String {
    let kind = match (&entry.kind, &entry.run_id) {
        (Kind::Run, Some(run_id)) => format!("run {run_id}"),
        (Kind::Run, None) => "run".to_owned(),
        (Kind::Team, _) => "team".to_owned(),
        (Kind::Branch, _) => "branch".to_owned(),
    };
    let mut parts = vec![kind, placement(entry)];
    match entry.dirty {
        Some(true) => parts.push("uncommitted files".into()),
        Some(false) => parts.push("clean".into()),
        None => {}
    }
    if let (Some(ahead), Some(behind)) = (entry.ahead, entry.behind) {
        parts.push(format!("{ahead} ahead, {behind} behind"));
    }
    parts.push(change(entry));
    if let Some(worktree) = &entry.worktree {
        parts.push(worktree.display().to_string());
    }
    parts.join("  ")
}

fn placement(entry: &Entry) -> String {
    let on = match (&entry.branch, &entry.base) {
        (Some(branch), Some(base)) => format!("{branch} on {base}"),
        (Some(branch), None) => format!("{branch} (not in the stack)"),
        (None, _) => "detached".to_owned(),
    };
    if entry.needs_restack { format!("{on} (needs a rebase)") } else { on }
}

pub fn change(entry: &Entry) -> String {
    let Some(change) = &entry.change else { return "no change request".to_owned() };
    let state = match change.state {
        ChangeState::Open => "open",
        ChangeState::Closed => "closed",
        ChangeState::Merged => "merged",
        ChangeState::Unknown => "state unknown",
    };
    let mut text = format!("{} {state}", change.id);
    if let Some(url) = &change.url {
        text.push_str(&format!(" {url}"));
    }
    if let Some(unresolved) = change.unresolved_comments.filter(|n| *n > 0) {
        text.push_str(&format!(" ({unresolved} unresolved comment(s))"));
    }
    text
}

pub fn print_changes_note(listing: &Listing) {
    if listing.changes == ChangesRead::Unavailable && listing.entries.iter().any(|e| e.change.is_some()) {
        println!("(change request states are unknown: git-spice could not ask the forge)");
    }
}

/// The stack as a tree: the trunk, then each branch indented under its base.
pub fn show_stack(team: &TeamRepo, json: bool) -> Result<u8, CliError> {
    let listing = view::stack(team)?;
    if json {
        println!("{}", super::to_json(&listing)?);
        return Ok(exit::OK);
    }
    if let Some(trunk) = &listing.trunk {
        println!("{trunk}");
    }
    for entry in &listing.entries {
        let indent = "  ".repeat(entry.depth.unwrap_or(0));
        let label = match &entry.branch {
            Some(branch) if *branch != entry.name => format!("{branch} [{}]", entry.name),
            _ => entry.name.clone(),
        };
        match entry.depth {
            Some(_) => println!("{indent}{label}  {}", summary(entry)),
            None => println!("(not in the stack) {label}  {}", summary(entry)),
        }
    }
    print_changes_note(&listing);
    Ok(exit::OK)
}
