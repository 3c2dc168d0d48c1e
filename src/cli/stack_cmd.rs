use std::path::Path;

use clap::Args;

use super::CliError;
use crate::team::TeamRepo;

#[derive(Args)]
pub struct StackArgs {
    /// Print the stack as JSON (branches in topological order, each with its base and depth).
    #[arg(long)]
    json: bool,
}

pub fn run(args: StackArgs, cwd: &Path) -> Result<u8, CliError> {
    super::list_cmd::show_stack(&TeamRepo::open(cwd)?, args.json)
}
