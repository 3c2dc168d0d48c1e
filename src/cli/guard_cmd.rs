//! `wt guard`: the PreToolUse hook. Prints the decision JSON (or nothing) and exits 0; on any
//! internal error — bad input, a panic — exits 2, which Claude Code treats as blocking. Never
//! exits 1: Claude Code lets a call run when its hook exits 1.

use std::io::Read;
use std::path::{Path, PathBuf};

use clap::Args;

use crate::guard::{self, Containment, Decision, GuardConfig, HookInput, Target};

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

fn decide(args: &GuardArgs) -> Result<Decision, String> {
    let mut text = String::new();
    std::io::stdin().read_to_string(&mut text).map_err(|err| format!("cannot read the hook input: {err}"))?;
    let input: HookInput =
        serde_json::from_str(&text).map_err(|err| format!("the hook input is not JSON: {err}"))?;
    let cwd = input.cwd.as_deref().map(Path::new).unwrap_or(Path::new("/")).to_owned();
    // The repository's git directory is looked up once: every route below reads from it.
    let common = guard::common_dir(args.root.as_deref().unwrap_or(&cwd));
    let project_rules = || common.as_deref().and_then(guard::project_rules_path);
    let assignment = match (&input.agent_type, args.root.is_some() || args.detect) {
        (Some(agent_type), false) => guard::from_agent_type(agent_type, common.as_deref(), &cwd)?,
        _ => None,
    };
    let rules_path = match (&args.rules, &assignment, &common) {
        (Some(path), _, _) => Some(path.clone()),
        (None, Some(assignment), Some(common)) => Some(guard::run_rules_path(&assignment.run_id, common))
            .filter(|p| p.exists())
            .or_else(project_rules),
        _ => project_rules(),
    };
    let loaded = match &rules_path {
        Some(path) => GuardConfig::load_toml(path)?,
        None => None,
    };
    let rules_file = rules_path.filter(|_| loaded.is_some());
    let config = loaded.unwrap_or_default();
    let target = match (&args.root, args.detect) {
        (Some(root), _) => Some(Target { root: root.clone(), branch: args.branch.clone() }),
        (None, true) => {
            common.as_deref().and_then(|c| guard::detect(c, &cwd, args.include_main || config.guard_main))
        }
        (None, false) => assignment.map(|a| a.target),
    };
    Ok(match target {
        Some(target) => guard::decide(&input, &target, &config, &containment(args, rules_file)?),
        None if args.approve_orchestrator => guard::orchestrator::approve(&input),
        None => Decision::None,
    })
}

fn containment(args: &GuardArgs, rules: Option<PathBuf>) -> Result<Containment, String> {
    Ok(if args.contained {
        Containment::Contained
    } else if args.sandbox_wrap {
        let exe = std::env::current_exe()
            .map_err(|err| format!("cannot find the wt binary to wrap commands in `wt sandbox`: {err}"))?;
        Containment::SandboxWrap { exe, rules }
    } else {
        Containment::HookOnly
    })
}
