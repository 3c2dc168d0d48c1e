//! git-spice's branch graph, read live (`git-spice log short --all [--cr-status --cr-comments]
//! --json`, run in the main checkout): the trunk, each tracked branch's base and dependents, its
//! change request and whether it needs a restack. wt keeps no copy: every command reads it again.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{TeamError, TeamRepo};
use crate::spice::{Change, LoggedBranch};

/// Whether change requests' states and comments were asked of the forge, and what came back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ChangesRead {
    /// Not asked: change requests have their id and URL only.
    NotAsked,
    /// Asked through git-spice, which leaves out (and warns about) a state the forge did not give
    /// (no forge for the remote, not logged in, unreachable): such a state is unknown.
    Asked,
    /// git-spice failed when asked; the graph was read again without the forge.
    Unavailable,
}

#[derive(Debug, Clone)]
pub struct Graph {
    trunk: Option<String>,
    /// Every tracked branch but the trunk, by name.
    branches: BTreeMap<String, LoggedBranch>,
    /// The branches on each base (from each branch's `down`), sorted.
    dependents: BTreeMap<String, Vec<String>>,
    changes: ChangesRead,
}

impl Graph {
    /// The graph now; empty when git-spice does not know the repository yet.
    pub(super) fn read(team: &TeamRepo, with_changes: bool) -> Result<Graph, TeamError> {
        if !team.repo().reference_exists("refs/spice/data")? {
            let changes = if with_changes { ChangesRead::Asked } else { ChangesRead::NotAsked };
            return Ok(Graph::from_log(Vec::new(), changes));
        }
        let root = team.repo().root();
        if !with_changes {
            return Ok(Graph::from_log(team.spice().log_all(root)?, ChangesRead::NotAsked));
        }
        match team.spice().log_all_with_changes(root) {
            Ok(log) => Ok(Graph::from_log(log, ChangesRead::Asked)),
            // The forge is an extra: a list never fails for want of it.
            Err(_) => Ok(Graph::from_log(team.spice().log_all(root)?, ChangesRead::Unavailable)),
        }
    }

    pub fn from_log(log: Vec<LoggedBranch>, changes: ChangesRead) -> Graph {
        let mut trunk = None;
        let mut branches = BTreeMap::new();
        let mut dependents: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for branch in log {
            match &branch.down {
                None => trunk = Some(branch.name.clone()),
                Some(down) => {
                    dependents.entry(down.name.clone()).or_default().push(branch.name.clone());
                    branches.insert(branch.name.clone(), branch);
                }
            }
        }
        dependents.values_mut().for_each(|names| names.sort());
        Graph { trunk, branches, dependents, changes }
    }

    /// The trunk git-spice was given (`repo init --trunk`); None before it knows the repository.
    pub fn trunk(&self) -> Option<&str> {
        self.trunk.as_deref()
    }

    pub fn changes_read(&self) -> ChangesRead {
        self.changes
    }

    /// Whether git-spice tracks `name` as a branch with a base (the trunk is not one).
    pub fn is_tracked(&self, name: &str) -> bool {
        self.branches.contains_key(name)
    }

    /// The branch `name` is stacked on.
    pub fn base(&self, name: &str) -> Option<&str> {
        self.branches.get(name)?.down.as_ref().map(|down| down.name.as_str())
    }

    /// Whether `name`'s base moved since it was stacked on it.
    pub fn needs_restack(&self, name: &str) -> bool {
        self.branches.get(name).and_then(|b| b.down.as_ref()).is_some_and(|down| down.needs_restack)
    }

    /// The branches stacked directly on `name` (the trunk included), sorted.
    pub fn dependents(&self, name: &str) -> &[String] {
        self.dependents.get(name).map_or(&[], Vec::as_slice)
    }

    pub fn change(&self, name: &str) -> Option<&Change> {
        self.branches.get(name)?.change.as_ref()
    }

    pub fn branch(&self, name: &str) -> Option<&LoggedBranch> {
        self.branches.get(name)
    }

    /// How far up the stack `name` is: 1 on the trunk, 2 on a branch that is on the trunk, …;
    /// None for a branch whose bases do not lead to the trunk.
    pub fn depth(&self, name: &str) -> Option<usize> {
        let mut depth = 0;
        let mut current = name;
        while Some(current) != self.trunk() {
            current = self.base(current)?;
            depth += 1;
            if depth > self.branches.len() {
                return None;
            }
        }
        Some(depth)
    }

    /// The bases below `name`, nearest first, down to (not including) the trunk.
    pub fn downstack(&self, name: &str) -> Vec<String> {
        let mut below = Vec::new();
        let mut current = name;
        while let Some(base) = self.base(current) {
            if Some(base) == self.trunk() || below.iter().any(|b| b == base) {
                break;
            }
            below.push(base.to_owned());
            current = base;
        }
        below
    }

    /// Everything stacked above `name`, each branch after its base (breadth first).
    pub fn upstack(&self, name: &str) -> Vec<String> {
        let mut order: Vec<String> = Vec::new();
        let mut next = 0;
        order.extend(self.dependents(name).iter().cloned());
        while next < order.len() {
            let above = self.dependents(&order[next]).to_vec();
            order.extend(above.into_iter().filter(|b| b != name));
            next += 1;
            if order.len() > self.branches.len() {
                break;
            }
        }
        order
    }

    /// The tracked branches `keep` selects, in topological order: a depth-first walk from the
    /// trunk, each branch before the ones on it, siblings by name.
    pub fn topological(&self, keep: impl Fn(&str) -> bool) -> Vec<String> {
        let mut order = Vec::new();
        let mut stack: Vec<&str> = Vec::new();
        if let Some(trunk) = self.trunk() {
            stack.extend(self.dependents(trunk).iter().rev().map(String::as_str));
        }
        while let Some(branch) = stack.pop() {
            if order.len() > self.branches.len() {
                break;
            }
            if keep(branch) {
                order.push(branch.to_owned());
            }
            stack.extend(self.dependents(branch).iter().rev().map(String::as_str));
        }
        order
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(lines: &str) -> Graph {
        let log = lines.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
        Graph::from_log(log, ChangesRead::NotAsked)
    }

    #[test]
    fn bases_dependents_depths_and_order_come_from_downs() {
        let g = graph(
            r#"{"name":"c","down":{"name":"b"}}
{"name":"a","down":{"name":"main"}}
{"name":"main","ups":[{"name":"a"}]}
{"name":"b2","down":{"name":"a","needsRestack":true}}
{"name":"b","down":{"name":"a"}}"#,
        );
        assert_eq!(g.trunk(), Some("main"));
        assert_eq!(g.base("c"), Some("b"));
        assert_eq!(g.dependents("a"), ["b", "b2"]);
        assert!(g.needs_restack("b2") && !g.needs_restack("b"));
        assert_eq!((g.depth("a"), g.depth("c"), g.depth("main")), (Some(1), Some(3), Some(0)));
        assert_eq!(g.downstack("c"), ["b", "a"]);
        assert_eq!(g.upstack("a"), ["b", "b2", "c"]);
        assert_eq!(g.topological(|_| true), ["a", "b", "c", "b2"]);
        assert_eq!(g.topological(|b| b != "b"), ["a", "c", "b2"]);
        assert!(g.is_tracked("c") && !g.is_tracked("main"));
    }
}
