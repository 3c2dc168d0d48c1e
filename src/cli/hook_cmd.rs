//! `wt hook <event>`: the plugin's SessionStart check, its TeammateIdle / TaskCompleted gates, and
//! the record of a worker's start and return (SubagentStart / SubagentStop). Gates exit 2 with the
//! reason on stderr (Claude Code keeps the worker going), never 1. The records never exit 2 (on
//! SubagentStop that would keep the subagent from returning): a record that fails exits 1, which
//! Claude Code shows without stopping anything.

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
    SubagentStart,
    SubagentStop,
    TeammateIdle,
    TaskCompleted,
}

const KEEP_WORKING: u8 = 2;
/// A hook that failed without blocking anything.
const NOT_RECORDED: u8 = 1;

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
        HookEvent::SubagentStart | HookEvent::SubagentStop => {
            let subagent: plugin::SubagentInput = serde_json::from_value(input).unwrap_or_default();
            let recorded = match args.event {
                HookEvent::SubagentStart => plugin::subagent_start(&subagent, &dir),
                _ => plugin::subagent_stop(&subagent, &dir),
            };
            match recorded {
                Ok(()) => 0,
                Err(reason) => {
                    eprintln!("{reason}");
                    NOT_RECORDED
                }
            }
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
