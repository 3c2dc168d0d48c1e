//! A scripted stand-in for the model API on loopback, for running the real Claude Code client
//! offline: `POST /v1/messages` answers with a Server-Sent-Events stream holding the next
//! scripted step (tool calls or a final text) of the conversation the request belongs to.
//! Requests are logged so tests can read the tool results the client sent back. To see what the
//! client sends, set `MODEL_SERVER_DEBUG=1` (request lines on stderr) or `MODEL_SERVER_DUMP=<dir>`
//! (every request body as `<dir>/NNN.json`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

/// What the model does on one turn.
#[derive(Clone, Debug)]
pub enum Turn {
    /// Tool calls, all in one assistant message: (tool name, input).
    Tools(Vec<(String, Value)>),
    Text(String),
}

/// Chooses the next turn from the request body (its `messages` and `system`).
pub type Script = Arc<dyn Fn(&Value) -> Turn + Send + Sync>;

pub struct ModelServer {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Value>>>,
}

impl ModelServer {
    pub fn start(script: Script) -> ModelServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = requests.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (script, log) = (script.clone(), log.clone());
                std::thread::spawn(move || serve(stream, &script, &log));
            }
        });
        ModelServer { url, requests }
    }

    /// Every `tool_result` the client sent, as (tool_use_id, is_error, text).
    pub fn tool_results(&self) -> Vec<(String, bool, String)> {
        let mut results = Vec::new();
        for request in self.requests.lock().unwrap().iter() {
            for message in request["messages"].as_array().into_iter().flatten() {
                for block in message["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_result" {
                        let text = match &block["content"] {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        };
                        let entry = (
                            block["tool_use_id"].as_str().unwrap_or("").to_owned(),
                            block["is_error"] == true,
                            text,
                        );
                        if !results.contains(&entry) {
                            results.push(entry);
                        }
                    }
                }
            }
        }
        results
    }
}

/// The number of tool calls already made in the conversation: the index of the next step. (The
/// client merges consecutive assistant turns into one message, so messages are not counted.)
pub fn turn_index(request: &Value) -> usize {
    let messages = request["messages"].as_array().into_iter().flatten();
    messages
        .filter(|m| m["role"] == "assistant")
        .flat_map(|m| m["content"].as_array().into_iter().flatten())
        .filter(|block| block["type"] == "tool_use")
        .count()
}

/// The conversation's first user message, as text (to tell conversations apart).
pub fn first_user_text(request: &Value) -> String {
    let first = &request["messages"][0]["content"];
    match first {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            blocks.iter().filter_map(|b| b["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        _ => String::new(),
    }
}

fn serve(stream: TcpStream, script: &Script, log: &Mutex<Vec<Value>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut writer = stream;
    loop {
        let mut request_line = String::new();
        if reader.read_line(&mut request_line).unwrap_or(0) == 0 {
            return;
        }
        let mut length = 0;
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let header = header.trim_end();
            if header.is_empty() {
                break;
            }
            if let Some((name, value)) = header.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap_or(0);
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let path = request_line.split_whitespace().nth(1).unwrap_or("/").to_owned();
        if std::env::var_os("MODEL_SERVER_DEBUG").is_some() {
            eprintln!("model server: {} ({} bytes)", request_line.trim(), length);
        }
        let response = if request_line.starts_with("POST")
            && path.starts_with("/v1/messages")
            && !path.contains("count_tokens")
        {
            let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
            let number = {
                let mut log = log.lock().unwrap();
                log.push(request.clone());
                log.len()
            };
            if let Some(dir) = std::env::var_os("MODEL_SERVER_DUMP") {
                let path = std::path::Path::new(&dir).join(format!("{number:03}.json"));
                std::fs::write(path, body.as_slice()).unwrap();
            }
            let turn = script(&request);
            let stream = request["stream"] == true;
            if stream { sse_response(&turn) } else { json_response(&message(&turn).to_string()) }
        } else if path.contains("count_tokens") {
            json_response(r#"{"input_tokens": 10}"#)
        } else {
            json_response("{}")
        };
        if writer.write_all(response.as_bytes()).is_err() {
            return;
        }
    }
}

fn json_response(body: &str) -> String {
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}

fn blocks(turn: &Turn) -> Vec<Value> {
    match turn {
        Turn::Text(text) => vec![json!({"type": "text", "text": text})],
        Turn::Tools(calls) => calls
            .iter()
            .enumerate()
            .map(|(i, (name, input))| {
                let id = format!("toolu_{}_{}", std::process::id(), rand_id(i));
                json!({"type": "tool_use", "id": id, "name": name, "input": input})
            })
            .collect(),
    }
}

fn rand_id(i: usize) -> String {
    use std::sync::atomic::{AtomicUsize, Ordering};
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{}_{i}", NEXT.fetch_add(1, Ordering::SeqCst))
}

fn stop_reason(turn: &Turn) -> &'static str {
    if matches!(turn, Turn::Tools(_)) { "tool_use" } else { "end_turn" }
}

fn message(turn: &Turn) -> Value {
    json!({
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": "claude-scripted",
        "content": blocks(turn), "stop_reason": stop_reason(turn), "stop_sequence": null,
        "usage": {"input_tokens": 10, "output_tokens": 10}
    })
}

fn sse_response(turn: &Turn) -> String {
    let mut events = Vec::new();
    let start = json!({"type": "message_start", "message": {
        "id": "msg_scripted", "type": "message", "role": "assistant", "model": "claude-scripted", "content": [],
        "stop_reason": null, "stop_sequence": null, "usage": {"input_tokens": 10, "output_tokens": 1}}});
    events.push(("message_start", start));
    for (index, block) in blocks(turn).into_iter().enumerate() {
        let (start_block, delta) = if block["type"] == "tool_use" {
            let start = json!({"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}});
            (start, json!({"type": "input_json_delta", "partial_json": block["input"].to_string()}))
        } else {
            (json!({"type": "text", "text": ""}), json!({"type": "text_delta", "text": block["text"]}))
        };
        events.push((
            "content_block_start",
            json!({"type": "content_block_start", "index": index, "content_block": start_block}),
        ));
        events.push((
            "content_block_delta",
            json!({"type": "content_block_delta", "index": index, "delta": delta}),
        ));
        events.push(("content_block_stop", json!({"type": "content_block_stop", "index": index})));
    }
    events.push(("message_delta", json!({"type": "message_delta", "delta": {"stop_reason": stop_reason(turn), "stop_sequence": null}, "usage": {"output_tokens": 10}})));
    events.push(("message_stop", json!({"type": "message_stop"})));
    let body: String = events.iter().map(|(name, data)| format!("event: {name}\ndata: {data}\n\n")).collect();
    format!(
        "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
}
