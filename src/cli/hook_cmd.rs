//! `wt hook <event>`: the plugin's SessionStart check and its TeammateIdle / TaskCompleted gates.
//! Gates exit 2 with the reason on stderr (Claude Code keeps the worker going); never 1.

use std::io::Read;
use std::path::Path;

use clap::{Args, ValueEnum};

use crate::engine::{gate_refusal, worker_name};

#[derive(Args)]
pub struct HookArgs {
    event: HookEvent,
}

#[derive(Clone, Copy, ValueEnum)]
enum HookEvent {
    SessionStart,
    TeammateIdle,
    TaskCompleted,
}

const KEEP_WORKING: u8 = 2;

pub fn run(args: HookArgs, cwd: &Path) -> u8 {
    let mut text = String::new();
    let _ = std::io::stdin().read_to_string(&mut text);
    let input: serde_json::Value = serde_json::from_str(&text).unwrap_or_default();
    let dir = input.get("cwd").and_then(|v| v.as_str()).map(Path::new).unwrap_or(cwd).to_owned();
    match args.event {
        HookEvent::SessionStart => {
            println!("{}", session_start(&dir));
            0
        }
        HookEvent::TeammateIdle | HookEvent::TaskCompleted => {
            let Some(name) = worker_name(&input) else { return 0 };
            match gate_refusal(&dir, &name) {
                Ok(None) => 0,
                Ok(Some(reason)) => {
                    eprintln!("{reason}");
                    KEEP_WORKING
                }
                Err(err) => {
                    eprintln!("wt could not check {name}: {err}");
                    KEEP_WORKING
                }
            }
        }
    }
}

/// Context for the session: what works, what is missing. Makes sure `.claude/agents/` exists in
/// the project, so agents wt generates later are seen without a restart.
fn session_start(dir: &Path) -> String {
    let mut lines = vec![format!(
        "spectacular: wt {} is installed; run plans with /spectacular:execute <plan>.",
        env!("CARGO_PKG_VERSION")
    )];
    match crate::spice::Spice::discover() {
        Ok(_) => {}
        Err(err) => lines.push(format!("spectacular: {err}")),
    }
    if let Ok(repo) = crate::git::Repo::discover(dir) {
        let agents = repo.root().join(".claude").join("agents");
        if let Err(err) = std::fs::create_dir_all(&agents) {
            lines.push(format!("spectacular: could not create {}: {err}", agents.display()));
        }
    }
    lines.join("\n")
}
