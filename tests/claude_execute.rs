//! `claude -p "/spectacular:execute <plan>" --plugin-dir <repo>` with the real client. The
//! scripted model plays the orchestrator the slash command asks for — run `wt step --json`,
//! dispatch exactly the listed subagents with the Agent tool, wait for them, ask again — and the
//! workers of the `wt run` test. The run must reach done through `wt step`, with every subagent
//! kept inside its worktree by the plugin's guard.

mod common;
#[path = "common/model_server.rs"]
mod model_server;
#[path = "common/scripted_worker.rs"]
mod scripted_worker;

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use common::TestRepo;
use model_server::{ModelServer, Turn, first_user_text, turn_index};
use scripted_worker::{
    ESCAPES, HONEST, KERNEL_ESCAPES, KERNEL_REFUSAL, client_env, task_in, worker_turn, worktree_in,
};
use serde_json::{Value, json};

/// One piece of a conversation, in order.
enum Piece {
    Call { id: String, name: String, input: Value },
    Result { id: String, text: String },
    Text(String),
}

fn pieces(request: &Value) -> Vec<Piece> {
    let mut pieces = Vec::new();
    for message in request["messages"].as_array().into_iter().flatten() {
        let blocks = match &message["content"] {
            Value::String(text) => vec![json!({"type": "text", "text": text})],
            Value::Array(blocks) => blocks.clone(),
            _ => Vec::new(),
        };
        for block in blocks {
            let text_of = |v: &Value| match v {
                Value::String(s) => s.clone(),
                Value::Array(parts) => {
                    parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("")
                }
                other => other.to_string(),
            };
            match block["type"].as_str() {
                Some("tool_use") => pieces.push(Piece::Call {
                    id: block["id"].as_str().unwrap_or("").to_owned(),
                    name: block["name"].as_str().unwrap_or("").to_owned(),
                    input: block["input"].clone(),
                }),
                Some("tool_result") => pieces.push(Piece::Result {
                    id: block["tool_use_id"].as_str().unwrap_or("").to_owned(),
                    text: text_of(&block["content"]),
                }),
                Some("text") if message["role"] == "user" => {
                    pieces.push(Piece::Text(text_of(&block["text"])))
                }
                _ => {}
            }
        }
    }
    pieces
}

fn result_of<'a>(pieces: &'a [Piece], call: &str) -> Option<&'a str> {
    pieces.iter().find_map(|p| match p {
        Piece::Result { id, text } if id == call => Some(text.as_str()),
        _ => None,
    })
}

/// How `commands/execute.md` tells the orchestrator to call wt.
const WT: &str = "spectacular-wt";

/// What an impatient orchestrator saw: the `wait` answers it got for asking before its
/// subagents returned (by the id of the `wt step` call), which also let the held workers go.
#[derive(Default)]
struct Impatience {
    waits: Mutex<BTreeMap<String, Value>>,
    seen: Condvar,
}

impl Impatience {
    fn saw_wait(&self, call: &str, step: &Value) {
        self.waits.lock().unwrap().entry(call.to_owned()).or_insert_with(|| step.clone());
        self.seen.notify_all();
    }

    /// Holds a worker's first turn until the orchestrator has been told to wait for its phase,
    /// so that it is out, for sure, when the orchestrator asks.
    fn hold_worker(&self, request: &Value) {
        let prompt = first_user_text(request);
        if worktree_in(&prompt).is_none() || turn_index(request) != 0 {
            return;
        }
        let phase: u64 = task_in(&prompt).split('-').next().and_then(|p| p.parse().ok()).unwrap_or(0);
        let told = |waits: &BTreeMap<String, Value>| waits.values().any(|w| w["phase"]["number"] == phase);
        let waits = self.waits.lock().unwrap();
        let _ = self.seen.wait_timeout_while(waits, Duration::from_secs(60), |waits| !told(waits)).unwrap();
    }
}

