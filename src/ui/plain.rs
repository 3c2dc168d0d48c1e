use crate::engine::{Event, EventSink};

/// Not a terminal: one line per event on stderr, stable enough to grep.
pub struct PlainSink;

impl EventSink for PlainSink {
    fn emit(&self, event: &Event) {
        if let Some(line) = describe(event) {
            eprintln!("{line}");
        }
    }
}

/// The one-line human description of an event (None for events too chatty for a log).
pub fn describe(event: &Event) -> Option<String> {
    Some(match event {
        Event::RunStarted { run_id, base, main_worktree, resumed } => {
            let verb = if *resumed { "resuming" } else { "starting" };
            format!("{verb} run {run_id} on {base} in {}", main_worktree.display())
        }
        Event::PhaseStarted { phase, name, strategy, tasks } => {
            format!("phase {phase}: {name} ({}, {tasks} task(s))", strategy.as_str())
        }
        Event::TaskStarted { task, name, branch, .. } => format!("  {task} {name}: started on {branch}"),
        Event::TaskActivity { task, detail: Some(detail), .. } => format!("  {task}: {detail}"),
        Event::TaskActivity { task, activity, .. } => format!("  {task}: {}", activity.describe()),
        Event::TaskSkipped { task, name, reason } => format!("  {task} {name}: skipped, {reason}"),
        Event::TaskFinished { task, name, ok: true, .. } => format!("  {task} {name}: verified"),
        Event::TaskFinished { task, name, error, .. } => {
            format!("  {task} {name}: FAILED: {}", error.as_deref().unwrap_or("unknown error"))
        }
        Event::PhaseLinearizing { phase, branches } => {
            format!("phase {phase}: stacking {} branch(es) in plan order", branches.len())
        }
        Event::PhaseFinished { .. } => return None,
        Event::Notice { message } => format!("note: {message}"),
        Event::RunFinished { message, .. } => message.clone(),
    })
}
