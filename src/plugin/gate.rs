//! Completion gates (Claude Code's TeammateIdle and TaskCompleted hooks, which fire for the
//! teammates of an interactive session only — research/teams/FINDINGS §3):
//! - a run's worker (a leased slot `spectacular:wt-worker-<k>`) is not done while its branch has
//!   no commit of its own or its worktree has uncommitted files;
//! - the teammate of a team worktree (named `wt-<name>`) may not go idle while its change request
//!   is open and no `wt poll` watches it, nor complete a task while its worktree has uncommitted
//!   files or its verify fails.
//!
//! Claude Code shows a refusal to the model after the hook's whole command line, so each one
//! says on its own what is wrong and what to do.

use std::path::Path;
use std::time::Duration;

use super::leases;
use super::workers::parse_worker_type;
use crate::git::{self, Repo};
use crate::process::{Cmd, ExitDescription};
use crate::spice::ChangeStatus;
use crate::store::StateLayout;
use crate::team::{self, TeamRecord, TeamRepo};

/// The first worker name (`spectacular:wt-worker-<k>`) among the hook input's string fields.
pub fn worker_name(input: &serde_json::Value) -> Option<String> {
    let fields = input.as_object()?;
    fields.values().filter_map(|v| v.as_str()).find(|v| parse_worker_type(v).is_some()).map(str::to_owned)
}

/// Why the worker `name` is not done yet, or None when it may stop (or holds no task).
pub fn refusal(cwd: &Path, name: &str) -> Result<Option<String>, String> {
    let Some(slot) = parse_worker_type(name) else { return Ok(None) };
    let repo = Repo::discover(cwd).map_err(|err| err.to_string())?;
    let Some(holder) = leases::holder(&StateLayout::new(repo.common_dir()), slot) else { return Ok(None) };
    let task = holder.task;
    let number = task.id;
    let worktree = &task.worktree;
    let changed = git::status_paths(worktree).map_err(|err| err.to_string())?;
    if !changed.is_empty() {
        return Ok(Some(format!(
            "task {number} has uncommitted files in {}: {}; commit them on {} (git add -A && git commit -m …) \
             before finishing",
            worktree.display(),
            changed.join(", "),
            task.branch
        )));
    }
    let head = git::head_commit(worktree).map_err(|err| err.to_string())?;
    let base = task.base_commit.clone().unwrap_or_default();
    let commits =
        if base.is_empty() { 0 } else { repo.count_commits(&base, &head).map_err(|err| err.to_string())? };
    if commits == 0 {
        return Ok(Some(format!(
            "task {number} ({}) has no commit on {} yet; do the task in {} and commit it before finishing",
            task.name,
            task.branch,
            worktree.display()
        )));
    }
    Ok(None)
}

/// The team worktree a teammate works in: its `teammate_name` (else its `agent_type`, which for
/// a teammate is the same name), when that is `wt-<name>`.
pub fn team_name(input: &serde_json::Value) -> Option<String> {
    let field = |key: &str| input.get(key).and_then(|value| value.as_str());
    let agent = field("teammate_name").or_else(|| field("agent_type"))?;
    team::name::from_agent_type(agent).map(str::to_owned)
}

/// TeammateIdle of the teammate of the team worktree `name`: not while its change request is
/// open and no `wt poll` watches it (nobody would hear of CI, reviews or a moved base).
pub fn team_idle_refusal(cwd: &Path, name: &str) -> Result<Option<String>, String> {
    let team = TeamRepo::open(cwd).map_err(|err| err.to_string())?;
    if !is_team_worktree(&team.worktree_path(name), name) {
        return Ok(None);
    }
    let graph = team.graph_with_changes().map_err(|err| err.to_string())?;
    let Some(change) = graph.change(name) else { return Ok(None) };
    if change.status != Some(ChangeStatus::Open) || team::poll::is_active(team.layout(), name) {
        return Ok(None);
    }
    let url = change.web_url().map(|url| format!(" ({url})")).unwrap_or_default();
    let wt = crate::process::own_name();
    Ok(Some(format!(
        "wt: change request {id}{url} of the team worktree {name} is open and no `{wt} poll {name}` is watching it, so \
         nobody would hear of its CI, its reviews or its base moving. Before you go idle, run `{wt} poll {name}` with \
         the Bash tool's run_in_background: true; it ends with one event (ci_passed, ci_failure, review_comments, \
         base_updated, merged or closed): act on it, then start it again.",
        id = change.id
    )))
}

