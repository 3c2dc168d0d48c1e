//! One task in its worktree: the agent, then a commit of what it left, then `verify`.
//! Runs on a worker thread for parallel phases, so it touches no shared state: it reports.

use std::io::Write;
use std::path::{Path, PathBuf};

use super::EngineError;
use super::event::Activity;
use super::integrity::{self, Allowed, Watch};
use super::journal::Step;
use super::transcript::Follower;
use super::workspace::Workspace;
use crate::agent::{Agent, TaskContext, render_prompt, with_task_env};
use crate::git;
use crate::plan::{Task, TaskId, commit_message};
use crate::process::{Cmd, ExitDescription};
use crate::store::{Containment, FileLock, write_atomic};

/// What a running task tells its coordinator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Progress {
    Activity(Activity),
    /// What the agent is doing now (from its transcript).
    Detail(String),
    /// The agent process started (Some) or ended (None).
    AgentPid(Option<u32>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TaskOutcome {
    Verified,
    Failed(String),
}

/// The task's prompt, written to its file in the run's state (with the folders of every file the
/// task keeps there).
struct Prompt {
    file: PathBuf,
    text: String,
}

impl Prompt {
    fn write(ws: &Workspace, task: &Task, worktree: &Path) -> Result<Prompt, EngineError> {
        let (run_id, id) = (&ws.run_id, task.id);
        let file = ws.layout.prompt(run_id, id);
        let state_files = [ws.layout.task_log(run_id, id), ws.layout.transcript(run_id, id), file.clone()];
        for path in state_files.iter().chain([&ws.layout.claude_settings(run_id, id)]) {
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir)
                    .map_err(|source| io("creating the run's state folders", source))?;
            }
        }
        let text = render_prompt(ws.feature.as_deref(), task, worktree);
        std::fs::write(&file, &text).map_err(|source| io("writing the task prompt", source))?;
        Ok(Prompt { file, text })
    }

    fn context<'a>(&'a self, ws: &'a Workspace, task: &'a Task, worktree: &'a Path) -> TaskContext<'a> {
        TaskContext {
            run_id: &ws.run_id,
            task,
            worktree,
            prompt_file: &self.file,
            prompt: &self.text,
            layout: &ws.layout,
            wt_exe: &ws.wt_exe,
            contained: ws.containment == Containment::Kernel,
        }
    }
}

/// Runs `task` with `agent` in `worktree`, whose branch started at `base_commit`.
pub fn execute_task(
    ws: &Workspace,
    agent: &Agent,
    task: &Task,
    worktree: &Path,
    base_commit: &str,
    report: &mut dyn FnMut(Progress),
) -> Result<TaskOutcome, EngineError> {
    let watch = watch(ws, task, worktree, &ws.repo_lock()?)?;
    match run_owed_setup(ws, task, worktree)? {
        Setup::NotOwed => {}
        Setup::Failed(failure) => return Ok(TaskOutcome::Failed(failure)),
        Setup::Done => {
            if let Some(failure) = take_back(ws, task, worktree, &watch)? {
                return Ok(TaskOutcome::Failed(format!("setup: {failure}")));
            }
        }
    }
    let prompt = Prompt::write(ws, task, worktree)?;
    let context = prompt.context(ws, task, worktree);
    let log = context.log();
    let mut launch = agent.launch(&context).map_err(|source| io("preparing the agent", source))?;
    launch.cmd = contained(ws, task, worktree, launch.cmd);
    report(Progress::Activity(Activity::Agent));
    log_line(&log, &format!("agent: {}", launch.cmd.display()))?;
    let timeout = task.timeout.or(ws.timeout);
    let finished = ws.journal.step(Step::Agent, &task.id.to_string(), || {
        let started = launch.cmd.start_to_files(&launch.stdout, &log);
        let Ok(started) = started else { return Ok(started.map(|_| None)) };
        report(Progress::AgentPid(started.pid()));
        let mut follower = Follower::new(&launch.stdout);
        Ok(started.wait_watching(timeout, &mut || {
            if let Some(detail) = follower.latest(|line| agent.activity(line)) {
                report(Progress::Detail(detail));
            }
        }))
    })?;
    report(Progress::AgentPid(None));
    if let Some(failure) = take_back(ws, task, worktree, &watch)? {
        return Ok(TaskOutcome::Failed(failure));
    }
    let failure = match finished {
        Ok(Some(ExitDescription::Code(0))) => None,
        Ok(Some(status)) => Some(format!("the agent {status}; its output is in {}", log.display())),
        Ok(None) => Some(format!(
            "the agent was stopped after the {} s timeout; its work so far is kept in {}",
            timeout.map_or(0, |t| t.as_secs()),
            worktree.display()
        )),
        Err(err) => Some(err.to_string()),
    };
    match failure {
        Some(failure) => Ok(TaskOutcome::Failed(failure)),
        None => finish_task(ws, task, worktree, base_commit, &watch, report),
    }
}

