//! `wt poll <name>`: waits for the next event of a branch's change request or base and prints it
//! (one JSON line with `--json`); what it is doing meanwhile goes to stderr. Exit 0 with an
//! event, `exit::POLL_TIMEOUT` when none came in time.

use std::path::Path;
use std::time::{Duration, Instant};

use clap::Args;

use super::{CliError, exit};
use crate::forge::CheckState;
use crate::spice::ChangeStatus;
use crate::team::TeamRepo;
use crate::team::poll::{self, Event, Outcome, PollRequest, Progress, Report, Snapshot};

/// How often a poll with nothing to report says it is still there.
const HEARTBEAT: Duration = Duration::from_secs(60);

#[derive(Args)]
pub struct PollArgs {
    /// The team worktree (or a run's worktree, or a run's branch) whose change request to watch.
    name: String,
    /// Give up after this many minutes (exit 7); below Claude Code's 30-minute limit for a
    /// background command by default.
    #[arg(long, value_name = "MINUTES", default_value_t = 20.0, value_parser = positive)]
    timeout: f64,
    /// Seconds between two looks at git-spice and the forge.
    #[arg(long, value_name = "SECONDS", default_value_t = 30, value_parser = clap::value_parser!(u64).range(1..))]
    interval: u64,
    /// Print the event as one JSON line.
    #[arg(long)]
    json: bool,
}

fn positive(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(value) if value > 0.0 && value.is_finite() => Ok(value),
        _ => Err(format!("{text} is not a positive number of minutes")),
    }
}

pub fn run(args: PollArgs, cwd: &Path) -> Result<u8, CliError> {
    let team = TeamRepo::open(cwd)?;
    let request = PollRequest {
        name: args.name.clone(),
        timeout: Duration::from_secs_f64(args.timeout * 60.0),
        interval: Duration::from_secs(args.interval),
    };
    let mut heartbeat = Instant::now();
    let who = format!("wt poll {}", args.name);
    let mut say = |progress: Progress| say(&who, &request, progress, &mut heartbeat);
    match poll::poll(&team, &request, &mut say)? {
        Outcome::Event(report) => {
            if args.json {
                println!("{}", json_line(&report)?);
            } else {
                print_report(&report);
            }
            Ok(exit::OK)
        }
        Outcome::TimedOut { watched, last } => {
            eprintln!(
                "{who}: nothing happened in {} ({}); run it again to keep watching",
                minutes(request.timeout),
                describe(&last)
            );
            if args.json {
                let timeout = serde_json::json!({
                    "event": "timeout", "name": watched.name, "branch": watched.branch,
                    "timeout_minutes": args.timeout,
                });
                println!("{timeout}");
            }
            Ok(exit::POLL_TIMEOUT)
        }
    }
}

fn json_line(report: &Report) -> Result<String, CliError> {
    serde_json::to_string(report).map_err(|err| CliError::new(exit::INTERNAL, err.to_string()))
}

fn say(who: &str, request: &PollRequest, progress: Progress, heartbeat: &mut Instant) {
    match progress {
        Progress::Watching { watched, snapshot } => {
            let forge = watched.forge.as_deref().map(|forge| format!("; forge {forge}")).unwrap_or_default();
            eprintln!(
                "{who}: watching {} ({}) every {} s for up to {}{forge}",
                watched.branch,
                describe(snapshot),
                request.interval.as_secs(),
                minutes(request.timeout)
            );
            if snapshot.number.is_none() {
                eprintln!(
                    "{who}: {} has no change request yet: its base is watched, and its change request once opened",
                    watched.branch
                );
            }
        }
        Progress::NoForge { remote } => eprintln!(
            "{who}: no forge wt can read for {}: no comment bodies and no CI checks; watching the change request's \
             state, its review threads and the base",
            remote.map_or("this repository (git-spice has no remote)".to_owned(), |r| format!(
                "the remote {r}"
            ))
        ),
        Progress::NoChecks { number } => {
            eprintln!(
                "{who}: #{number} has no CI checks to read (no CI source, or none yet): watching the rest"
            )
        }
        Progress::Looked { elapsed, snapshot } => {
            if heartbeat.elapsed() >= HEARTBEAT {
                *heartbeat = Instant::now();
                eprintln!("{who}: still watching after {} ({})", minutes(elapsed), describe(snapshot));
            }
        }
        Progress::Trouble(trouble) => eprintln!("{who}: {trouble}; trying again at the next look"),
    }
}

/// `#2 open, base a, CI pending (1 of 2 passed)`.
fn describe(snapshot: &Snapshot) -> String {
    let mut parts = Vec::new();
    if let Some(number) = snapshot.number {
        let state = match snapshot.status {
            Some(ChangeStatus::Open) => "open",
            Some(ChangeStatus::Closed) => "closed",
            Some(ChangeStatus::Merged) => "merged",
            None => "state unknown",
        };
        parts.push(format!("#{number} {state}"));
    }
    if let Some(base) = &snapshot.base {
        parts.push(format!("base {base}"));
    }
    if let Some(checks) = &snapshot.checks {
        let passed = checks.iter().filter(|c| c.state == CheckState::Passed).count();
        let state = match snapshot.ci() {
            Some(CheckState::Failed) => "failing",
            Some(CheckState::Passed) => "passed",
            _ => "pending",
        };
        parts.push(format!("CI {state} ({passed} of {} passed)", checks.len()));
    }
    parts.join(", ")
}

fn minutes(duration: Duration) -> String {
    let seconds = duration.as_secs();
    if seconds < 120 { format!("{seconds} s") } else { format!("{} min", seconds / 60) }
}

fn print_report(report: &Report) {
    let change = report.change.as_ref().map(|change| match &change.url {
        Some(url) => format!("#{} {url}", change.number),
        None => format!("#{}", change.number),
    });
    println!("{}: {}", report.branch, headline(&report.event));
    if let Some(change) = change {
        println!("  change  {change}");
    }
    details(&report.event);
    for other in &report.also {
        println!("  also    {}", headline(other));
        details(other);
    }
    println!("  next    {}", report.next);
}

fn headline(event: &Event) -> String {
    match event {
        Event::BaseUpdated { detail, .. } => format!("base_updated: {detail}"),
        Event::Merged => "merged: the change request was merged".into(),
        Event::Closed => "closed: the change request was closed without merging".into(),
        Event::ReviewComments { comments, unresolved } if comments.is_empty() => {
            format!("review_comments: {} unresolved review thread(s)", unresolved.unwrap_or(0))
        }
        Event::ReviewComments { comments, .. } => {
            format!("review_comments: {} new comment(s)", comments.len())
        }
        Event::CiPassed { checks } => format!("ci_passed: all {} check(s) passed", checks.len()),
        Event::CiFailure { checks } => format!("ci_failure: {} check(s) failed", checks.len()),
    }
}

fn details(event: &Event) {
    match event {
        Event::ReviewComments { comments, .. } => {
            for comment in comments {
                let mut lines = comment.body.trim_end().lines();
                println!("  - {}", lines.next().unwrap_or_default());
                lines.for_each(|line| println!("    {line}"));
            }
        }
        Event::CiFailure { checks } => {
            for check in checks {
                match &check.link {
                    Some(link) => println!("  - {}: {link}", check.name),
                    None => println!("  - {}", check.name),
                }
            }
        }
        _ => {}
    }
}
