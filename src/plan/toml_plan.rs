//! `plan.toml`: the native plan format (the README documents it). Unknown keys are errors, and every error
//! points at the line and column to change.

use std::ops::Range;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;
use toml::Spanned;

use super::error::PlanError;
use super::model::{AgentConfig, AgentKind, Located, Location, Phase, Strategy, Task, TaskId};
use super::slug::slugify;
use super::worktree::WorktreeConfig;
use crate::guard::{GuardConfig, SandboxConfig};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlan {
    run: Option<RawRun>,
    agent: Option<RawAgent>,
    guard: Option<Spanned<GuardConfig>>,
    /// The run's `wt sandbox` settings, added to the project's (`[sandbox]` of guard.toml).
    sandbox: Option<SandboxConfig>,
    /// How the run's worktrees are made and recycled, over the project's worktree.toml.
    worktree: Option<Spanned<WorktreeConfig>>,
    #[serde(default)]
    phase: Vec<Spanned<RawPhase>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawRun {
    id: Option<Spanned<String>>,
    feature: Option<String>,
    base: Option<Spanned<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawAgent {
    kind: Option<Spanned<String>>,
    command: Option<Spanned<Vec<String>>>,
    max_parallel: Option<Spanned<i64>>,
    timeout: Option<Spanned<RawDuration>>,
}

/// `timeout = 600` (seconds) or `timeout = "10m"` (`s`, `m`, `h`).
#[derive(Deserialize)]
#[serde(untagged)]
enum RawDuration {
    Seconds(i64),
    Text(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPhase {
    name: Option<String>,
    strategy: Option<Spanned<String>>,
    #[serde(default)]
    task: Vec<Spanned<RawTask>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawTask {
    name: Option<Spanned<String>>,
    prompt: Option<String>,
    #[serde(default)]
    files: Vec<String>,
    #[serde(default)]
    acceptance: Vec<String>,
    verify: Option<String>,
    run: Option<String>,
    #[serde(default)]
    allow_empty: bool,
    timeout: Option<Spanned<RawDuration>>,
}

/// What the TOML says, before the run id is settled and the whole plan is validated.
pub struct ParsedToml {
    pub run_id: Option<Located<String>>,
    pub feature: Option<String>,
    pub base: Option<Located<String>>,
    pub agent: AgentConfig,
    pub guard: GuardConfig,
    pub worktree: WorktreeConfig,
    pub phases: Vec<Phase>,
}

/// Parses `text`; `file` is how messages name the plan. Branch names are filled in later, once
/// the run id is known.
pub fn parse(file: &Path, text: &str) -> Result<ParsedToml, PlanError> {
    let at = |span: Range<usize>| Location::at(file, text, span.start);
    let raw: RawPlan = toml::from_str(text).map_err(|err| syntax_error(file, text, &err))?;
    let run = raw.run.unwrap_or(RawRun { id: None, feature: None, base: None });
    let agent = match raw.agent {
        Some(agent) => parse_agent(agent, &at)?,
        None => AgentConfig::default(),
    };
    let guard = match raw.guard {
        Some(guard) => {
            let guard = guard.into_inner();
            guard.validate().map_err(|(offset, err)| {
                PlanError::at(Location::at(file, text, offset), err, "fix the rule under [guard]")
            })?;
            guard
        }
        None => GuardConfig::default(),
    };
    let guard = match raw.sandbox {
        Some(sandbox) => GuardConfig { sandbox: guard.sandbox.merge(sandbox), ..guard },
        None => guard,
    };
    let worktree = match raw.worktree {
        Some(worktree) => {
            let location = at(worktree.span());
            let worktree = worktree.into_inner();
            worktree
                .validate()
                .map_err(|err| PlanError::at(location, err, "fix the key under [worktree]"))?;
            worktree
        }
        None => WorktreeConfig::default(),
    };
    let mut phases = Vec::with_capacity(raw.phase.len());
    for (index, spanned) in raw.phase.into_iter().enumerate() {
        let location = at(spanned.span());
        phases.push(parse_phase(index + 1, location, spanned.into_inner(), &at)?);
    }
    Ok(ParsedToml {
        run_id: run.id.map(|id| located(id, &at)),
        feature: run.feature,
        base: run.base.map(|base| located(base, &at)),
        agent,
        guard,
        worktree,
        phases,
    })
}

fn parse_agent(raw: RawAgent, at: &impl Fn(Range<usize>) -> Location) -> Result<AgentConfig, PlanError> {
    let kind = match raw.kind {
        Some(kind) => {
            let location = at(kind.span());
            let Some(value) = AgentKind::parse(kind.get_ref()) else {
                return Err(PlanError::at(
                    location,
                    format!("unknown agent kind \"{}\"", kind.get_ref()),
                    format!("write kind = {}", AgentKind::list("\"")),
                ));
            };
            Some(Located { value, location })
        }
        None => None,
    };
    let max_parallel = match raw.max_parallel {
        Some(max) if *max.get_ref() < 1 => {
            return Err(PlanError::at(
                at(max.span()),
                format!("max_parallel is {}, it must be at least 1", max.get_ref()),
                "write max_parallel = 1 to run parallel tasks one at a time, or a larger number",
            ));
        }
        Some(max) => Some(usize::try_from(*max.get_ref()).unwrap_or(usize::MAX)),
        None => None,
    };
    let command = match raw.command {
        Some(command) if command.get_ref().is_empty() => {
            return Err(PlanError::at(
                at(command.span()),
                "the agent command is empty",
                "write command = [\"my-agent\", \"--prompt-file\", \"{prompt_file}\"]",
            ));
        }
        Some(command) => Some(command.into_inner()),
        None => None,
    };
    let timeout = raw.timeout.map(|t| duration(t, at)).transpose()?;
    Ok(AgentConfig { kind, command, max_parallel, timeout })
}

fn parse_phase(
    number: usize,
    location: Location,
    raw: RawPhase,
    at: &impl Fn(Range<usize>) -> Location,
) -> Result<Phase, PlanError> {
    let strategy = match raw.strategy {
        None => Strategy::Sequential,
        Some(strategy) => match strategy.get_ref().as_str() {
            "sequential" => Strategy::Sequential,
            "parallel" => Strategy::Parallel,
            other => {
                return Err(PlanError::at(
                    at(strategy.span()),
                    format!("unknown strategy \"{other}\" for phase {number}"),
                    "write strategy = \"sequential\" or strategy = \"parallel\"",
                ));
            }
        },
    };
    let mut tasks = Vec::with_capacity(raw.task.len());
    for (index, spanned) in raw.task.into_iter().enumerate() {
        let task_location = at(spanned.span());
        let id = TaskId { phase: number, task: index + 1 };
        tasks.push(parse_task(id, task_location, spanned.into_inner(), at)?);
    }
    let name = raw.name.unwrap_or_else(|| format!("Phase {number}"));
    Ok(Phase { number, name, strategy, tasks, location })
}

fn parse_task(
    id: TaskId,
    location: Location,
    raw: RawTask,
    at: &impl Fn(Range<usize>) -> Location,
) -> Result<Task, PlanError> {
    let name = match raw.name {
        Some(name) if !name.get_ref().trim().is_empty() => name.into_inner().trim().to_owned(),
        _ => {
            return Err(PlanError::at(
                location,
                format!("task {id} has no name"),
                "add name = \"<what the task does>\" to this [[phase.task]]",
            ));
        }
    };
    Ok(Task {
        id,
        slug: slugify(&name),
        branch: String::new(),
        name,
        prompt: raw.prompt.unwrap_or_default(),
        files: raw.files,
        acceptance: raw.acceptance,
        verify: raw.verify,
        run: raw.run,
        allow_empty: raw.allow_empty,
        timeout: raw.timeout.map(|t| duration(t, at)).transpose()?,
        location,
    })
}

fn duration(
    raw: Spanned<RawDuration>,
    at: &impl Fn(Range<usize>) -> Location,
) -> Result<Duration, PlanError> {
    let location = at(raw.span());
    let invalid = |shown: String| {
        PlanError::at(
            location.clone(),
            format!("timeout {shown} is not a duration"),
            "write timeout = 600 (seconds) or timeout = \"10m\" (s, m or h)",
        )
    };
    match raw.into_inner() {
        RawDuration::Seconds(seconds) if seconds > 0 => Ok(Duration::from_secs(seconds as u64)),
        RawDuration::Seconds(seconds) => Err(invalid(seconds.to_string())),
        RawDuration::Text(text) => parse_duration(&text).ok_or_else(|| invalid(format!("\"{text}\""))),
    }
}

/// `90`, `90s`, `15m`, `2h`.
pub fn parse_duration(text: &str) -> Option<Duration> {
    let text = text.trim();
    let (number, unit) = text.split_at(text.find(|c: char| !c.is_ascii_digit()).unwrap_or(text.len()));
    let number: u64 = number.parse().ok().filter(|n| *n > 0)?;
    let seconds = match unit.trim() {
        "" | "s" => number,
        "m" => number * 60,
        "h" => number * 3600,
        _ => return None,
    };
    Some(Duration::from_secs(seconds))
}

fn located(value: Spanned<String>, at: &impl Fn(Range<usize>) -> Location) -> Located<String> {
    let location = at(value.span());
    Located { value: value.into_inner(), location }
}

fn syntax_error(file: &Path, text: &str, err: &toml::de::Error) -> PlanError {
    let offset = err.span().map(|span| span.start).unwrap_or(0);
    let location = Location::at(file, text, offset);
    let message = err.message().trim().to_owned();
    let fix = if message.starts_with("unknown field") {
        "remove the key or correct its spelling (see the plan format in the README)"
    } else if message.starts_with("missing field") {
        "add the missing key"
    } else {
        "fix the TOML syntax at this place"
    };
    PlanError::at(location, message, fix)
}