/// What became of the `[worktree] setup` a fresh worktree owes before its first agent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Setup {
    /// There is none, or the worktree is not fresh (recycled, or set up already).
    NotOwed,
    Done,
    /// Why the task fails.
    Failed(String),
}

/// Runs the setup the task's worktree owes, if it owes one: inside the task's sandbox, logged
/// with the task. Once it passed, the worktree owes nothing more; a failed one is owed still.
pub fn run_owed_setup(ws: &Workspace, task: &Task, worktree: &Path) -> Result<Setup, EngineError> {
    let Some(setup) = &ws.seed.setup else { return Ok(Setup::NotOwed) };
    let owed = super::worktrees::setup_owed(ws, worktree);
    if !owed.exists() {
        return Ok(Setup::NotOwed);
    }
    let prompt = Prompt::write(ws, task, worktree)?;
    let context = prompt.context(ws, task, worktree);
    let log = context.log();
    let cmd = contained(ws, task, worktree, with_task_env(Cmd::new("sh").arg("-c").arg(setup), &context));
    log_line(&log, &format!("setup: {setup}"))?;
    match cmd.run_logged(&log) {
        Ok(ExitDescription::Code(0)) => {}
        Ok(status) => {
            let failure = format!("setup `{setup}` {status}; output in {}", log.display());
            return Ok(Setup::Failed(failure));
        }
        Err(err) => return Ok(Setup::Failed(format!("setup `{setup}`: {err}"))),
    }
    let leftovers = git::status_paths(worktree)?;
    if !leftovers.is_empty() {
        return Ok(Setup::Failed(format!(
            "setup left files git does not ignore in {}: {}; what setup makes belongs in ignored folders",
            worktree.display(),
            leftovers.join(", ")
        )));
    }
    std::fs::remove_file(&owed).map_err(|source| io(&format!("removing {}", owed.display()), source))?;
    Ok(Setup::Done)
}

/// What follows each command of a task (its agent, its verify, a subagent's turn): the objects it
/// made are taken into the repository, then the repository is checked against `watch`. Returns
/// why the task fails, if it does. Under the repository lock: a sibling's branch that wt is
/// creating meanwhile is there only once its worktree's HEAD log explains it.
pub fn take_back(
    ws: &Workspace,
    task: &Task,
    worktree: &Path,
    watch: &Watch,
) -> Result<Option<String>, EngineError> {
    let _repo_lock = ws.repo_lock()?;
    let imported = ws.repo.import_objects(&ws.layout.task_objects(&ws.run_id, task.id))?;
    let mut failures: Vec<String> = watch.verdict(&ws.repo, worktree, &task.branch)?.into_iter().collect();
    if !imported.mislabeled.is_empty() {
        failures.push(format!(
            "the task left objects whose content does not match their names ({}); they were not taken into \
             the repository",
            imported.mislabeled.join(", ")
        ));
    }
    Ok((!failures.is_empty()).then(|| failures.join("; ")))
}

