use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::team::TeamRepo;
use crate::team::view::{self, Entry, Kind};

#[derive(Args)]
pub struct InfoArgs {
    /// The wt worktree: a team's name, a run worktree's folder name, or its branch.
    name: String,
    /// Print it as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: InfoArgs, cwd: &Path) -> Result<u8, CliError> {
    let team = TeamRepo::open(cwd)?;
    let entry = view::info(&team, &args.name)?;
    if args.json {
        println!("{}", super::to_json(&entry)?);
    } else {
        print_entry(&entry);
    }
    Ok(exit::OK)
}

fn print_entry(entry: &Entry) {
    let kind = match entry.kind {
        Kind::Team => "team worktree".to_owned(),
        Kind::Run => format!("worktree of run {}", entry.run_id.as_deref().unwrap_or("?")),
        Kind::Branch => "branch".to_owned(),
    };
    println!("{} ({kind})", entry.name);
    if let Some(worktree) = &entry.worktree {
        println!("  worktree    {}", worktree.display());
    }
    match (&entry.branch, &entry.base) {
        (Some(branch), Some(base)) => println!("  branch      {branch} on {base}"),
        (Some(branch), None) => println!("  branch      {branch}, not in git-spice's stack"),
        (None, _) => println!("  branch      none (detached)"),
    }
    if entry.needs_restack {
        println!("  rebase      due: its base moved since it was stacked");
    }
    match entry.dirty {
        Some(true) => println!("  files       uncommitted changes"),
        Some(false) => println!("  files       clean"),
        None => {}
    }
    if let (Some(ahead), Some(behind), Some(base)) = (entry.ahead, entry.behind, &entry.base) {
        println!("  commits     {ahead} ahead of {base}, {behind} behind");
    }
    println!("  change      {}", super::list_cmd::change(entry));
    if let Some(push) = &entry.push {
        match push.needs_push {
            true => {
                println!("  pushed      {} commit(s) to push, {} on the remote only", push.ahead, push.behind)
            }
            false => println!("  pushed      up to date"),
        }
    }
    if !entry.dependents.is_empty() {
        println!("  dependents  {}", entry.dependents.join(", "));
    }
    if let Some(verify) = &entry.verify {
        println!("  verify      {verify}");
    }
    if let Some(depth) = entry.depth {
        println!("  position    {depth} above the trunk");
    }
}
