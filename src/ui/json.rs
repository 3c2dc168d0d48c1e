use crate::engine::{Event, EventSink};

/// `--json`: each event as one JSON object on its own line of stdout.
pub struct JsonSink;

impl EventSink for JsonSink {
    fn emit(&self, event: &Event) {
        if let Ok(line) = serde_json::to_string(event) {
            println!("{line}");
        }
    }
}
