//! How a run is shown: live progress lines on a terminal, one plain line per event otherwise,
//! or one JSON object per line with `--json`; and afterwards, as a picture (`timeline/`).

mod json;
mod plain;
mod progress;
pub mod timeline;

use std::io::IsTerminal;

pub use json::JsonSink;
pub use plain::PlainSink;
pub use progress::ProgressSink;

use crate::engine::EventSink;

/// Shows nothing (the events still go to the run's events.jsonl): for commands whose output is
/// one result.
pub struct SilentSink;

impl EventSink for SilentSink {
    fn emit(&self, _event: &crate::engine::Event) {}
}

/// The sink for this invocation: JSON when asked, live progress on a terminal, plain lines else.
pub fn sink_for(json: bool) -> Box<dyn EventSink> {
    if json {
        Box::new(JsonSink)
    } else if std::io::stderr().is_terminal() {
        Box::new(ProgressSink::new())
    } else {
        Box::new(PlainSink)
    }
}
