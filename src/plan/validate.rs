//! Rules every plan must meet, whatever its format.

use super::error::PlanError;
use super::model::{AgentKind, Located, Location, Plan};

pub fn validate(plan: &Plan, run_id_location: Option<&Location>) -> Result<(), PlanError> {
    if !super::run_id::is_valid(&plan.run_id) {
        let message = format!("run id \"{}\" is not 6 lowercase hex characters", plan.run_id);
        let fix = "write id = \"a1b2c3\" (six of 0-9 and a-f), or leave it out to derive one";
        return Err(match run_id_location {
            Some(location) => PlanError::at(location.clone(), message, fix),
            None => PlanError::file(plan.source.clone(), message, fix),
        });
    }
    if plan.phases.is_empty() {
        return Err(PlanError::at(
            Location { file: display_file(plan), line: 1, column: 1 },
            "the plan has no phases",
            "add a [[phase]] with strategy = \"sequential\" or \"parallel\" and at least one [[phase.task]]",
        ));
    }
    for phase in &plan.phases {
        if phase.tasks.is_empty() {
            return Err(PlanError::at(
                phase.location.clone(),
                format!("phase {} ({}) has no tasks", phase.number, phase.name),
                "add at least one [[phase.task]] with a name under this [[phase]], or remove the phase",
            ));
        }
    }
    if let Some(kind) = &plan.agent.kind {
        check_agent_kind(plan, kind)?;
    }
    Ok(())
}

/// Checks that the tasks can run with this agent kind (also used when `--agent` overrides it).
pub fn check_agent_kind(plan: &Plan, kind: &Located<AgentKind>) -> Result<(), PlanError> {
    match kind.value {
        AgentKind::Script => match plan.tasks().find(|task| task.run.is_none()) {
            Some(task) => Err(PlanError::at(
                task.location.clone(),
                format!(
                    "task {} ({}) has no `run` command, and the agent kind is \"script\"",
                    task.id, task.name
                ),
                "add run = \"<shell command that does the task>\", or use another agent kind",
            )),
            None => Ok(()),
        },
        AgentKind::Command if plan.agent.command.is_none() => Err(missing_command(kind.location.clone())),
        AgentKind::Command | AgentKind::Claude => Ok(()),
    }
}

fn display_file(plan: &Plan) -> std::path::PathBuf {
    plan.phases.first().map(|phase| phase.location.file.clone()).unwrap_or_else(|| plan.source.clone())
}

/// A `command` agent with no command, in the plan or on the command line.
pub fn missing_command(location: Location) -> PlanError {
    PlanError::at(
        location,
        "the agent kind is \"command\" but no command is given",
        "add command = [\"my-agent\", \"--prompt-file\", \"{prompt_file}\"] under [agent], \
         or pass --agent-command '<shell command>'",
    )
}