/// TaskCompleted of a task of the teammate of the team worktree `name`: not while the worktree
/// has uncommitted files or its recorded verify (`wt create --verify`) fails. The verify runs
/// inside `wt sandbox` of the worktree for at most [`verify_limit`]; a commit it passed on is
/// not verified again.
pub fn team_task_refusal(
    cwd: &Path,
    name: &str,
    input: &serde_json::Value,
) -> Result<Option<String>, String> {
    let repo = Repo::discover(cwd).map_err(|err| err.to_string())?;
    let worktree = repo.root().join(crate::git::WORKTREES_DIR).join(name);
    if !is_team_worktree(&worktree, name) {
        return Ok(None);
    }
    let task = describe_task(input);
    let changed = git::status_paths(&worktree).map_err(|err| err.to_string())?;
    if !changed.is_empty() {
        return Ok(Some(format!(
            "wt: {task} is not done: the team worktree {} has uncommitted files ({}). Commit them on branch {name} \
             (git add -A && git commit -m …) or remove them, then mark the task completed again.",
            worktree.display(),
            changed.join(", ")
        )));
    }
    let layout = StateLayout::new(repo.common_dir());
    let record = TeamRecord::load(&layout.team_record(name)).map_err(|err| err.to_string())?;
    let Some(verify) = record.and_then(|record| record.verify) else { return Ok(None) };
    let head = git::head_commit(&worktree).map_err(|err| err.to_string())?;
    let passed = layout.team_verify_dir().join(format!("{name}.passed"));
    let stamp = format!("{head}\n{verify}\n");
    if std::fs::read_to_string(&passed).is_ok_and(|text| text == stamp) {
        return Ok(None);
    }
    let log = layout.team_verify_dir().join(format!("{name}.log"));
    let failure = match run_verify(&worktree, name, &verify, &log)? {
        Some(failure) => failure,
        None => match git::status_paths(&worktree).map_err(|err| err.to_string())? {
            left if left.is_empty() => {
                // Only a shortcut for the next check: failing to write it costs a verify.
                let _ = crate::store::write_atomic(&passed, stamp.as_bytes());
                return Ok(None);
            }
            left => format!(
                "it left uncommitted files ({}); ignore them in .gitignore or clean them up",
                left.join(", ")
            ),
        },
    };
    Ok(Some(format!(
        "wt: {task} is not done: the verify command `{verify}` of the team worktree {} {failure}. Fix the cause with \
         commits on branch {name}, then mark the task completed again.",
        worktree.display()
    )))
}

/// `task 3 (write hello)`, from the hook input's `task_id` and `task_subject`.
fn describe_task(input: &serde_json::Value) -> String {
    let field = |key: &str| input.get(key).and_then(|value| value.as_str()).filter(|v| !v.is_empty());
    match (field("task_id"), field("task_subject")) {
        (Some(id), Some(subject)) => format!("task {id} ({subject})"),
        (Some(id), None) => format!("task {id}"),
        (None, Some(subject)) => format!("the task \"{subject}\""),
        (None, None) => "this task".to_owned(),
    }
}

fn is_team_worktree(worktree: &Path, name: &str) -> bool {
    git::current_branch(worktree).ok().flatten().as_deref() == Some(name)
}

/// How long the gate lets a verify run: `WT_GATE_VERIFY_TIMEOUT` seconds, else ten minutes (the
/// plugin's TaskCompleted hook allows a little more).
fn verify_limit() -> Duration {
    let seconds = std::env::var("WT_GATE_VERIFY_TIMEOUT").ok().and_then(|v| v.parse::<u64>().ok());
    Duration::from_secs(seconds.filter(|s| *s > 0).unwrap_or(600))
}

/// Runs `verify` in `wt sandbox` of the worktree, its output in `log`; why it failed, if it did.
fn run_verify(worktree: &Path, name: &str, verify: &str, log: &Path) -> Result<Option<String>, String> {
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).map_err(|err| format!("creating {}: {err}", dir.display()))?;
    }
    let _ = std::fs::remove_file(log);
    let limit = verify_limit();
    let cmd = Cmd::new(crate::process::own_exe()?)
        .arg("sandbox")
        .arg("--root")
        .arg(worktree)
        .args(["--branch", name, "--", "sh", "-c", verify])
        .dir(worktree);
    let started = cmd.start_logged(log).map_err(|err| err.to_string())?;
    let status = started.wait_watching(Some(limit), &mut || {}).map_err(|err| err.to_string())?;
    let tail = tail(log);
    Ok(match status {
        Some(ExitDescription::Code(0)) => None,
        Some(status) => Some(format!("{status}; the end of its output ({}):\n{tail}", log.display())),
        None => Some(format!(
            "did not finish within {} s and was stopped; the end of its output ({}):\n{tail}",
            limit.as_secs(),
            log.display()
        )),
    })
}

/// The last lines of `log`, each cut short, for a refusal that must stand on its own.
fn tail(log: &Path) -> String {
    const LINES: usize = 15;
    const WIDTH: usize = 200;
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let lines: Vec<&str> = text.lines().collect();
    let shown =
        lines[lines.len().saturating_sub(LINES)..].iter().map(|line| match line.char_indices().nth(WIDTH) {
            Some((cut, _)) => format!("  {}…", &line[..cut]),
            None => format!("  {line}"),
        });
    let shown: Vec<String> = shown.collect();
    if shown.is_empty() { "  (nothing)".to_owned() } else { shown.join("\n") }
}
