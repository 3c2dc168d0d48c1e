//! `wt guard`: the PreToolUse hook. Prints the decision JSON (or nothing) and exits 0; on any
//! internal error — bad input, a panic — exits 2, which Claude Code treats as blocking. Never
//! exits 1: Claude Code lets a call run when its hook exits 1.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::guard::{self, Containment, Decision, GuardConfig, HookInput, Target};
use crate::plugin;
use crate::sandbox::TaskWorktree;
use crate::store::commands_running;

/// Claude Code's "block this call" exit code for hooks.
const BLOCK: u8 = 2;

#[derive(Args)]
pub struct GuardArgs {
    /// The worktree the agent must stay in (as `wt run` passes it to each claude -p).
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// The worktree's branch (the one `git checkout` may name).
    #[arg(long, value_name = "BRANCH", requires = "root")]
    branch: Option<String>,
    /// Guard whatever worktree holds the hook's cwd, not only a wt run's.
    #[arg(long, conflicts_with = "root")]
    detect: bool,
    /// With --detect: guard the main checkout too.
    #[arg(long, requires = "detect")]
    include_main: bool,
    /// Also approve the main session's own `wt step` / `wt status` calls (the plugin's hook).
    #[arg(long, conflicts_with_all = ["root", "detect"])]
    approve_orchestrator: bool,
    /// Guard rules (guard.toml) to apply; default: the run's rules, else the project's
    /// `.spectacular/guard.toml` in the main checkout.
    #[arg(long, value_name = "FILE")]
    rules: Option<PathBuf>,
    /// The agent's whole process runs inside `wt sandbox` (wt run's agents): a Bash command the
    /// guard cannot follow is allowed, since the kernel keeps its writes in the worktree.
    #[arg(long, conflicts_with = "sandbox_wrap")]
    contained: bool,
    /// Allow each Bash command that is not denied rewritten to run inside `wt sandbox` (the
    /// plugin's workers, whose process wt cannot sandbox). Without this or --contained, a command
    /// the guard cannot follow gets no decision.
    #[arg(long)]
    sandbox_wrap: bool,
}

pub fn run(args: GuardArgs) -> u8 {
    watchdog();
    let outcome = std::panic::catch_unwind(|| decide(&args));
    match outcome {
        Ok(Ok(decision)) => {
            if let Some(json) = decision.to_json() {
                println!("{json}");
            }
            0
        }
        Ok(Err(message)) => {
            eprintln!("wt guard: {message}");
            BLOCK
        }
        Err(_) => {
            eprintln!("wt guard: internal error; the call is blocked to be safe");
            BLOCK
        }
    }
}

/// Blocks the call from another thread once the hook has run for [`guard::limits::WALL_LIMIT`]:
/// Claude Code runs a call whose hook times out, and what the guard reads is the agent's (a
/// script it names, its worktree's git files) — a fifo there would hold the read, and with it
/// the answer, for ever. The processor budget of a check cannot see a read that waits.
fn watchdog() {
    std::thread::spawn(|| {
        std::thread::sleep(guard::limits::WALL_LIMIT);
        eprintln!(
            "wt guard: no decision within {} s (a file it had to read, such as a script the command runs or the \
             worktree's git files, never delivered its content: a fifo?); the call is blocked to be safe",
            guard::limits::WALL_LIMIT.as_secs()
        );
        std::process::exit(i32::from(BLOCK));
    });
}

fn decide(args: &GuardArgs) -> Result<Decision, String> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|err| format!("cannot read the hook input: {err}"))?;
    let input: HookInput =
        serde_json::from_str(&text).map_err(|err| format!("the hook input is not JSON: {err}"))?;
    let cwd = input.cwd.as_deref().map(Path::new).unwrap_or(Path::new("/")).to_owned();
    let target = match (&args.root, args.detect) {
        (Some(root), _) => Target { root: root.clone(), branch: args.branch.clone() },
        (None, true) => {
            let common = guard::common_dir(&cwd);
            let (config, rules) = load_rules(
                args.rules.clone().or_else(|| common.as_deref().and_then(guard::project_rules_path)),
            )?;
            let include_main = args.include_main || config.guard_main;
            return Ok(match common.as_deref().and_then(|c| guard::detect(c, &cwd, include_main)) {
                Some(target) => guard::decide(&input, &target, &config, &containment(args, rules, &target)?),
                None => Decision::None,
            });
        }
        (None, false) => {
            return plugin::pre_tool_use(&input, args.rules.as_deref(), args.approve_orchestrator);
        }
    };
    let rules = args
        .rules
        .clone()
        .or_else(|| guard::common_dir(&target.root).as_deref().and_then(guard::project_rules_path));
    let (config, rules) = load_rules(rules)?;
    if args.sandbox_wrap
        && let Some(decision) = plugin::own_team_command(&input, &target, &config)
    {
        return Ok(decision);
    }
    Ok(guard::decide(&input, &target, &config, &containment(args, rules, &target)?))
}

/// The rules at `path` (none there: the defaults), and the path when a file was read.
fn load_rules(path: Option<PathBuf>) -> Result<(GuardConfig, Option<PathBuf>), String> {
    let loaded = match &path {
        Some(path) => GuardConfig::load_toml(path)?,
        None => None,
    };
    let read = path.filter(|_| loaded.is_some());
    Ok((loaded.unwrap_or_default(), read))
}

fn containment(args: &GuardArgs, rules: Option<PathBuf>, target: &Target) -> Result<Containment, String> {
    Ok(if args.contained {
        Containment::Contained
    } else if args.sandbox_wrap {
        // `wt sandbox` with no --objects uses the worktree's default object folder.
        let objects = TaskWorktree::open(&target.root).map(|worktree| worktree.default_objects());
        let commands_running = objects.is_ok_and(|objects| commands_running(&objects));
        Containment::SandboxWrap { exe: crate::process::own_exe()?, rules, folders: None, commands_running }
    } else {
        Containment::HookOnly
    })
}
