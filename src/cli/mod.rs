//! The command line: clap definitions here, one handler file per command.

mod check_ignore_cmd;
mod cleanup_cmd;
mod create_cmd;
mod diff_cmd;
mod doctor_cmd;
mod error;
mod guard_cmd;
mod hook_cmd;
mod info_cmd;
mod list_cmd;
mod plan_cmd;
mod poll_cmd;
mod pr_cmd;
mod push_cmd;
mod rebase_cmd;
mod resume_cmd;
mod run_cmd;
mod sandbox_cmd;
mod stack_cmd;
mod status_cmd;
mod status_pool;
mod step_cmd;
mod submit_cmd;
mod sync_cmd;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

pub use error::{CliError, exit};

#[derive(Parser)]
#[command(
    name = "wt",
    // "(spectacular)" tells this wt from other tools named wt (`wt doctor` reads it).
    version = concat!(env!("CARGO_PKG_VERSION"), " (spectacular)"),
    about = "Run a plan of AI-agent tasks in isolated git worktrees, stacked with git-spice"
)]
struct Cli {
    /// Run as if wt was started in this directory.
    #[arg(short = 'C', global = true, value_name = "DIR")]
    directory: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run (or resume) a plan: every task in its own worktree and branch, stacked in plan order.
    Run(run_cmd::RunArgs),
    /// Advance a run as far as it can without agents and say what to dispatch next (for an
    /// orchestrating Claude Code session; see /spectacular:execute).
    Step(step_cmd::StepArgs),
    /// Resume an interrupted or failed run by its id (the same as running its plan again).
    Resume(resume_cmd::ResumeArgs),
    /// Validate a plan and print it normalized.
    Plan(plan_cmd::PlanArgs),
    /// Submit a finished run's stack for review (git-spice stack submit; drafts by default).
    Submit(submit_cmd::SubmitArgs),
    /// Remove a run's worktrees, generated files and state (its branches stay unless asked), or a
    /// team worktree with its agent (what sits on it moves onto its base).
    Cleanup(cleanup_cmd::CleanupArgs),
    /// Make a team worktree `.worktrees/<name>` on a new branch stacked on --base (git-spice), with
    /// a generated agent `wt-<name>`; again with the same base reports it.
    Create(create_cmd::CreateArgs),
    /// List every wt worktree (teams' and runs'): branch, base, files, commits, change request.
    List(list_cmd::ListArgs),
    /// Show the wt worktrees as the stack they form, in topological order.
    Stack(stack_cmd::StackArgs),
    /// Show one wt worktree: base, dependents, files, commits, change request, place in the stack.
    Info(info_cmd::InfoArgs),
    /// Show what a wt worktree's branch changes since its base (from their merge base).
    Diff(diff_cmd::DiffArgs),
    /// Wait for the next event of a worktree's change request or base (CI, reviews, a merge) and
    /// print it; exit 7 when none came within --timeout. A worker runs it in the background.
    Poll(poll_cmd::PollArgs),
    /// Push a team worktree's own branch: a fast-forward, or after a rebase a replacement of
    /// wt's own last push; never over someone else's.
    Push(push_cmd::PushArgs),
    /// Open a team worktree's branch as a draft change request based on its base, or update it.
    Pr(pr_cmd::PrArgs),
    /// Rebase a team worktree's branch onto its base (the next surviving one when its base
    /// merged), and restack what sits on it, each in its own worktree.
    Rebase(rebase_cmd::RebaseArgs),
    /// After change requests merged: fetch the trunk, move what sat on merged branches onto the
    /// next base, update their change requests, remove merged worktrees and branches.
    Sync(sync_cmd::SyncArgs),
    /// PreToolUse hook: keep an agent inside its worktree (reads the hook JSON on stdin).
    Guard(guard_cmd::GuardArgs),
    /// Say what is missing on this machine and in this repository, with the command that fixes it.
    Doctor(doctor_cmd::DoctorArgs),
    /// Check that run worktrees are ignored by git; --fix adds the rule.
    CheckIgnore(check_ignore_cmd::CheckIgnoreArgs),
    /// Claude Code plugin hooks: session-start, subagent-start, subagent-stop, teammate-idle,
    /// task-completed (reads hook JSON).
    #[command(hide = true)]
    Hook(hook_cmd::HookArgs),
    /// Run a command that may write only in a task's worktree (and its git, temporary and cache
    /// folders), enforced by the kernel (Landlock); the exit code is the command's.
    Sandbox(sandbox_cmd::SandboxArgs),
    /// Show the runs of this repository with their phases, tasks, branches and worktrees.
    Status(status_cmd::StatusArgs),
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    let cwd = match resolve_cwd(cli.directory) {
        Ok(cwd) => cwd,
        Err(err) => return report(err),
    };
    let result = match cli.command {
        Command::Run(args) => run_cmd::run(args, &cwd),
        Command::Resume(args) => resume_cmd::run(args, &cwd),
        Command::Step(args) => step_cmd::run(args, &cwd),
        Command::Plan(args) => plan_cmd::run(args, &cwd),
        Command::Status(args) => status_cmd::run(args, &cwd),
        Command::Cleanup(args) => cleanup_cmd::run(args, &cwd),
        Command::Create(args) => create_cmd::run(args, &cwd),
        Command::List(args) => list_cmd::run(args, &cwd),
        Command::Stack(args) => stack_cmd::run(args, &cwd),
        Command::Info(args) => info_cmd::run(args, &cwd),
        Command::Diff(args) => diff_cmd::run(args, &cwd),
        Command::Push(args) => push_cmd::run(args, &cwd),
        Command::Pr(args) => pr_cmd::run(args, &cwd),
        Command::Rebase(args) => rebase_cmd::run(args, &cwd),
        Command::Sync(args) => sync_cmd::run(args, &cwd),
        Command::Submit(args) => submit_cmd::run(args, &cwd),
        Command::Poll(args) => poll_cmd::run(args, &cwd),
        Command::Guard(args) => Ok(guard_cmd::run(args)),
        Command::Hook(args) => Ok(hook_cmd::run(args, &cwd)),
        Command::CheckIgnore(args) => check_ignore_cmd::run(args, &cwd),
        Command::Doctor(args) => doctor_cmd::run(args, &cwd),
        Command::Sandbox(args) => sandbox_cmd::run(args, &cwd),
    };
    match result {
        Ok(code) => ExitCode::from(code),
        Err(err) => report(err),
    }
}