/// Whether every Agent call among `agents` has returned: a background agent's result holds its
/// id, and it has returned once a later user message (the completion notification) names it.
fn all_returned(pieces: &[Piece], from: usize, agents: &[&str]) -> bool {
    agents.iter().all(|call| {
        let Some(result) = result_of(pieces, call) else { return false };
        let Some(agent_id) = result.split("agentId: ").nth(1).and_then(|r| r.split_whitespace().next())
        else {
            return true;
        };
        pieces[from..]
            .iter()
            .any(|p| matches!(p, Piece::Text(text) if text.contains(agent_id) && text.contains("completed")))
    })
}

/// The orchestrator `commands/execute.md` describes, played to the letter; or, `impatient`, one
/// that asks `wt step` again as soon as its subagents are launched, before they return.
fn orchestrator_turn(request: &Value, plan: &Path, impatient: Option<&Impatience>) -> Turn {
    let pieces = pieces(request);
    let bash = |command: String| Turn::Tools(vec![("Bash".into(), json!({"command": command}))]);
    // Every `wt step` call so far, with its output once it came back.
    let steps: Vec<(usize, &str, Option<&str>)> = pieces
        .iter()
        .enumerate()
        .filter_map(|(at, p)| match p {
            Piece::Call { id, name, input }
                if name == "Bash"
                    && input["command"].as_str().is_some_and(|c| c.starts_with(&format!("{WT} step"))) =>
            {
                Some((at, id.as_str(), result_of(&pieces, id)))
            }
            _ => None,
        })
        .collect();
    let Some(&(at, call, output)) = steps.last() else {
        return bash(format!("{WT} step {} --json", plan.display()));
    };
    let Some(output) = output else { return Turn::Text("waiting for wt step".into()) };
    let Ok(step) = serde_json::from_str::<Value>(output.trim()) else {
        return Turn::Text(format!("wt step did not print JSON: {output}"));
    };
    let again = bash(format!("{WT} step {} --json", step["run_id"].as_str().unwrap_or_default()));
    // The dispatch the subagents out now came from: this step's, or (after a `wait`) the last one.
    let dispatched_at = match (step["status"].as_str(), impatient) {
        (Some("dispatch"), _) => at,
        (Some("wait"), Some(impatience)) => {
            impatience.saw_wait(call, &step);
            let dispatch = steps
                .iter()
                .rev()
                .find(|(_, _, output)| output.is_some_and(|o| o.contains(r#""status":"dispatch""#)));
            match dispatch {
                Some(&(from, ..)) => from,
                None => return Turn::Text(format!("told to wait with nothing dispatched: {step}")),
            }
        }
        _ => return Turn::Text(format!("run {}: {}", step["status"], step["message"])),
    };
    let agents: Vec<&str> = pieces[dispatched_at..]
        .iter()
        .filter_map(|p| match p {
            Piece::Call { id, name, .. } if name == "Agent" => Some(id.as_str()),
            _ => None,
        })
        .collect();
    if agents.is_empty() {
        let calls = step["dispatch"].as_array().unwrap().iter().map(|d| {
            let input = json!({"description": d["description"], "prompt": d["prompt"], "subagent_type": d["subagent_type"]});
            ("Agent".to_owned(), input)
        });
        return Turn::Tools(calls.collect());
    }
    let returned = all_returned(&pieces, dispatched_at, &agents);
    if impatient.is_some() && step["status"] == "dispatch" && !returned {
        return again;
    }
    // The one `wait` of the impatient ask is expected; a second means wt did not see them return.
    let waits = steps.iter().filter(|(from, ..)| *from > dispatched_at).count();
    if step["status"] == "wait" && returned && waits > 1 {
        return Turn::Text(format!("told to wait although every subagent has returned: {step}"));
    }
    if returned { again } else { Turn::Text("Waiting for the workers.".into()) }
}

const PLAN: &str = r#"
[run]
id = "c0e0e0"
[[phase]]
strategy = "sequential"
[[phase.task]]
name = "base"
prompt = "Add the base."
[[phase]]
strategy = "parallel"
[[phase.task]]
name = "left"
prompt = "Add the left side."
[[phase.task]]
name = "right"
prompt = "Add the right side."
"#;

/// Runs `claude -p "/spectacular:execute <plan>"` in the repository with the scripted model and
/// `wt` on PATH, and checks the run reached done with every subagent contained.
fn execute_and_check(repo: &TestRepo, plugin_args: &[&str]) {
    execute(repo, plugin_args, None);
}

fn execute(repo: &TestRepo, plugin_args: &[&str], impatient: Option<Arc<Impatience>>) {
    let plan = repo.plan("plan.toml", PLAN);
    let scratch = repo.scratch.clone();
    let orchestrated = plan.clone();
    let server = ModelServer::start(Arc::new(move |request| {
        if let Some(impatience) = &impatient {
            impatience.hold_worker(request);
        }
        worker_turn(request, &scratch)
            .unwrap_or_else(|| orchestrator_turn(request, &orchestrated, impatient.as_deref()))
    }));
    let before = repo.checkout_snapshot();

    let prompt = format!("/spectacular:execute {}", plan.display());
    let out = claude(repo)
        .args(["-p", &prompt, "--output-format", "stream-json", "--verbose"])
        .args(plugin_args)
        .envs(client_env(&server))
        .output()
        .unwrap();

    let results = server.tool_results();
    let context = format!("stderr: {}\nresults: {results:#?}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{context}");
    let status: Value = serde_json::from_str(&repo.wt(&["status", "c0e0e0", "--json"]).ok()).unwrap();
    assert_eq!(status[0]["status"], "done", "{context}");
    let branches = ["c0e0e0-task-1-1-base", "c0e0e0-task-2-1-left", "c0e0e0-task-2-2-right"];
    repo.assert_linear_stack("main", &branches);
    for (branch, task) in branches.iter().zip(["1-1", "2-1", "2-2"]) {
        let files = repo.git(&["show", "--name-only", "--format=", branch]);
        assert!(
            files.contains(&format!("honest-{task}.txt")) && files.contains(&format!("bash-{task}.txt")),
            "{branch}: {files}\n{context}"
        );
        for escape in [format!("escape-{task}.txt"), format!("cd-{task}.txt")] {
            assert!(!repo.scratch.join(&escape).exists(), "task {task} wrote {escape}\n{context}");
        }
        assert!(
            !repo.root.join(format!("escape-dotdot-{task}.txt")).exists(),
            "task {task} escaped through .."
        );
        assert!(!repo.root.join(format!("kernel-{task}.txt")).exists(), "task {task} escaped the sandbox");
    }
    assert_eq!(repo.checkout_snapshot(), before, "the main checkout was touched");
    let stopped = results.iter().filter(|r| r.1 && r.2.contains(KERNEL_REFUSAL)).count();
    assert_eq!(
        stopped,
        3 * KERNEL_ESCAPES,
        "the wrapped Bash ran inside wt sandbox, which stopped it: {context}"
    );
    let denied: Vec<&String> =
        results.iter().filter(|r| r.1 && !r.2.contains(KERNEL_REFUSAL)).map(|r| &r.2).collect();
    assert_eq!(denied.len(), 3 * ESCAPES, "every escape of each subagent is denied: {context}");
    assert!(denied.iter().all(|reason| reason.contains(".worktrees/c0e0e0-")), "{denied:#?}");
    assert!(denied.iter().any(|reason| reason.contains("git push is not allowed")), "{denied:#?}");
    let ran = |text: &str| results.iter().filter(|r| !r.1 && r.2.contains(text)).count();
    assert_eq!(
        ran("File created successfully at") + ran("(Bash completed with no output)"),
        3 * HONEST,
        "the honest Write and Bash of each subagent ran: {context}"
    );
}

/// The real client, in the repository, with the built `wt` first on PATH.
fn claude(repo: &TestRepo) -> std::process::Command {
    let wt_dir = Path::new(env!("CARGO_BIN_EXE_wt")).parent().unwrap();
    let mut cmd = repo.command(common::claude_client().to_str().unwrap(), &repo.root);
    cmd.env("PATH", common::path_with(wt_dir));
    cmd
}

#[test]
fn the_slash_command_reaches_done_through_wt_step_with_every_subagent_contained() {
    let repo = TestRepo::new();
    execute_and_check(&repo, &["--plugin-dir", env!("CARGO_MANIFEST_DIR")]);
}

/// The orchestrator asks again while its background subagents are still out: `wt step` hands
/// nothing out and checks nothing until the real client's SubagentStop hooks say they returned.
#[test]
fn an_orchestrator_asking_before_its_subagents_return_is_told_to_wait() {
    let repo = TestRepo::new();
    let impatience = Arc::new(Impatience::default());
    execute(&repo, &["--plugin-dir", env!("CARGO_MANIFEST_DIR")], Some(impatience.clone()));
    let mut waits: Vec<Value> = impatience.waits.lock().unwrap().values().cloned().collect();
    waits.sort_by_key(|w| w["phase"]["number"].as_u64());
    let out: Vec<Vec<&str>> = waits
        .iter()
        .map(|w| {
            w["waiting"].as_array().unwrap().iter().map(|o| o["subagent_type"].as_str().unwrap()).collect()
        })
        .collect();
    assert_eq!(
        out,
        [vec!["spectacular:wt-worker-1"], vec!["spectacular:wt-worker-1", "spectacular:wt-worker-2"]],
        "one wait per dispatch, naming the workers out: {waits:#?}"
    );
    assert!(waits.iter().all(|w| w["dispatch"] == json!([])), "{waits:#?}");
    // (The waits may list a worker as not yet started: a background agent's SubagentStart can
    // come after its launch has returned. That the run got past each wait shows that both the
    // client's SubagentStart and SubagentStop reached wt: a return counts only from a subagent
    // that started on the lease.)
    let leases = repo.root.join(".git/spectacular/slots");
    let left: Vec<_> =
        std::fs::read_dir(&leases).map(|d| d.flatten().map(|e| e.file_name()).collect()).unwrap_or_default();
    assert!(left.is_empty(), "every worker slot is free again: {left:?}");
}

/// The plugin's parts, as a clone of the repository holds them (without build output).
const PLUGIN_PARTS: &[&str] = &[".claude-plugin", "agents", "commands", "skills", "plugin"];

#[test]
fn the_plugin_installed_from_its_marketplace_runs_the_slash_command() {
    let repo = TestRepo::new();
    let source = repo.scratch.join("spectacular");
    std::fs::create_dir_all(&source).unwrap();
    for part in PLUGIN_PARTS {
        let copied = repo
            .command("cp", &repo.scratch)
            .args(["-R", &format!("{}/{part}", env!("CARGO_MANIFEST_DIR")), source.to_str().unwrap()])
            .output()
            .unwrap();
        assert!(copied.status.success(), "{}", String::from_utf8_lossy(&copied.stderr));
    }
    for args in [
        vec!["plugin", "marketplace", "add", source.to_str().unwrap()],
        vec!["plugin", "install", "spectacular@spectacular"],
    ] {
        let out = claude(&repo).args(&args).output().unwrap();
        assert!(out.status.success(), "claude {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let listed = claude(&repo).args(["plugin", "list", "--json"]).output().unwrap();
    let listed: Value = serde_json::from_slice(&listed.stdout).unwrap();
    assert_eq!(listed[0]["id"], "spectacular@spectacular", "{listed}");
    assert_eq!(listed[0]["enabled"], true, "{listed}");
    execute_and_check(&repo, &[]);
}
