use std::path::{Path, PathBuf};

use clap::Args;
use serde::Serialize;

use super::{CliError, exit};
use crate::engine::EngineError;
use crate::engine::pool::view;
use crate::git::Repo;
use crate::store::{Containment, LiveState, RunManifest, StateLayout};
use crate::ui::timeline;

#[derive(Args)]
pub struct StatusArgs {
    /// Show only this run.
    #[arg(value_parser = super::run_id_arg)]
    run_id: Option<String>,
    /// Print the runs as JSON.
    #[arg(long)]
    json: bool,
    /// Draw where the run's time went into FILE: `.svg` (the picture) or `.html` (the picture
    /// and tables of the sums). Prints where it was written and the sums instead of the status.
    #[arg(long, value_name = "FILE", requires = "run_id")]
    timeline: Option<PathBuf>,
    /// Show the pool of recycled worktrees instead: each parked worktree and its disk use.
    #[arg(long, conflicts_with_all = ["run_id", "timeline"])]
    pool: bool,
}

/// A run as `wt status` shows it: the manifest plus what only a live check can tell.
#[derive(Serialize)]
struct RunStatus {
    status: LiveState,
    resume: Option<String>,
    #[serde(flatten)]
    manifest: RunManifest,
}

/// One entry of the list: a run, or a run whose manifest cannot be read (listed with the
/// reason, never hiding the others).
#[derive(Serialize)]
#[serde(untagged)]
enum Entry<'a> {
    Run(&'a RunStatus),
    Unreadable(&'a Unreadable),
}

#[derive(Serialize)]
struct Unreadable {
    run_id: String,
    status: &'static str,
    error: String,
    fix: String,
}

pub fn run(args: StatusArgs, cwd: &Path) -> Result<u8, CliError> {
    if let Some(file) = &args.timeline {
        timeline::Format::of(file)?;
    }
    let repo = Repo::discover(cwd)?;
    let layout = StateLayout::new(repo.common_dir());
    if args.pool {
        return super::status_pool::show(&view(&repo, &layout), args.json);
    }
    let wanted = |id: &str| args.run_id.as_ref().is_none_or(|wanted| wanted == id);
    let all = layout.runs();
    let mut runs = Vec::new();
    for manifest in all.readable.into_iter().filter(|m| wanted(&m.run_id)) {
        let status = LiveState::of(&layout, &manifest);
        let resume = matches!(status, LiveState::Interrupted | LiveState::Failed)
            .then(|| format!("wt resume {}", manifest.run_id));
        runs.push(RunStatus { status, resume, manifest });
    }
    let unreadable: Vec<Unreadable> = all
        .unreadable
        .into_iter()
        .filter(|(id, _)| wanted(id))
        .map(|(run_id, err)| Unreadable {
            fix: format!("move the state aside or remove the run with `wt cleanup {run_id}`"),
            run_id,
            status: "unreadable",
            error: err.to_string(),
        })
        .collect();
    for run in &unreadable {
        eprintln!("wt status: run {}: {}; {}", run.run_id, run.error, run.fix);
    }
    if let Some(id) = &args.run_id
        && runs.is_empty()
        && unreadable.is_empty()
    {
        return Err(EngineError::NoSuchRun { run_id: id.clone(), root: repo.root().to_owned() }.into());
    }
    if let Some(file) = &args.timeline {
        // Without a readable manifest there is nothing to draw; why was said above.
        let Some(run) = runs.first() else { return Ok(exit::INTERNAL) };
        let written = timeline::write_timeline(&layout, &run.manifest, run.status, &cwd.join(file))?;
        return print_timeline(&written, args.json);
    }
    if args.json {
        let entries: Vec<Entry> =
            runs.iter().map(Entry::Run).chain(unreadable.iter().map(Entry::Unreadable)).collect();
        let text = serde_json::to_string_pretty(&entries)
            .map_err(|err| CliError::new(exit::INTERNAL, err.to_string()))?;
        println!("{text}");
    } else if runs.is_empty() && unreadable.is_empty() {
        println!("no runs in {}", repo.root().display());
    } else {
        runs.iter().for_each(print_run);
    }
    if !args.json && args.run_id.is_none() {
        let pool = view(&repo, &layout);
        if !pool.worktrees.is_empty() || !pool.problems.is_empty() {
            println!("{}", super::status_pool::summary(&pool));
        }
    }
    Ok(if unreadable.is_empty() { exit::OK } else { exit::INTERNAL })
}

fn print_timeline(written: &timeline::Written, json: bool) -> Result<u8, CliError> {
    if json {
        let text = serde_json::to_string_pretty(written)
            .map_err(|err| CliError::new(exit::INTERNAL, err.to_string()))?;
        println!("{text}");
    } else {
        written.describe().iter().for_each(|line| println!("{line}"));
    }
    Ok(exit::OK)
}

fn print_run(run: &RunStatus) {
    let m = &run.manifest;
    println!("run {}  {}  base {}  plan {}", m.run_id, run.status.as_str(), m.base, m.plan_path.display());
    println!("  main worktree {}", m.main_worktree.display());
    match m.containment {
        Some(Containment::Kernel) => println!("  contained by the kernel (wt sandbox) and the guard"),
        Some(Containment::PolicyOnly) => println!(
            "  contained by policy only: no kernel sandbox on this machine ([sandbox] required = false)"
        ),
        None => {}
    }
    for phase in &m.phases {
        println!(
            "  phase {} {} ({}): {}",
            phase.number,
            phase.name,
            phase.strategy.as_str(),
            lower(phase.state)
        );
        for task in &phase.tasks {
            println!("    {} {:<9} {}  {}", task.id, lower(task.state), task.branch, task.name);
            if let Some(error) = &task.error {
                println!("        {error}");
            }
        }
    }
    if let Some(resume) = &run.resume {
        println!("  resume: {resume}");
    }
}

fn lower(state: impl std::fmt::Debug) -> String {
    format!("{state:?}").to_lowercase()
}
