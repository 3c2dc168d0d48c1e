//! One task in its worktree: the agent, then a commit of what it left, then `verify`.
//! Runs on a worker thread for parallel phases, so it touches no shared state: it reports.

use std::io::Write;
use std::path::Path;

use super::EngineError;
use super::event::Activity;
use super::workspace::Workspace;
use crate::agent::{TaskContext, claude_activity, claude_settings, render_prompt, with_task_env};
use crate::git;
use crate::plan::{Task, commit_message};
use crate::process::{Cmd, ExitDescription};

/// What a running task tells its coordinator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    Activity(Activity),
    /// What the agent is doing now (from a Claude Code transcript).
    Detail(String),
    /// The agent process started (Some) or ended (None).
    AgentPid(Option<u32>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskOutcome {
    Verified,
    Failed(String),
}

/// Where a task's prompt, log, transcript and Claude Code settings go in the run's state.
struct TaskFiles {
    prompt_file: std::path::PathBuf,
    log: std::path::PathBuf,
    transcript: std::path::PathBuf,
    settings: std::path::PathBuf,
}

impl TaskFiles {
    /// The paths, with their folders made.
    fn of(ws: &Workspace, task: &Task) -> Result<TaskFiles, EngineError> {
        let (run_id, id) = (&ws.run_id, task.id);
        let files = TaskFiles {
            prompt_file: ws.layout.prompt(run_id, id),
            log: ws.layout.task_log(run_id, id),
            transcript: ws.layout.transcript(run_id, id),
            settings: ws.layout.claude_settings(run_id, id),
        };
        for path in [&files.prompt_file, &files.log, &files.transcript, &files.settings] {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|source| io("creating the run's state folders", source))?;
            }
        }
        Ok(files)
    }
}

/// Runs `task` in `worktree`, whose branch started at `base_commit`.
pub fn execute_task(
    ws: &Workspace,
    task: &Task,
    worktree: &Path,
    base_commit: &str,
    report: &mut dyn FnMut(Progress),
) -> Result<TaskOutcome, EngineError> {
    let target = task.id.to_string();
    let TaskFiles { prompt_file, log, transcript, settings } = TaskFiles::of(ws, task)?;
    let prompt = render_prompt(ws.feature.as_deref(), task, worktree);
    std::fs::write(&prompt_file, &prompt).map_err(|source| io("writing the task prompt", source))?;
    if matches!(ws.agent, crate::agent::Agent::Claude(_)) {
        let rules = ws.layout.guard_rules(&ws.run_id);
        let text = claude_settings(&ws.wt_exe, worktree, &task.branch, &rules);
        crate::store::write_atomic(&settings, text.as_bytes())
            .map_err(|source| io("writing the Claude Code settings", source))?;
    }
    let context = TaskContext { run_id: &ws.run_id, task, worktree, prompt_file: &prompt_file };
    let Some(agent) = ws.agent.command(&context, &prompt, &settings) else {
        return finish_task(ws, task, worktree, base_commit, report);
    };
    report(Progress::Activity(Activity::Agent));
    log_line(&log, &format!("agent: {}", agent.display()))?;
    let stdout = if matches!(ws.agent, crate::agent::Agent::Claude(_)) { &transcript } else { &log };
    let timeout = task.timeout.or(ws.timeout);
    let finished = ws.journal.step("agent", &target, || {
        let started = agent.start_to_files(stdout, &log);
        let Ok(started) = started else { return Ok(started.map(|_| None)) };
        report(Progress::AgentPid(started.pid()));
        let mut follower = TranscriptFollower::new(&transcript);
        Ok(started.wait_watching(timeout, &mut || {
            if let Some(detail) = follower.latest_activity() {
                report(Progress::Detail(detail));
            }
        }))
    })?;
    report(Progress::AgentPid(None));
    match finished {
        Ok(Some(ExitDescription::Code(0))) => {}
        Ok(Some(status)) => {
            return Ok(TaskOutcome::Failed(format!(
                "the agent {status}; its output is in {}",
                log.display()
            )));
        }
        Ok(None) => {
            let limit = timeout.map_or(0, |t| t.as_secs());
            return Ok(TaskOutcome::Failed(format!(
                "the agent was stopped after the {limit} s timeout; its work so far is kept in {}",
                worktree.display()
            )));
        }
        Err(err) => return Ok(TaskOutcome::Failed(err.to_string())),
    }
    finish_task(ws, task, worktree, base_commit, report)
}

