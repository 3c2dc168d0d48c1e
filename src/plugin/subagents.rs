//! The lives of the workers `wt step` hands out, as Claude Code reports them: SubagentStart (a
//! subagent starts on a slot's lease), each call the guard sees (a sign of life), SubagentStop
//! (it returned). Both hooks carry the subagent's type (`agent_type`: `spectacular:wt-worker-<k>`
//! for the plugin's workers) and its `agent_id`; other subagents of the session are none of wt's
//! business and are ignored. A return counts only from a subagent that started on the lease as it
//! is now (see `super::leases`).

use std::path::Path;

use serde::Deserialize;

use super::leases::{self, Return, ReturnedBy};
use super::workers::parse_worker_type;
use crate::guard;
use crate::store::{StateLayout, now};

/// The fields of a SubagentStart or SubagentStop hook input that wt reads (all optional, as
/// Claude Code documents them).
#[derive(Debug, Default, Deserialize)]
pub struct SubagentInput {
    pub agent_type: Option<String>,
    pub agent_id: Option<String>,
}

/// Where a worker's hook input (from a session in `cwd`) leads: its slot and the repository's
/// run state.
fn locate(input: &SubagentInput, cwd: &Path) -> Option<(StateLayout, usize)> {
    let slot = parse_worker_type(input.agent_type.as_deref()?)?;
    Some((StateLayout::new(&guard::common_dir(cwd)?), slot))
}

/// SubagentStart: a subagent started on the worker slot its type names; its lease is out until
/// that subagent returns (also when the lease had been given up for it, or it is a subagent
/// resumed later).
pub fn started(input: &SubagentInput, cwd: &Path) -> std::io::Result<()> {
    let Some((layout, slot)) = locate(input, cwd) else { return Ok(()) };
    let id = input.agent_id.clone().unwrap_or_default();
    leases::update(&layout, slot, |lease| {
        if !lease.agents.contains(&id) {
            lease.agents.push(id);
        }
        lease.started_at.get_or_insert_with(now);
        lease.returned = None;
        true
    })?;
    Ok(())
}

/// SubagentStop: a subagent of the worker slot returned. Its lease is back once every subagent
/// started on it has returned; a subagent that did not start on the lease as it is now (one
/// dispatched for an earlier hand-out of the slot) changes nothing.
pub fn returned(input: &SubagentInput, cwd: &Path) -> std::io::Result<()> {
    let Some((layout, slot)) = locate(input, cwd) else { return Ok(()) };
    let id = input.agent_id.clone().unwrap_or_default();
    leases::update(&layout, slot, |lease| {
        let Some(at) = lease.agents.iter().position(|agent| *agent == id) else { return false };
        lease.agents.remove(at);
        if lease.agents.is_empty() && lease.returned.is_none() {
            lease.returned = Some(Return { at: now(), how: ReturnedBy::SubagentStop });
        }
        true
    })?;
    Ok(())
}

/// A call of the worker `agent_type` reached the guard: a sign of life on its lease. Best effort
/// and cheap (it only sets a file's time): the guard's answer does not depend on it.
pub fn seen(agent_type: &str, common: &Path) {
    if let Some(slot) = parse_worker_type(agent_type) {
        let _ = leases::touch(&StateLayout::new(common), slot);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::TaskId;

    fn event(agent_id: &str) -> SubagentInput {
        SubagentInput { agent_type: Some("spectacular:wt-worker-2".into()), agent_id: Some(agent_id.into()) }
    }

    #[test]
    fn a_lease_is_back_when_every_subagent_started_on_it_has_returned() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join(".git")).unwrap();
        let layout = StateLayout::new(&dir.path().join(".git"));
        let task = TaskId { phase: 1, task: 1 };
        leases::lease(&layout, 2, &leases::Lease::hand_out("a11111", task, 1)).unwrap();
        let lease = || leases::update(&layout, 2, |_| false).unwrap().unwrap();

        started(&event("a1"), dir.path()).unwrap();
        // The orchestrator dispatched the same worker twice: both are in the worktree.
        started(&event("a2"), dir.path()).unwrap();
        returned(&event("a1"), dir.path()).unwrap();
        assert!(lease().is_out(), "a2 is still at work");
        returned(&event("zz"), dir.path()).unwrap();
        assert!(lease().is_out(), "a subagent that never started on it");
        returned(&event("a2"), dir.path()).unwrap();
        assert_eq!(lease().returned.map(|r| r.how), Some(ReturnedBy::SubagentStop));
        assert!(lease().started_at.is_some() && lease().agents.is_empty());

        started(&event("a2"), dir.path()).unwrap();
        assert!(lease().is_out(), "a subagent resumed later is out again");
        let other = SubagentInput { agent_type: Some("Explore".into()), agent_id: Some("a2".into()) };
        returned(&other, dir.path()).unwrap();
        assert!(lease().is_out(), "another type's return is not the worker's");
    }
}
