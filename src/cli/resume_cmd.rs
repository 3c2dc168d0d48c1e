use std::path::Path;

use clap::Args;

use super::run_cmd::{RunOptions, execute};
use super::{CliError, exit};
use crate::engine::load_run;
use crate::git::Repo;
use crate::plan;

#[derive(Args)]
pub struct ResumeArgs {
    /// The run to resume (see `wt status`).
    #[arg(value_parser = super::run_id_arg)]
    run_id: String,
    #[command(flatten)]
    options: RunOptions,
}

pub fn run(args: ResumeArgs, cwd: &Path) -> Result<u8, CliError> {
    let repo = Repo::discover(cwd)?;
    let manifest = load_run(&repo, &args.run_id)?;
    let plan = plan::load(&manifest.plan_path, Some(&args.run_id)).map_err(|err| {
        let fix = format!(
            "{}; or run the plan from its new place with `wt run <plan> --run-id {}`",
            err.fix, args.run_id
        );
        CliError::new(exit::BAD_INPUT, err.to_string()).hint(fix)
    })?;
    execute(plan, cwd, None, args.options)
}
