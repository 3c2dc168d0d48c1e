//! A team worktree's agent in the real Claude Code client: a scripted lead in `claude -p
//! --plugin-dir <repo>` spawns `subagent_type: wt-api`, as the `worktree-lead` skill says, after
//! `wt create api`. The plugin's guard keeps the agent in `.worktrees/api`, runs its Bash inside
//! `wt sandbox` (the kernel stops a write it could not see), refuses `git push` and a foreground
//! `wt poll`, and lets its own `wt pr api` and a background `wt poll api` run as written — so the
//! draft change request it opens on shamhub is based on `main`, holding the agent's commit.

mod common;
#[path = "common/model_server.rs"]
mod model_server;
// Only its client set-up and the kernel's refusal text are used here, not its run worker.
#[allow(dead_code)]
#[path = "common/scripted_worker.rs"]
mod scripted_worker;

use std::path::Path;
use std::sync::Arc;

use common::TestRepo;
use common::shamhub::{Shamhub, forge_repo};
use model_server::{ModelServer, Turn, first_user_text, turn_index};
use scripted_worker::{KERNEL_REFUSAL, client_env};
use serde_json::{Value, json};

const TASK: &str = "TEAM-TASK: add api.txt and open it for review.";

/// The agent `wt-api`, call by call; `wt` is the path its agent file tells it to run.
fn agent_turn(step: usize, worktree: &Path, scratch: &Path, root: &Path, wt: &str) -> Turn {
    let bash = |command: String| json!({"command": command});
    let in_worktree = |command: &str| bash(format!("cd {} && {command}", worktree.display()));
    let (tool, input) = match step {
        0 => ("Write", json!({"file_path": scratch.join("escape-team.txt"), "content": "escaped"})),
        1 => ("Write", json!({"file_path": worktree.join("api.txt"), "content": "api\n"})),
        2 => ("Bash", in_worktree("git add -A && git commit --quiet -m 'api: add api.txt'")),
        3 => ("Bash", in_worktree("git push origin api")),
        4 => {
            let code = format!("open('{}', 'w').write('escaped')", root.join("kernel-team.txt").display());
            ("Bash", in_worktree(&format!("python3 -c \"{code}\"")))
        }
        5 => ("Bash", bash(format!("{wt} poll api"))),
        6 => ("Bash", bash(format!("{wt} pr api --json"))),
        7 => (
            "Bash",
            json!({"command": format!("{wt} poll api --timeout 1 --interval 1"), "run_in_background": true}),
        ),
        _ => return Turn::Text("api is open for review".into()),
    };
    Turn::Tools(vec![(tool.to_owned(), input)])
}

/// The lead: one Agent call for `wt-api`, then done.
fn lead_turn(request: &Value) -> Turn {
    match turn_index(request) {
        0 => Turn::Tools(vec![(
            "Agent".to_owned(),
            json!({"description": "api", "prompt": TASK, "subagent_type": "wt-api"}),
        )]),
        _ => Turn::Text("the team is at work".into()),
    }
}

#[test]
fn a_team_agent_spawned_by_its_lead_stays_in_its_worktree_and_opens_its_draft() {
    let repo = TestRepo::new();
    let hub = Shamhub::start(&repo);
    forge_repo(&repo, &hub);
    hub.run(&repo, "gs", &["--no-prompt", "auth", "login"]);
    let hub_env = hub.env();
    repo.wt_with_env(&["create", "api", "--base", "main"], &hub_env).ok();
    let worktree = repo.team_worktree("api");
    let wt = format!("'{}'", env!("CARGO_BIN_EXE_spectacular-wt"));
    let agent_file = std::fs::read_to_string(repo.root.join(".claude/agents/wt-api.md")).unwrap();
    assert!(agent_file.contains(&format!("{wt} pr api")), "the agent is told to run {wt}: {agent_file}");

    let (scratch, root, told) = (repo.scratch.clone(), repo.root.clone(), wt.clone());
    let agent_worktree = worktree;
    let server = ModelServer::start(Arc::new(move |request: &Value| {
        if first_user_text(request).contains(TASK) {
            agent_turn(turn_index(request), &agent_worktree, &scratch, &root, &told)
        } else {
            lead_turn(request)
        }
    }));
    let before = repo.checkout_snapshot();

    let wt_dir = Path::new(env!("CARGO_BIN_EXE_wt")).parent().unwrap();
    let plugin = Path::new(env!("CARGO_MANIFEST_DIR"));
    let out = repo
        .command(common::claude_client().to_str().unwrap(), &repo.root)
        .args(["-p", "Lead the api worktree.", "--output-format", "stream-json", "--verbose"])
        .args(["--plugin-dir", plugin.to_str().unwrap()])
        .env("PATH", common::path_with(wt_dir))
        .envs(client_env(&server))
        .envs(hub_env.iter().copied())
        .output()
        .unwrap();

    let results = server.tool_results();
    let context = format!("stderr: {}\nresults: {results:#?}", String::from_utf8_lossy(&out.stderr));
    assert!(out.status.success(), "{context}");
    let texts: Vec<(bool, &str)> = results.iter().map(|r| (r.1, r.2.as_str())).collect();
    let refused = |needle: &str| texts.iter().any(|(error, text)| *error && text.contains(needle));

    assert!(!repo.scratch.join("escape-team.txt").exists(), "the Write outside landed\n{context}");
    assert!(refused(".worktrees/api"), "the denial names the worktree\n{context}");
    assert!(refused("git push is not allowed"), "{context}");
    assert!(
        refused(KERNEL_REFUSAL),
        "the Bash ran inside wt sandbox, which stopped the python write\n{context}"
    );
    assert!(!repo.root.join("kernel-team.txt").exists(), "{context}");
    assert!(refused("run_in_background: true"), "a foreground poll is refused\n{context}");
    assert_eq!(repo.subjects("main", "api"), ["api: add api.txt"], "the agent's commit\n{context}");
    assert_eq!(repo.checkout_snapshot(), before, "the main checkout was touched");

    let opened = texts.iter().find(|(error, text)| !error && text.contains("\"number\""));
    let opened: Value =
        serde_json::from_str(opened.unwrap_or_else(|| panic!("no pr output\n{context}")).1.trim())
            .unwrap_or_else(|err| panic!("wt pr --json printed no JSON ({err})\n{context}"));
    let number = opened["number"].as_u64().unwrap_or_else(|| panic!("{opened:#}"));
    let change: Value =
        serde_json::from_str(&hub.run(&repo, "shamhub", &["dump", "change", &number.to_string()])).unwrap();
    assert_eq!(change["draft"], true, "{change:#}");
    assert_eq!(change["base"]["ref"], "main", "{change:#}");
    assert!(
        texts.iter().any(|(error, text)| !error && text.contains("background")),
        "the background poll was let through\n{context}"
    );
}
