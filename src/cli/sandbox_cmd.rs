//! `wt sandbox --root <worktree> -- <command>`: contain a command with Landlock and run it; when it
//! ends, whatever it left running is killed. The exit code is the command's; wt's own failures use the documented codes (2 bad input,
//! 3 environment) and, like a shell, 127 for a command that does not exist and 126 for one that
//! cannot be run.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use clap::Args;

use super::{CliError, exit};
use crate::engine::EngineError;
use crate::guard::rules::Reads;
use crate::process::{Cmd, ExitDescription, ProcessError};
use crate::sandbox::{
    self, Confinement, HostEnv, KernelSupport, Policy, Request, SandboxError, SocketFilter, TaskWorktree,
    UnixSocketPolicy,
};
use crate::store::CommandRunning;

/// A shell's code for a command it cannot find.
const COMMAND_NOT_FOUND: u8 = 127;
/// A shell's code for a command it found but cannot run.
const COMMAND_NOT_RUNNABLE: u8 = 126;

#[derive(Args)]
pub struct SandboxArgs {
    /// The task's worktree (a linked worktree): the command may write only beneath it and the
    /// few folders a commit, a build and the caches need. The command runs in the current
    /// directory, not in this one: `cd` into the worktree first.
    #[arg(long, value_name = "DIR")]
    root: PathBuf,
    /// Refuse to start unless the worktree is on this branch.
    #[arg(long, value_name = "BRANCH")]
    branch: Option<String>,
    /// Also allow writing beneath this path (repeatable).
    #[arg(long = "allow-write", value_name = "PATH")]
    allow_write: Vec<PathBuf>,
    /// Guard rules with the `[sandbox]` table and `reads`; default: the project's
    /// .spectacular/guard.toml in the main checkout.
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// The task's temporary folder (TMPDIR, TMP, TEMP); default:
    /// <git dir>/spectacular/tmp/<worktree folder name>.
    #[arg(long, value_name = "DIR")]
    tmp: Option<PathBuf>,
    /// The task's own object folder (GIT_OBJECT_DIRECTORY): the repository's objects are read, not
    /// written; default: <git dir>/spectacular/objects/<worktree folder name>.
    #[arg(long, value_name = "DIR")]
    objects: Option<PathBuf>,
    /// After the command, put back what it changed that the kernel must let a commit change
    /// (other branches, the worktree's links to the repository) and fail when it did: for
    /// commands no engine checks afterwards (a team agent's).
    #[arg(long, requires = "branch")]
    check: bool,
    /// The command to run and its arguments, after `--`.
    #[arg(last = true, required = true, value_name = "COMMAND")]
    command: Vec<OsString>,
}

/// Runs the command contained, and everything it starts until it ends; then takes the objects
/// it made into the repository. Its exit code is returned (128 + n when a signal n ended it, as
/// a shell says).
pub fn run(args: SandboxArgs, cwd: &Path) -> Result<u8, CliError> {
    // clap requires at least one word after `--` (`required = true`), so both slices exist.
    let mut command = Cmd::new(&args.command[0]).args(&args.command[1..]);
    let (worktree, policy, mut confinement) = contain(&args, cwd)?;
    for (name, _) in sandbox::DAEMON_VARIABLES {
        command = command.env_remove(name);
    }
    let tmp = &policy.tmp;
    let command = command
        .env("TMPDIR", tmp)
        .env("TMP", tmp)
        .env("TEMP", tmp)
        .env("GIT_OBJECT_DIRECTORY", &policy.objects)
        .env("GIT_ALTERNATE_OBJECT_DIRECTORIES", &policy.alternate);
    let watch = match (&args.check, &args.branch) {
        (true, Some(branch)) => {
            let repo = crate::git::Repo::discover(worktree.root())?;
            Some((crate::engine::watch_command(&repo, worktree.root(), branch)?, repo, branch.clone()))
        }
        _ => None,
    };
    let confine = move || confinement.enforce();
    // Until the command and what it started end, the guard refuses the agent's Write and Edit.
    let running =
        CommandRunning::hold(&policy.objects).map_err(|err| CliError::from(EngineError::Lock(err)))?;
    let ended = command.run_supervised(confine).map_err(exec_error)?;
    drop(running);
    take_objects_in(&worktree, &policy.objects);
    let code = match ended {
        ExitDescription::Code(code) => u8::try_from(code).unwrap_or(u8::MAX),
        ExitDescription::Signal(signal) => u8::try_from(128 + signal).unwrap_or(u8::MAX),
    };
    let Some((watch, repo, branch)) = watch else { return Ok(code) };
    match watch.verdict_locked(&repo, worktree.root(), &branch)? {
        Some(verdict) => {
            eprintln!("wt sandbox: {verdict}");
            Ok(code.max(1))
        }
        None => Ok(code),
    }
}

/// The objects the command made go into the repository (wt checks each is what its name says);
/// a failure is said, the command's exit code stands.
fn take_objects_in(worktree: &TaskWorktree, objects: &Path) {
    if !crate::git::holds_anything(objects) {
        return;
    }
    let imported = crate::git::Repo::discover(worktree.root()).and_then(|repo| repo.import_objects(objects));
    match imported {
        Ok(imported) if imported.mislabeled.is_empty() => {}
        Ok(imported) => eprintln!(
            "wt sandbox: left out objects whose content does not match their names: {}",
            imported.mislabeled.join(", ")
        ),
        Err(err) => eprintln!(
            "wt sandbox: the command's git objects stay in {} ({err}); wt takes them in after the task",
            objects.display()
        ),
    }
}

