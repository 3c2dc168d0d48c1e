//! `wt hook <event>`: the plugin's SessionStart check and its TeammateIdle / TaskCompleted gates.
//! Gates exit 2 with the reason on stderr (Claude Code keeps the worker going); never 1.

use std::io::Read;
use std::path::Path;

use clap::{Args, ValueEnum};

use crate::plugin;

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
            println!("{}", plugin::session_start(&dir));
            0
        }
        HookEvent::TeammateIdle | HookEvent::TaskCompleted => match plugin::completion_gate(&input, &dir) {
            Ok(None) => 0,
            Ok(Some(reason)) | Err(reason) => {
                eprintln!("{reason}");
                KEEP_WORKING
            }
        },
    }
}
