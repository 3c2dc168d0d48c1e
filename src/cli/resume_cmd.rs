use std::path::Path;

use clap::Args;

use super::run_cmd::{RunOptions, check_run_id, execute};
use super::{CliError, exit};
use crate::git::Repo;
use crate::plan;
use crate::store::{RunManifest, StateLayout};

#[derive(Args)]
pub struct ResumeArgs {
    /// The run to resume (see `wt status`).
    run_id: String,
    #[command(flatten)]
    options: RunOptions,
}

pub fn run(args: ResumeArgs, cwd: &Path) -> Result<u8, CliError> {
    check_run_id(&args.run_id)?;
    let repo = Repo::discover(cwd)?;
    let path = StateLayout::new(repo.common_dir()).manifest(&args.run_id);
    if !path.exists() {
        return Err(CliError::new(
            exit::BAD_INPUT,
            format!("no run {} in {}", args.run_id, repo.root().display()),
        )
        .hint("`wt status` lists the runs of this repository"));
    }
    let manifest = RunManifest::load(&path)?;
    let plan = plan::load(&manifest.plan_path, Some(&args.run_id)).map_err(|err| {
        let fix = format!(
            "{}; or run the plan from its new place with `wt run <plan> --run-id {}`",
            err.fix, args.run_id
        );
        CliError::new(exit::BAD_INPUT, err.to_string()).hint(fix)
    })?;
    execute(plan, cwd, None, args.options)
}