/// Starts watching a task: a snapshot of what it must leave alone, taken under the repository
/// lock (`_held`) so that no change of wt's own is half made. It is written to the run's state
/// before the task starts: if wt is killed while the task runs, the resumed run (or `wt step`,
/// for a subagent) still checks against it.
pub fn watch(ws: &Workspace, task: &Task, worktree: &Path, _held: &FileLock) -> Result<Watch, EngineError> {
    let snapshot = integrity::take(&ws.repo, worktree, ws.containment == Containment::Kernel)?;
    let watch = Watch { snapshot, allowed: Allowed::for_task(&ws.layout, &ws.run_id, &task.branch) };
    let file = ws.layout.task_watch(&ws.run_id, task.id);
    let bytes = serde_json::to_vec(&watch)
        .map_err(|err| io("recording the task's snapshot", std::io::Error::other(err)))?;
    write_atomic(&file, &bytes).map_err(|source| io(&format!("writing {}", file.display()), source))?;
    Ok(watch)
}

/// The watch written when `task` last started, or why there is none to check against (wt does
/// not let a task pass unchecked).
pub fn recorded_watch(ws: &Workspace, task: TaskId) -> Result<Watch, String> {
    let file = ws.layout.task_watch(&ws.run_id, task);
    let watch = std::fs::read(&file).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok());
    watch.ok_or_else(|| {
        format!(
            "wt has no readable record of the repository from before the task started ({}), so it cannot \
             check what the task changed",
            file.display()
        )
    })
}

/// What follows an agent, wherever it ran (here, or as a Claude Code subagent): commit what it
/// left, check the branch gained work, run `verify` and check what it changed against `watch`.
pub fn finish_task(
    ws: &Workspace,
    task: &Task,
    worktree: &Path,
    base_commit: &str,
    watch: &Watch,
    report: &mut dyn FnMut(Progress),
) -> Result<TaskOutcome, EngineError> {
    let target = task.id.to_string();
    report(Progress::Activity(Activity::Committing));
    ws.journal.step(Step::Commit, &target, || Ok(git::commit_all(worktree, &commit_message(task))?))?;
    let head = git::head_commit(worktree)?;
    if !task.allow_empty && ws.repo.count_commits(base_commit, &head)? == 0 {
        return Ok(TaskOutcome::Failed(
            "no changes: the agent made no commit and left no changed file \
             (set allow_empty = true on the task if that is expected)"
                .into(),
        ));
    }
    let Some(verify) = &task.verify else { return Ok(TaskOutcome::Verified) };
    report(Progress::Activity(Activity::Verifying));
    let outcome = run_verify(ws, task, worktree, verify)?;
    match take_back(ws, task, worktree, watch)? {
        Some(failure) => Ok(TaskOutcome::Failed(format!("verify: {failure}"))),
        None => Ok(outcome),
    }
}

fn run_verify(
    ws: &Workspace,
    task: &Task,
    worktree: &Path,
    verify: &str,
) -> Result<TaskOutcome, EngineError> {
    let prompt = Prompt::write(ws, task, worktree)?;
    let context = prompt.context(ws, task, worktree);
    let log = context.log();
    let cmd = contained(ws, task, worktree, with_task_env(Cmd::new("sh").arg("-c").arg(verify), &context));
    log_line(&log, &format!("verify: {verify}"))?;
    match ws.journal.step(Step::Verify, &task.id.to_string(), || Ok(cmd.run_logged(&log)))? {
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
    Ok(TaskOutcome::Verified)
}

/// `cmd` as it runs for the task: under `wt sandbox` in the task's worktree when the run is
/// contained by the kernel.
fn contained(ws: &Workspace, task: &Task, worktree: &Path, cmd: Cmd) -> Cmd {
    if ws.containment == Containment::PolicyOnly {
        return cmd;
    }
    let sandbox = Cmd::new(&ws.wt_exe)
        .arg("sandbox")
        .arg("--root")
        .arg(worktree)
        .args(["--branch", &task.branch])
        .arg("--rules")
        .arg(ws.layout.guard_rules(&ws.run_id))
        .arg("--tmp")
        .arg(ws.layout.task_tmp(&ws.run_id, task.id))
        .arg("--objects")
        .arg(ws.layout.task_objects(&ws.run_id, task.id))
        .arg("--");
    cmd.inside(sandbox)
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