fn report(err: CliError) -> ExitCode {
    eprintln!("{err}");
    ExitCode::from(err.code)
}

/// A run id argument: 6 lowercase hex characters.
fn run_id_arg(text: &str) -> Result<String, String> {
    if crate::plan::run_id::is_valid(text) {
        return Ok(text.to_owned());
    }
    Err(format!(
        "run id {text}: not 6 lowercase hex characters (run ids look like a1b2c3; `wt status` lists this \
         repository's runs)"
    ))
}

/// `1.5 GiB`: a size on disk for people.
fn human_size(bytes: u64) -> String {
    let units = ["B", "KiB", "MiB", "GiB", "TiB"];
    let mut size = bytes as f64;
    let mut unit = 0;
    while size >= 1024.0 && unit < units.len() - 1 {
        size /= 1024.0;
        unit += 1;
    }
    if unit == 0 { format!("{bytes} B") } else { format!("{size:.1} {}", units[unit]) }
}

/// `value` as pretty JSON, for a command's `--json`.
fn to_json(value: &impl serde::Serialize) -> Result<String, CliError> {
    serde_json::to_string_pretty(value).map_err(|err| CliError::new(exit::INTERNAL, err.to_string()))
}

fn resolve_cwd(directory: Option<PathBuf>) -> Result<PathBuf, CliError> {
    let cwd = std::env::current_dir().map_err(|err| {
        CliError::new(exit::ENVIRONMENT, format!("cannot read the current directory: {err}"))
    })?;
    let Some(directory) = directory else { return Ok(cwd) };
    let directory = cwd.join(directory);
    if directory.is_dir() {
        Ok(directory)
    } else {
        Err(CliError::new(exit::BAD_INPUT, format!("-C {}: no such directory", directory.display())))
    }
}
