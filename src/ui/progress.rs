use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use indicatif::{MultiProgress, ProgressBar, ProgressStyle};

use super::plain::describe;
use crate::engine::{Event, EventSink};
use crate::plan::TaskId;

/// A terminal: one live line per running task (number, name, elapsed, activity); everything
/// else is printed above the live lines.
pub struct ProgressSink {
    multi: MultiProgress,
    bars: Mutex<HashMap<TaskId, (ProgressBar, String)>>,
    style: ProgressStyle,
}

impl ProgressSink {
    pub fn new() -> Self {
        let style = ProgressStyle::with_template("{spinner} {prefix} [{elapsed}] {msg}")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        ProgressSink { multi: MultiProgress::new(), bars: Mutex::new(HashMap::new()), style }
    }

    fn line(&self, text: String) {
        let _ = self.multi.println(text);
    }
}

impl Default for ProgressSink {
    fn default() -> Self {
        Self::new()
    }
}

impl EventSink for ProgressSink {
    fn emit(&self, event: &Event) {
        let Ok(mut bars) = self.bars.lock() else { return };
        match event {
            Event::TaskStarted { task, name, .. } => {
                let bar = self.multi.add(ProgressBar::new_spinner().with_style(self.style.clone()));
                bar.set_prefix(format!("{task} {name}"));
                bar.set_message("starting");
                bar.enable_steady_tick(Duration::from_millis(120));
                bars.insert(*task, (bar, name.clone()));
            }
            Event::TaskActivity { task, activity, detail } => {
                let text = detail.clone().unwrap_or_else(|| activity.describe().to_owned());
                if let Some((bar, _)) = bars.get(task) {
                    bar.set_message(text);
                } else {
                    let bar = self.multi.add(ProgressBar::new_spinner().with_style(self.style.clone()));
                    bar.set_prefix(task.to_string());
                    bar.set_message(text);
                    bar.enable_steady_tick(Duration::from_millis(120));
                    bars.insert(*task, (bar, String::new()));
                }
            }
            Event::TaskFinished { task, .. } => {
                if let Some((bar, _)) = bars.remove(task) {
                    bar.finish_and_clear();
                }
                if let Some(text) = describe(event) {
                    self.line(text);
                }
            }
            _ => {
                if let Some(text) = describe(event) {
                    self.line(text);
                }
            }
        }
    }
}
