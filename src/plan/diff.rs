//! What changed between the plan a run started from and the plan given now, task by task.

use super::model::{Plan, Task};

/// One line per difference, by phase and task number ("task 2.1 renamed from …"), in plan order.
pub fn describe_changes(old: &Plan, new: &Plan) -> Vec<String> {
    let mut changes = Vec::new();
    let phases = old.phases.len().max(new.phases.len());
    for index in 0..phases {
        match (old.phases.get(index), new.phases.get(index)) {
            (Some(_), None) => changes.push(format!("phase {} removed", index + 1)),
            (None, Some(phase)) => changes.push(format!("phase {} ({}) added", index + 1, phase.name)),
            (Some(a), Some(b)) => {
                if a.strategy != b.strategy {
                    changes.push(format!(
                        "phase {} strategy changed from {} to {}",
                        index + 1,
                        a.strategy.as_str(),
                        b.strategy.as_str()
                    ));
                }
                let tasks = a.tasks.len().max(b.tasks.len());
                for t in 0..tasks {
                    match (a.tasks.get(t), b.tasks.get(t)) {
                        (Some(task), None) => {
                            changes.push(format!("task {} ({}) removed", task.id, task.name))
                        }
                        (None, Some(task)) => changes.push(format!("task {} ({}) added", task.id, task.name)),
                        (Some(x), Some(y)) => changes.extend(task_changes(x, y)),
                        (None, None) => {}
                    }
                }
            }
            (None, None) => {}
        }
    }
    if changes.is_empty() && old.base.as_ref().map(|b| &b.value) != new.base.as_ref().map(|b| &b.value) {
        changes.push("the base branch changed".into());
    }
    if changes.is_empty() {
        changes.push("settings outside the phases changed".into());
    }
    changes
}

fn task_changes(old: &Task, new: &Task) -> Vec<String> {
    let id = new.id;
    let mut changes = Vec::new();
    if old.name != new.name {
        changes.push(format!("task {id} renamed from \"{}\" to \"{}\"", old.name, new.name));
    }
    let fields: [(&str, bool); 6] = [
        ("prompt", old.prompt != new.prompt),
        ("files", old.files != new.files),
        ("acceptance", old.acceptance != new.acceptance),
        ("verify", old.verify != new.verify),
        ("run", old.run != new.run),
        ("allow_empty", old.allow_empty != new.allow_empty),
    ];
    let changed: Vec<&str> = fields.iter().filter(|(_, changed)| *changed).map(|(name, _)| *name).collect();
    if !changed.is_empty() {
        changes.push(format!("task {id} ({}): {} changed", new.name, changed.join(", ")));
    }
    changes
}
