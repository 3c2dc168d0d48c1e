use std::path::Path;

use clap::Args;

use super::{CliError, exit};
use crate::team::{self, TeamRepo};

#[derive(Args)]
pub struct DiffArgs {
    /// The wt worktree: a team's name, a run worktree's folder name, or its branch.
    name: String,
    /// Only the summary: files changed, insertions, deletions.
    #[arg(long)]
    stat: bool,
}

pub fn run(args: DiffArgs, cwd: &Path) -> Result<u8, CliError> {
    let team = TeamRepo::open(cwd)?;
    print!("{}", team::diff(&team, &args.name, args.stat)?);
    Ok(exit::OK)
}
