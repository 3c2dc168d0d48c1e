//! `wt hook <event>`: the plugin's SessionStart check and its TeammateIdle / TaskCompleted gates.
//! Gates exit 2 with the reason on stderr (Claude Code keeps the worker going); never 1.

use std::io::Read;
use std::path::Path;

use clap::{Args, ValueEnum};

use crate::engine::{gate_refusal, worker_name};
use crate::store::{LiveState, StateLayout};

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

/// Context for the session: what works, what is missing, and this repository's runs that wait
/// to be carried on.
fn session_start(dir: &Path) -> String {
    let mut lines = vec![format!(
        "spectacular: wt {} is installed; run plans with /spectacular:execute <plan>.",
        env!("CARGO_PKG_VERSION")
    )];
    if let Err(err) = crate::spice::Spice::discover() {
        lines.push(format!("spectacular: {err}"));
    }
    let Ok(repo) = crate::git::Repo::discover(dir) else { return lines.join("\n") };
    let layout = StateLayout::new(repo.common_dir());
    for manifest in layout.runs().readable {
        let state = LiveState::of(&layout, &manifest);
        if matches!(state, LiveState::Dispatched | LiveState::Interrupted | LiveState::Failed) {
            lines.push(format!(
                "spectacular: run {} is {}; carry it on with /spectacular:execute {} or remove it with \
                 /spectacular:cleanup {}",
                manifest.run_id,
                state.as_str(),
                manifest.run_id,
                manifest.run_id
            ));
        }
    }
    lines.join("\n")
}
