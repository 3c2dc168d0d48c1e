use std::path::{Path, PathBuf};

use clap::Args;

use super::plan_cmd::relative;
use super::submit_cmd::{SubmitFlags, submit_run};
use super::{CliError, exit};
use crate::engine::{self, Agents, Overrides, RunOutcome, RunRequest};
use crate::plan::{self, AgentKind, Plan};
use crate::ui;

#[derive(Args)]
pub struct RunArgs {
    /// The plan file (plan.toml).
    plan: PathBuf,
    /// Use this run id (6 lowercase hex characters) instead of the plan's or the derived one.
    #[arg(long, value_name = "ID", value_parser = super::run_id_arg)]
    run_id: Option<String>,
    /// The branch to stack on (default: the plan's base, else the main checkout's branch).
    #[arg(long, value_name = "BRANCH")]
    base: Option<String>,
    #[command(flatten)]
    options: RunOptions,
}

/// Flags shared by `wt run` and `wt resume`.
#[derive(Args)]
pub struct RunOptions {
    /// The agent backend: script (each task's `run`), command, or claude.
    #[arg(long, value_name = "KIND", value_parser = parse_kind)]
    agent: Option<AgentKind>,
    /// Shell command run as the agent of every task (implies --agent command).
    #[arg(long, value_name = "SHELL")]
    agent_command: Option<String>,
    /// At most this many parallel tasks at once.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    max_parallel: Option<u32>,
    /// Stop an agent that runs longer than this (seconds, or 90s, 15m, 2h); its work is kept.
    #[arg(long, value_name = "DURATION", value_parser = parse_timeout)]
    timeout: Option<u64>,
    /// Go on with a plan that changed since the run started (unchanged verified tasks are kept).
    #[arg(long)]
    force_plan: bool,
    /// Submit the stack when the run is done (see `wt submit`).
    #[arg(long)]
    submit: bool,
    #[command(flatten)]
    submit_flags: SubmitFlags,
    /// Print one JSON event per line on stdout.
    #[arg(long)]
    json: bool,
}

fn parse_timeout(text: &str) -> Result<u64, String> {
    plan::parse_duration(text)
        .map(|d| d.as_secs())
        .ok_or_else(|| format!("`{text}` is not a duration; write 600, 90s, 15m or 2h"))
}

fn parse_kind(text: &str) -> Result<AgentKind, String> {
    AgentKind::parse(text).ok_or_else(|| format!("unknown agent kind `{text}`; use {}", AgentKind::list("")))
}

pub fn run(args: RunArgs, cwd: &Path) -> Result<u8, CliError> {
    let plan = plan::load(&cwd.join(&args.plan), args.run_id.as_deref()).map_err(|err| relative(err, cwd))?;
    execute(plan, cwd, args.base, args.options)
}

/// Runs (or resumes) `plan` and prints the outcome; shared by `wt run` and `wt resume`.
pub fn execute(plan: Plan, cwd: &Path, base: Option<String>, options: RunOptions) -> Result<u8, CliError> {
    let run_id = plan.run_id.clone();
    let request = RunRequest {
        plan,
        cwd: cwd.to_owned(),
        overrides: Overrides {
            agent_kind: options.agent,
            agent_command: options.agent_command,
            max_parallel: options.max_parallel.map(|n| n as usize),
            timeout_secs: options.timeout,
        },
        base,
        force_plan: options.force_plan,
        agents: Agents::Started,
    };
    let sink = ui::sink_for(options.json);
    let outcome = engine::run(request, sink.as_ref()).map_err(CliError::from)?;
    if !options.json {
        print_summary(&outcome, &format!("wt resume {run_id}"));
    }
    if !outcome.ok {
        return Ok(exit::RUN_FAILED);
    }
    if options.submit {
        return submit_run(cwd, &run_id, options.submit_flags, options.json);
    }
    Ok(exit::OK)
}

fn print_summary(outcome: &RunOutcome, resume: &str) {
    if !outcome.stack.is_empty() {
        println!("stack of run {} (bottom first):", outcome.run_id);
        for entry in &outcome.stack {
            println!(
                "  {}  {}  {} commit(s)  [Task {}] {}",
                entry.branch, entry.commit, entry.commits, entry.task, entry.name
            );
        }
    }
    if outcome.ok {
        println!("main worktree: {}", outcome.main_worktree.display());
        return;
    }
    println!(
        "run {} stopped; nothing was lost: failed tasks keep their branch and worktree.",
        outcome.run_id
    );
    for failure in &outcome.failures {
        println!("  task {} ({}): {}", failure.task, failure.name, failure.error);
    }
    println!("logs: {}", outcome.logs.display());
    println!("fix the cause, then resume with: {resume}");
}
