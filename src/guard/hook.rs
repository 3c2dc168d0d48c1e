//! The hook's input (Claude Code's PreToolUse JSON) and the decision for one tool call.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::bash::check_bash;
use super::decision::Decision;
use super::paths::{Place, Worktree};
use super::rules::{Call, GuardConfig};
use super::verdict::Verdict;

/// Every field optional, unknown fields ignored: the format grows between Claude Code versions.
#[derive(Debug, Default, Deserialize)]
pub struct HookInput {
    pub cwd: Option<String>,
    pub tool_name: Option<String>,
    #[serde(default)]
    pub tool_input: serde_json::Value,
    pub agent_type: Option<String>,
}

/// The worktree a call is judged against.
#[derive(Debug, Clone)]
pub struct Target {
    pub root: PathBuf,
    pub branch: Option<String>,
}

/// How the agent is contained besides this hook; it decides what a Bash command the guard could
/// not follow (`Verdict::Unclear`) gets. A deny is a deny in every mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Containment {
    /// Only this hook (`--detect`, a worktree made by hand): what it followed is allowed, what it
    /// could not follow gets no decision, so the user's own permission settings decide.
    HookOnly,
    /// The agent's whole process runs inside `wt sandbox` (`wt run`'s agents): the kernel keeps
    /// its writes in the worktree, so whatever is not denied is allowed.
    Contained,
    /// The agent cannot be sandboxed as a whole (the plugin's workers are subagents of the user's
    /// session): every Bash call that is not denied is allowed rewritten to run inside
    /// `<exe> sandbox`, with these rules and these task folders. `commands_running`: such a
    /// command of the task runs now (in the background), and could swap a folder of the worktree
    /// for a link out of it between this check and the write, so file writes are refused.
    SandboxWrap {
        exe: PathBuf,
        rules: Option<PathBuf>,
        folders: Option<super::wrap::TaskFolders>,
        commands_running: bool,
    },
}

/// The built-in policy, then the configured rules; the most restrictive decision wins.
pub fn decide(
    input: &HookInput,
    target: &Target,
    config: &GuardConfig,
    containment: &Containment,
) -> Decision {
    let wt = Worktree::new(&target.root);
    let cwd = cwd_of(input, &wt);
    let call = call_of(input, target, &wt, &cwd);
    let (tool, path) = (call.tool, call.path);
    let built_in = match tool {
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => match containment {
            Containment::SandboxWrap { commands_running: true, .. } => Decision::Deny(format!(
                "{tool} waits while a command of this task still runs in `wt sandbox` (one started in the \
                 background?): it could swap a folder of the worktree for a link out of it before the write \
                 lands. Wait for it to end or stop it, then {tool} again"
            )),
            _ => file_write(tool, path, &cwd, &wt),
        },
        "Bash" => match call.command {
            Some(command) => match super::background::refusal(&input.tool_input, command) {
                Some(refusal) => Decision::Deny(refusal),
                None => {
                    let verdict = check_bash(command, &cwd, &wt, target.branch.as_deref());
                    bash_decision(verdict, input, target, &wt, containment)
                }
            },
            None => Decision::Deny("the Bash call has no command".into()),
        },
        _ => Decision::None,
    };
    built_in.and(config.decide(&call))
}

/// What is left to say of a call let through outside the built-in policy (a team agent's own wt
/// command): a `wt poll` must still run in the background, and the project's rules may still
/// refuse it.
pub fn decide_own_command(input: &HookInput, target: &Target, config: &GuardConfig) -> Decision {
    let wt = Worktree::new(&target.root);
    let cwd = cwd_of(input, &wt);
    let call = call_of(input, target, &wt, &cwd);
    let background = call.command.and_then(|command| super::background::refusal(&input.tool_input, command));
    background.map_or(Decision::None, Decision::Deny).and(config.decide(&call))
}

fn cwd_of(input: &HookInput, wt: &Worktree) -> PathBuf {
    input.cwd.as_deref().map(PathBuf::from).unwrap_or_else(|| wt.root().to_owned())
}

fn call_of<'a>(input: &'a HookInput, target: &'a Target, wt: &'a Worktree, cwd: &'a Path) -> Call<'a> {
    let field = |name: &str| input.tool_input.get(name).and_then(|v| v.as_str());
    Call {
        tool: input.tool_name.as_deref().unwrap_or_default(),
        path: field("file_path").or_else(|| field("notebook_path")).or_else(|| field("path")),
        command: field("command"),
        cwd,
        wt,
        branch: target.branch.as_deref(),
    }
}

fn bash_decision(
    verdict: Verdict,
    input: &HookInput,
    target: &Target,
    wt: &Worktree,
    containment: &Containment,
) -> Decision {
    let root = wt.root().display();
    match (verdict, containment) {
        (Verdict::Deny(reason), _) => Decision::Deny(reason),
        (Verdict::Understood, Containment::HookOnly) => {
            Decision::Allow(format!("every command stays inside the worktree {root}"))
        }
        (Verdict::Unclear(_), Containment::HookOnly) => Decision::None,
        (verdict, Containment::Contained) => Decision::Allow(match verdict {
            Verdict::Unclear(why) => {
                format!("runs inside this agent's sandbox, which keeps writes in the worktree {root} ({why})")
            }
            _ => format!("every command stays inside the worktree {root}"),
        }),
        (verdict, Containment::SandboxWrap { exe, rules, folders, .. }) => {
            let mut updated = input.tool_input.clone();
            let command = updated.get("command").and_then(|c| c.as_str()).unwrap_or_default();
            let sandbox = super::wrap::Sandbox {
                exe,
                root: wt.root(),
                branch: target.branch.as_deref(),
                rules: rules.as_deref(),
                folders: folders.as_ref(),
            };
            let wrapped = sandbox.around(command);
            updated["command"] = serde_json::Value::String(wrapped);
            let why = match verdict {
                Verdict::Unclear(why) => format!(" ({why})"),
                _ => String::new(),
            };
            Decision::Rewrite {
                reason: format!(
                    "runs inside `wt sandbox`, which keeps its writes in the worktree {root}{why}"
                ),
                input: updated,
                ask: false,
            }
        }
    }
}

fn file_write(tool: &str, path: Option<&str>, cwd: &Path, wt: &Worktree) -> Decision {
    let root = wt.root().display();
    let Some(path) = path.filter(|p| !p.is_empty()) else {
        return Decision::Deny(format!("{tool} names no file; name one inside the worktree {root}"));
    };
    match wt.place(path, cwd) {
        Place::Inside => Decision::Allow(format!("{path} is inside the worktree {root}")),
        Place::Device => Decision::None,
        Place::GitLink => Decision::Deny(format!(
            "{tool} on the worktree's .git link would detach {root} from its repository; edit project files instead"
        )),
        Place::Outside(real) => Decision::Deny(format!(
            "{tool} on {} is outside the worktree {root}; edit the copy inside it ({root}/…)",
            real.display()
        )),
    }
}
