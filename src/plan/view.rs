//! The normalized plan as `wt plan --json` prints it (a contract: scripts read it).

use serde::Serialize;

use super::model::{Plan, RunIdOrigin, Strategy};

#[derive(Serialize)]
pub struct PlanView<'a> {
    pub run_id: &'a str,
    /// Where the run id came from; a derived one changes when the plan's path or content does.
    pub run_id_origin: RunIdOrigin,
    pub feature: Option<&'a str>,
    pub base: Option<&'a str>,
    pub agent: AgentView<'a>,
    /// The plan's own `[worktree]` table (the project's worktree.toml is laid under it at run time).
    pub worktree: &'a crate::plan::WorktreeConfig,
    pub phases: Vec<PhaseView<'a>>,
}

#[derive(Serialize)]
pub struct AgentView<'a> {
    /// `claude`, `command` or `script`; none when the plan does not say.
    pub kind: Option<&'static str>,
    pub command: Option<&'a [String]>,
    pub max_parallel: Option<usize>,
    pub timeout_secs: Option<u64>,
}

#[derive(Serialize)]
pub struct PhaseView<'a> {
    pub name: &'a str,
    pub strategy: Strategy,
    pub tasks: Vec<TaskView<'a>>,
}

#[derive(Serialize)]
pub struct TaskView<'a> {
    pub number: crate::plan::TaskId,
    pub name: &'a str,
    pub slug: &'a str,
    pub branch: &'a str,
    pub prompt: &'a str,
    pub files: &'a [String],
    pub acceptance: &'a [String],
    pub verify: Option<&'a str>,
    pub run: Option<&'a str>,
    pub allow_empty: bool,
    pub timeout_secs: Option<u64>,
}

impl<'a> PlanView<'a> {
    /// `base` is the resolved base branch when known (the plan's, or the repository's current one).
    pub fn new(plan: &'a Plan, base: Option<&'a str>) -> Self {
        let phases = plan
            .phases
            .iter()
            .map(|phase| PhaseView {
                name: &phase.name,
                strategy: phase.strategy,
                tasks: phase
                    .tasks
                    .iter()
                    .map(|task| TaskView {
                        number: task.id,
                        name: &task.name,
                        slug: &task.slug,
                        branch: &task.branch,
                        prompt: &task.prompt,
                        files: &task.files,
                        acceptance: &task.acceptance,
                        verify: task.verify.as_deref(),
                        run: task.run.as_deref(),
                        allow_empty: task.allow_empty,
                        timeout_secs: task.timeout.map(|timeout| timeout.as_secs()),
                    })
                    .collect(),
            })
            .collect();
        PlanView {
            run_id: &plan.run_id,
            run_id_origin: plan.run_id_origin,
            feature: plan.feature.as_deref(),
            base,
            agent: AgentView {
                kind: plan.agent.kind.as_ref().map(|kind| kind.value.name()),
                command: plan.agent.command.as_deref(),
                max_parallel: plan.agent.max_parallel,
                timeout_secs: plan.agent.timeout.map(|timeout| timeout.as_secs()),
            },
            worktree: &plan.worktree,
            phases,
        }
    }
}