/// Checks the worktree and builds the policy and, when the kernel has Landlock, its ruleset; and
/// the Unix socket filter unless the rules allow Unix sockets.
fn contain(args: &SandboxArgs, cwd: &Path) -> Result<(TaskWorktree, Policy, Confinement), CliError> {
    let worktree = TaskWorktree::open(&cwd.join(&args.root)).map_err(sandbox_error)?;
    if let Some(branch) = &args.branch {
        worktree.check_branch(branch).map_err(sandbox_error)?;
    }
    let rules = sandbox::load_rules(args.rules.as_ref().map(|r| cwd.join(r)).as_deref(), &worktree);
    let rules = rules.map_err(sandbox_error)?;
    let support = sandbox::probe();
    if support.abi().is_none() && rules.sandbox.is_required() {
        return Err(sandbox_error(SandboxError::Unavailable { support }));
    }
    let request = Request {
        tmp: args.tmp.as_ref().map(|tmp| cwd.join(tmp)),
        objects: args.objects.as_ref().map(|objects| cwd.join(objects)),
        allow_write: args.allow_write.iter().map(|path| cwd.join(path)).collect(),
        config: rules.sandbox.clone(),
        deny_reads: rules.reads == Some(Reads::DenyOutside),
        program: args.command.first().cloned(),
    };
    let policy = Policy::for_worktree(&worktree, &request, &HostEnv::current()).map_err(sandbox_error)?;
    let debug = std::env::var_os("WT_DEBUG").is_some_and(|v| v == "1");
    if debug {
        print_policy(&policy);
    }
    let landlock = match support {
        KernelSupport::Available { abi } => {
            let prepared = sandbox::prepare(&policy, abi).map_err(sandbox_error)?;
            if debug {
                let enforcement = &prepared.enforcement;
                let handled = enforcement.handled.join(", ");
                eprintln!("wt debug: sandbox: Landlock ABI {}, handling {handled}", enforcement.abi);
            }
            Some(prepared)
        }
        unavailable => {
            eprintln!(
                "wt sandbox: {unavailable}; the command runs contained by policy only ([sandbox] required = false)"
            );
            None
        }
    };
    let sockets = if policy.deny_unix_sockets { SocketFilter::build().map_err(sandbox_error)? } else { None };
    if debug {
        eprintln!("wt debug: sandbox: {}", UnixSocketPolicy::of(policy.deny_unix_sockets));
    }
    Ok((worktree, policy, Confinement { landlock, sockets }))
}

fn print_policy(policy: &Policy) {
    for grant in &policy.grants {
        let verb = match grant.access {
            sandbox::Access::Write => "writing",
            sandbox::Access::Read => "reading",
        };
        eprintln!("wt debug: sandbox allows {verb} beneath {} ({})", grant.path.display(), grant.why);
    }
    for skipped in &policy.skipped {
        eprintln!("wt debug: sandbox skips {} ({}): {}", skipped.path.display(), skipped.why, skipped.reason);
    }
}

fn exec_error(err: ProcessError) -> CliError {
    let ProcessError::Spawn { command, source } = &err else {
        return CliError::new(exit::INTERNAL, err.to_string());
    };
    match source.kind() {
        std::io::ErrorKind::NotFound => {
            CliError::new(COMMAND_NOT_FOUND, format!("{command}: command not found"))
                .hint("check the command's name and PATH")
        }
        std::io::ErrorKind::PermissionDenied => {
            CliError::new(COMMAND_NOT_RUNNABLE, format!("{command}: permission denied")).hint(
                "the program must be executable and, with reads = \"deny-outside\", in a readable folder",
            )
        }
        _ => CliError::new(COMMAND_NOT_RUNNABLE, err.to_string()),
    }
}

fn sandbox_error(err: SandboxError) -> CliError {
    let message = err.to_string();
    match err {
        SandboxError::NotALinkedWorktree { .. } => CliError::new(exit::BAD_INPUT, message)
            .hint("pass the worktree of a task (`git worktree list` shows them) as --root"),
        SandboxError::Rules { .. } => {
            CliError::new(exit::BAD_INPUT, message).hint("fix the file, or pass other rules with --rules")
        }
        SandboxError::WrongBranch { root, expected, .. } => CliError::new(exit::ENVIRONMENT, message).hint(
            format!("run `git -C {} switch {expected}`, or pass the worktree's own --branch", root.display()),
        ),
        SandboxError::Unavailable { support } => {
            let cli = CliError::new(exit::ENVIRONMENT, message);
            let cli = match support.fix() {
                Some(fix) => cli.hint(fix),
                None => cli,
            };
            cli.hint("or set `[sandbox] required = false` in .spectacular/guard.toml to run contained by policy only")
        }
        SandboxError::Read { .. }
        | SandboxError::Tmp { .. }
        | SandboxError::OpenRulePath { .. }
        | SandboxError::Ruleset(_) => CliError::new(exit::ENVIRONMENT, message),
        SandboxError::NoNetworkRules { .. } => CliError::new(exit::ENVIRONMENT, message)
            .hint("run on a newer kernel, or remove network = \"deny\" from [sandbox] and close the network another way"),
        SandboxError::SocketFilter { .. } => CliError::new(exit::ENVIRONMENT, message).hint(
            "run on a kernel with seccomp, or set `[sandbox] unix_sockets = \"allow\"` in .spectacular/guard.toml",
        ),
    }
}
