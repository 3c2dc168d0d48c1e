//! A guard hook that fails (cannot start, crashes, times out) must block the call, not let it
//! through: wt registers its PreToolUse hooks with `onFailure: "block"` (the plugin's hooks.json,
//! `wt run`'s settings, the generated agents). Shown with the real client and a hook that exits 1:
//! with that setting the Write is blocked; without it (the client's default) it runs.

mod common;
// Only its server is used here, not its log of requests.
#[allow(dead_code)]
#[path = "common/model_server.rs"]
mod model_server;
// Only its client set-up is used here, not its run worker.
#[allow(dead_code)]
#[path = "common/scripted_worker.rs"]
mod scripted_worker;

use std::sync::Arc;

use common::TestRepo;
use model_server::{ModelServer, Turn, turn_index};
use scripted_worker::client_env;
use serde_json::json;

/// Runs the client once with a PreToolUse hook that exits 1, registered with `on_failure` (or
/// without the key); returns whether the model's Write landed.
fn write_lands(on_failure: Option<&str>) -> bool {
    let repo = TestRepo::new();
    let target = repo.root.join("written.txt");
    let file = target.clone();
    let server = ModelServer::start(Arc::new(move |request| match turn_index(request) {
        0 => Turn::Tools(vec![("Write".into(), json!({"file_path": file, "content": "x"}))]),
        _ => Turn::Text("done".into()),
    }));
    let mut hook = json!({"type": "command", "command": "exit 1", "timeout": 10});
    if let Some(on_failure) = on_failure {
        hook["onFailure"] = on_failure.into();
    }
    let settings = json!({"hooks": {"PreToolUse": [{"matcher": "Write", "hooks": [hook]}]}});
    let settings_file = repo.scratch.join("settings.json");
    std::fs::write(&settings_file, settings.to_string()).unwrap();
    let out = repo
        .command(common::claude_client().to_str().unwrap(), &repo.root)
        .args(["-p", "write it", "--permission-mode", "acceptEdits", "--settings"])
        .arg(&settings_file)
        .envs(client_env(&server))
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    target.exists()
}

#[test]
fn a_failing_guard_hook_blocks_the_call_with_on_failure_block() {
    assert!(!write_lands(Some("block")), "a failing hook registered as wt does it let the Write through");
    assert!(write_lands(None), "negative control: by default a failing hook lets the call run");
}
