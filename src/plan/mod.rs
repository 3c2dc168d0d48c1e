//! Plans: the model, the input formats, and the rules a plan must meet before anything runs.

mod diff;
mod error;
mod model;
pub mod run_id;
mod slug;
mod toml_plan;
mod validate;
mod view;

#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use diff::describe_changes;
pub use error::{Place, PlanError};
pub use model::{
    AgentConfig, AgentKind, Located, Location, Phase, Plan, RunIdOrigin, Strategy, Task, TaskId, branch_name,
    commit_message,
};
pub use slug::slugify;
pub use validate::{check_agent_kind, missing_command};
pub use view::PlanView;

/// Reads, parses and validates the plan at `path`. `run_id_flag` (from `--run-id`) wins over the
/// plan's own id; without either the id is derived from the file's absolute path and content.
pub fn load(path: &Path, run_id_flag: Option<&str>) -> Result<Plan, PlanError> {
    let bytes = std::fs::read(path).map_err(|err| {
        PlanError::file(
            path.to_owned(),
            format!("cannot read the plan file: {err}"),
            "check the path; `wt plan <file>` validates a plan without running it",
        )
    })?;
    let text = String::from_utf8(bytes.clone()).map_err(|_| {
        PlanError::file(path.to_owned(), "the plan file is not UTF-8 text", "save the plan as UTF-8")
    })?;
    let source = absolute(path);
    let parsed = match path.extension().and_then(|ext| ext.to_str()) {
        Some("toml") => toml_plan::parse(path, &text)?,
        _ => {
            return Err(PlanError::file(
                path.to_owned(),
                "unknown plan format",
                "name the plan file *.toml (see the plan format in the README)",
            ));
        }
    };
    let (run_id, run_id_origin, run_id_location) = match (run_id_flag, parsed.run_id) {
        (Some(flag), _) => (flag.to_owned(), RunIdOrigin::Flag, None),
        (None, Some(id)) => (id.value, RunIdOrigin::Plan, Some(id.location)),
        (None, None) => (run_id::derive(&source, &bytes), RunIdOrigin::Derived, None),
    };
    let mut plan = Plan {
        digest: run_id::digest(&bytes),
        source,
        run_id,
        run_id_origin,
        feature: parsed.feature,
        base: parsed.base,
        agent: parsed.agent,
        guard: parsed.guard,
        phases: parsed.phases,
    };
    for phase in &mut plan.phases {
        for task in &mut phase.tasks {
            task.branch = branch_name(&plan.run_id, task.id, &task.slug);
        }
    }
    validate::validate(&plan, run_id_location.as_ref())?;
    Ok(plan)
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| std::path::absolute(path).unwrap_or_else(|_| path.to_owned()))
}
