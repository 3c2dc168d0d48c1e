//! Plans: the model, the input formats, and the rules a plan must meet before anything runs.

mod diff;
mod error;
mod markdown_plan;
mod model;
pub mod run_id;
mod slug;
mod toml_plan;
mod validate;
mod view;
mod worktree;

#[cfg(test)]
mod markdown_tests;
#[cfg(test)]
mod tests;

use std::path::{Path, PathBuf};

pub use diff::describe_changes;
pub use error::{Place, PlanError};
pub use model::{
    AgentConfig, AgentKind, Located, Location, Phase, Plan, RunIdOrigin, Strategy, Task, TaskId, branch_name,
    commit_message,
};
pub use toml_plan::parse_duration;
pub use validate::{check_agent_kind, missing_command};
pub use view::PlanView;
pub use worktree::WorktreeConfig;

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
        Some("md" | "markdown") => from_markdown(path, &text)?,
        _ => {
            return Err(PlanError::file(
                path.to_owned(),
                "unknown plan format",
                "name the plan file *.toml, or *.md for a spectacular plan (see the README)",
            ));
        }
    };
    let from_path = spec_dir_run_id(&source).filter(|_| parsed.run_id.is_none());
    let (run_id, run_id_origin, run_id_location) = match (run_id_flag, parsed.run_id, from_path) {
        (Some(flag), _, _) => (flag.to_owned(), RunIdOrigin::Flag, None),
        (None, Some(id), _) => (id.value, RunIdOrigin::Plan, Some(id.location)),
        (None, None, Some(id)) => (id, RunIdOrigin::Plan, None),
        (None, None, None) => (run_id::derive(&source, &bytes), RunIdOrigin::Derived, None),
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
        worktree: parsed.worktree,
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

/// A spectacular plan.md in the plan's shape: no agent settings, no guard rules, the run id from
/// the frontmatter.
fn from_markdown(path: &Path, text: &str) -> Result<toml_plan::ParsedToml, PlanError> {
    let parsed = markdown_plan::parse(path, text)?;
    if parsed.phases.is_empty() {
        return Err(PlanError::file(
            path.to_owned(),
            "the plan has no phases",
            "write each phase as `## Phase 1: <name>` followed by `**Strategy**: sequential` or `parallel`",
        ));
    }
    let run_id = parsed
        .run_id
        .map(|value| Located { value, location: Location { file: path.to_owned(), line: 2, column: 1 } });
    Ok(toml_plan::ParsedToml {
        run_id,
        feature: parsed.feature,
        base: None,
        agent: AgentConfig::default(),
        guard: crate::guard::GuardConfig::default(),
        worktree: WorktreeConfig::default(),
        phases: parsed.phases,
    })
}

/// `specs/<runId>-<slug>/plan.md`, as spectacular lays runs out.
fn spec_dir_run_id(source: &Path) -> Option<String> {
    let dir = source.parent()?.file_name()?.to_str()?;
    let (id, slug) = dir.split_once('-')?;
    (run_id::is_valid(id) && !slug.is_empty()).then(|| id.to_owned())
}

fn absolute(path: &Path) -> PathBuf {
    std::fs::canonicalize(path)
        .unwrap_or_else(|_| std::path::absolute(path).unwrap_or_else(|_| path.to_owned()))
}