/// What follows an agent, wherever it ran (here, or as a Claude Code subagent): commit what it
/// left, check the branch gained work, run `verify`.
pub fn finish_task(
    ws: &Workspace,
    task: &Task,
    worktree: &Path,
    base_commit: &str,
    report: &mut dyn FnMut(Progress),
) -> Result<TaskOutcome, EngineError> {
    let target = task.id.to_string();
    let TaskFiles { prompt_file, log, .. } = TaskFiles::of(ws, task)?;
    let context = TaskContext { run_id: &ws.run_id, task, worktree, prompt_file: &prompt_file };
    report(Progress::Activity(Activity::Committing));
    ws.journal.step("commit", &target, || Ok(git::commit_all(worktree, &commit_message(task))?))?;
    let head = git::head_commit(worktree)?;
    if !task.allow_empty && ws.repo.count_commits(base_commit, &head)? == 0 {
        return Ok(TaskOutcome::Failed(
            "no changes: the agent made no commit and left no changed file \
             (set allow_empty = true on the task if that is expected)"
                .into(),
        ));
    }

    if let Some(verify) = &task.verify {
        report(Progress::Activity(Activity::Verifying));
        let cmd = with_task_env(Cmd::new("sh").arg("-c").arg(verify), &context);
        log_line(&log, &format!("verify: {verify}"))?;
        match ws.journal.step("verify", &target, || Ok(cmd.run_logged(&log)))? {
            Ok(ExitDescription::Code(0)) => {}
            Ok(status) => {
                return Ok(TaskOutcome::Failed(format!(
                    "verify `{verify}` {status}; the task's commits are kept; output in {}",
                    log.display()
                )));
            }
            Err(err) => return Ok(TaskOutcome::Failed(err.to_string())),
        }
        let leftovers = git::status_paths(worktree)?;
        if !leftovers.is_empty() {
            return Ok(TaskOutcome::Failed(format!(
                "verify left uncommitted files in {}: {}; ignore them in .gitignore or clean them up in verify",
                worktree.display(),
                leftovers.join(", ")
            )));
        }
    }
    Ok(TaskOutcome::Verified)
}

fn log_line(log: &Path, line: &str) -> Result<(), EngineError> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .map_err(|source| io("writing the task log", source))?;
    writeln!(file, "== wt: {line}").map_err(|source| io("writing the task log", source))
}

fn io(context: &str, source: std::io::Error) -> EngineError {
    EngineError::Io { context: context.to_owned(), source }
}

/// Readies a sequential task in the run's main worktree: its branch on `below`. The caller has
/// claimed the task (recorded its base commit).
pub fn place_in_main(ws: &Workspace, task: &Task, below: &str) -> Result<(), EngineError> {
    let worktree = ws.main_worktree();
    let _repo_lock = ws.repo_lock()?;
    let target = task.id.to_string();
    ws.journal.step("branch-create", &target, || place_task_branch(ws, &worktree, task, below))
}

/// Readies a parallel task in its own worktree: the worktree detached at `phase_base` (made,
/// kept or repaired), and its branch. The caller has claimed the task.
pub fn place_in_own_worktree(
    ws: &Workspace,
    task: &Task,
    phase_base: &str,
    may_hold_work: bool,
) -> Result<(), EngineError> {
    let worktree = ws.task_worktree(task.id);
    let target = task.id.to_string();
    let _repo_lock = ws.repo_lock()?;
    super::prepare::ensure_worktree(ws, &worktree, phase_base, &target, may_hold_work)?;
    ws.journal.step("branch-create", &target, || place_task_branch(ws, &worktree, task, phase_base))
}

/// Creates the task's branch on `below` with git-spice in `worktree` (which it checks out), or
/// checks out the branch an earlier attempt of this run created. The caller holds the repo lock.
fn place_task_branch(ws: &Workspace, worktree: &Path, task: &Task, below: &str) -> Result<(), EngineError> {
    if !ws.repo.branch_exists(&task.branch)? {
        ws.spice.branch_create(worktree, &task.branch, below)?;
    } else if git::current_branch(worktree)?.as_deref() != Some(task.branch.as_str()) {
        git::switch(worktree, &task.branch)?;
    }
    Ok(())
}

/// Whether the task's worktree holds any work since `base_commit`: a commit or a changed file.
pub fn has_work(ws: &Workspace, worktree: &Path, base_commit: &str) -> Result<bool, EngineError> {
    if !git::status_paths(worktree)?.is_empty() {
        return Ok(true);
    }
    let head = git::head_commit(worktree)?;
    Ok(ws.repo.count_commits(base_commit, &head)? > 0)
}

/// Reads the lines a running Claude Code agent appends to its transcript.
struct TranscriptFollower<'a> {
    path: &'a Path,
    offset: u64,
    partial: String,
}

impl<'a> TranscriptFollower<'a> {
    fn new(path: &'a Path) -> Self {
        let offset = std::fs::metadata(path).map_or(0, |m| m.len());
        TranscriptFollower { path, offset, partial: String::new() }
    }

    /// The activity of the newest complete line that has one.
    fn latest_activity(&mut self) -> Option<String> {
        use std::io::{Read, Seek, SeekFrom};
        let mut file = std::fs::File::open(self.path).ok()?;
        file.seek(SeekFrom::Start(self.offset)).ok()?;
        let mut fresh = String::new();
        let read = file.read_to_string(&mut fresh).ok()?;
        self.offset += read as u64;
        self.partial.push_str(&fresh);
        let complete = self.partial.rfind('\n')?;
        let lines: String = self.partial.drain(..=complete).collect();
        lines.lines().rev().find_map(claude_activity)
    }
}
