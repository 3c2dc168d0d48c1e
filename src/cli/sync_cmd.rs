use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::team::{self, SyncEvent, SyncScope, Synced, TeamRepo, TrunkState, TrunkSync};

#[derive(Args)]
pub struct SyncArgs {
    /// The stack to sync: a run's id, or a team worktree's name (or any branch of the stack);
    /// without it, every stack (as --all).
    #[arg(conflicts_with = "all", value_name = "RUN_ID|NAME")]
    target: Option<String>,
    /// Sync every stack git-spice tracks.
    #[arg(long)]
    all: bool,
    /// Print what was done as JSON (progress still goes to stderr).
    #[arg(long)]
    json: bool,
}

pub fn run(args: SyncArgs, cwd: &Path) -> Result<u8, CliError> {
    let team = TeamRepo::open(cwd)?;
    let scope = match args.target {
        Some(target) if crate::plan::run_id::is_valid(&target) => SyncScope::Run(target),
        Some(target) => SyncScope::Stack(target),
        None => SyncScope::All,
    };
    let synced = team::sync(&team, &scope, &mut |event| eprintln!("wt sync: {}", describe(event)))?;
    if args.json {
        println!("{}", super::to_json(&synced)?);
    } else {
        print_summary(&synced);
    }
    // Something left undone (it holds work, or someone else's push) is a refusal.
    Ok(if synced.left.is_empty() { exit::OK } else { exit::REFUSED })
}

fn describe(event: &SyncEvent) -> String {
    let wt = crate::process::own_name();
    match event {
        SyncEvent::Trunk(trunk) => describe_trunk(trunk),
        SyncEvent::Merged { branch, change, base } => {
            format!("{branch}: {change} was merged (into {})", base.as_deref().unwrap_or("its base"))
        }
        SyncEvent::Moved { branch, from, onto } => format!("{branch}: moved off {from} onto {onto}"),
        SyncEvent::Restacked { branch } => format!("{branch}: restacked on its base"),
        SyncEvent::Resubmitted { branch, change, base, .. } => {
            format!(
                "{branch}: change request {change} updated: pushed, based on {}",
                base.as_deref().unwrap_or("?")
            )
        }
        SyncEvent::Removed { name, worktree } => {
            format!("{name}: removed its worktree {} and agent `wt-{name}`", worktree.display())
        }
        SyncEvent::Deleted { branch, sha } => {
            format!("{branch}: deleted (was {}; `git branch {branch} {sha}` brings it back)", short(sha))
        }
        SyncEvent::Left { branch, reason, fix } => format!("{branch}: left as it is: {reason} ({wt}: {fix})"),
    }
}

fn describe_trunk(trunk: &TrunkSync) -> String {
    let TrunkSync { name, remote, .. } = trunk;
    let at = |sha: &Option<String>| sha.as_deref().map(short).unwrap_or("nothing").to_owned();
    match trunk.state {
        TrunkState::UpToDate => {
            format!("{name}: fetched, up to date with {remote}/{name} ({})", at(&trunk.after))
        }
        TrunkState::FastForwarded => {
            format!(
                "{name}: fast-forwarded to {remote}/{name} ({} -> {})",
                at(&trunk.before),
                at(&trunk.after)
            )
        }
        TrunkState::CheckedOut => {
            let place = trunk.checked_out.as_deref().map(|p| p.display().to_string()).unwrap_or_default();
            format!(
                "{name}: left at {}, {} commit(s) behind {remote}/{name}: it is checked out in {place}, which wt does \
                 not change (`git -C {place} pull --ff-only {remote} {name}` brings it up); the stack moves onto the \
                 local {name}",
                at(&trunk.before),
                trunk.behind
            )
        }
        TrunkState::Diverged => format!(
            "{name}: left at {}: it has commits {remote}/{name} lacks (fetched {})",
            at(&trunk.before),
            at(&trunk.fetched)
        ),
    }
}

fn short(sha: &str) -> &str {
    sha.get(..12).unwrap_or(sha)
}

fn print_summary(synced: &Synced) {
    if synced.merged.is_empty() {
        println!("nothing merged: no branch to move or remove");
        return;
    }
    println!("merged: {}", synced.merged.join(", "));
    let list = |label: &str, items: Vec<String>| {
        if !items.is_empty() {
            println!("  {label}: {}", items.join(", "));
        }
    };
    list("moved", synced.moved.iter().map(|m| format!("{} onto {}", m.branch, m.onto)).collect());
    list("restacked", synced.restacked.clone());
    list("change requests updated", synced.resubmitted.clone());
    list("worktrees removed", synced.removed.iter().map(|p| p.display().to_string()).collect());
    list("branches deleted", synced.deleted.clone());
    for left in &synced.left {
        println!("  left {}: {}", left.branch, left.reason);
        println!("    {}", left.fix);
    }
}
