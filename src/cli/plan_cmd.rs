use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, exit};
use crate::engine::{self, EngineError};
use crate::git::Repo;
use crate::plan::{self, PlanError, PlanView};

#[derive(Args)]
pub struct PlanArgs {
    /// The plan file (plan.toml).
    plan: PathBuf,
    /// Use this run id instead of the plan's or the derived one.
    #[arg(long, value_name = "ID")]
    run_id: Option<String>,
    /// Print the normalized plan as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run(args: PlanArgs, cwd: &Path) -> Result<u8, CliError> {
    let plan = plan::load(&cwd.join(&args.plan), args.run_id.as_deref()).map_err(|err| relative(err, cwd))?;
    // Inside a repository the base is resolved and checked as `wt run` would.
    let base = match Repo::discover(cwd) {
        Ok(repo) => resolve_base(&repo, &plan)?,
        Err(_) => plan.base.as_ref().map(|base| base.value.clone()),
    };
    let view = PlanView::new(&plan, base.as_deref());
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&view)
                .map_err(|err| CliError::new(exit::INTERNAL, err.to_string()))?
        );
        return Ok(exit::OK);
    }
    println!(
        "plan {} (run id {}), base {}",
        args.plan.display(),
        plan.run_id,
        base.as_deref().unwrap_or("?")
    );
    for phase in &view.phases {
        println!("phase: {} ({})", phase.name, phase.strategy.as_str());
        for task in &phase.tasks {
            println!("  {} {}  -> {}", task.number, task.name, task.branch);
        }
    }
    Ok(exit::OK)
}

/// The base `wt run` would use; None when the main checkout is detached and the plan names none.
fn resolve_base(repo: &Repo, plan: &plan::Plan) -> Result<Option<String>, CliError> {
    match engine::resolve_base(repo, plan, None) {
        Ok(base) => Ok(Some(base)),
        Err(EngineError::NoBaseBranch { .. }) => Ok(None),
        Err(err) => Err(err.into()),
    }
}

/// Plan errors name the file as the user typed it, not as `-C` joined it.
pub fn relative(mut err: PlanError, cwd: &Path) -> PlanError {
    let strip = |path: &mut PathBuf| {
        if let Ok(rest) = path.strip_prefix(cwd) {
            *path = rest.to_owned();
        }
    };
    match &mut err.place {
        plan::Place::File(path) => strip(path),
        plan::Place::At(location) => strip(&mut location.file),
        plan::Place::InMessage => {}
    }
    err
}
