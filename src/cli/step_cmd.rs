use std::path::{Path, PathBuf};

use clap::Args;

use super::plan_cmd::relative;
use super::{CliError, exit};
use crate::engine::{Agents, Overrides, RunRequest, load_run};
use crate::git::Repo;
use crate::plan;
use crate::plugin::{self, Release, StepOutcome, StepStatus};
use crate::ui::SilentSink;

#[derive(Args)]
pub struct StepArgs {
    /// The plan (plan.toml or a spectacular plan.md) or the id of a run already started.
    target: String,
    /// With a plan: use this run id.
    #[arg(long, value_name = "ID", value_parser = super::run_id_arg)]
    run_id: Option<String>,
    /// Go on with a plan that changed since the run started.
    #[arg(long)]
    force_plan: bool,
    /// Print the step as one JSON object (the orchestrator's interface).
    #[arg(long)]
    json: bool,
    /// Give up waiting for a worker of this run that will not return (its subagent ended
    /// without returning, or the session that dispatched it is gone): `spectacular:wt-worker-<k>`
    /// as `wait` lists it, or `all`. Its task is then checked as it stands. Repeatable.
    #[arg(long, value_name = "WORKER", value_parser = release_arg)]
    release: Vec<Release>,
}

fn release_arg(text: &str) -> Result<Release, String> {
    Release::parse(text).ok_or_else(|| {
        format!(
            "`{text}` is no wt worker: name one as `wt step` lists it (spectacular:wt-worker-<k>), or `all`"
        )
    })
}

pub fn run(args: StepArgs, cwd: &Path) -> Result<u8, CliError> {
    let plan_path = resolve_plan(&args.target, cwd)?;
    let run_id =
        args.run_id.clone().or_else(|| plan::run_id::is_valid(&args.target).then(|| args.target.clone()));
    let plan = plan::load(&plan_path, run_id.as_deref()).map_err(|err| relative(err, cwd))?;
    let request = RunRequest {
        plan,
        cwd: cwd.to_owned(),
        overrides: Overrides::default(),
        base: None,
        force_plan: args.force_plan,
        agents: Agents::Dispatched,
    };
    let outcome = plugin::step(request, &args.release, &SilentSink)?;
    if args.json {
        let text =
            serde_json::to_string(&outcome).map_err(|err| CliError::new(exit::INTERNAL, err.to_string()))?;
        println!("{text}");
    } else {
        print(&outcome);
    }
    Ok(match outcome.status {
        StepStatus::Failed => exit::RUN_FAILED,
        StepStatus::Dispatch | StepStatus::Wait | StepStatus::Done => exit::OK,
    })
}

/// A run id (of a run that exists) names its plan; anything else is a plan path.
fn resolve_plan(target: &str, cwd: &Path) -> Result<PathBuf, CliError> {
    let as_path = cwd.join(target);
    if as_path.exists() || !plan::run_id::is_valid(target) {
        return Ok(as_path);
    }
    let repo = Repo::discover(cwd)?;
    match load_run(&repo, target) {
        Ok(manifest) => Ok(manifest.plan_path),
        Err(crate::engine::EngineError::NoSuchRun { .. }) => {
            Err(CliError::new(exit::BAD_INPUT, format!("no run {target} and no plan file of that name"))
                .hint("start the run with `wt step <plan> --json`; `wt status` lists the runs"))
        }
        Err(err) => Err(err.into()),
    }
}

fn print(outcome: &StepOutcome) {
    for worker in &outcome.released {
        println!("released {} (task {}): it will not return", worker.subagent_type, worker.task);
    }
    match outcome.status {
        StepStatus::Dispatch => {
            println!("run {}: dispatch {} subagent(s)", outcome.run_id, outcome.dispatch.len());
            for item in &outcome.dispatch {
                println!("  {}  {}", item.subagent_type, item.description);
            }
        }
        StepStatus::Wait => {
            println!("run {}: wait for {} subagent(s)", outcome.run_id, outcome.waiting.len());
            for worker in &outcome.waiting {
                println!("  {}  {}", worker.subagent_type, worker.description);
            }
        }
        StepStatus::Done => {
            for entry in &outcome.stack {
                println!("  {}  {}", entry.branch, entry.commit);
            }
        }
        StepStatus::Failed => {}
    }
    println!("{}", outcome.message);
}
