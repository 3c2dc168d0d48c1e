//! What `wt poll` compares: a [`Snapshot`] of one branch — its base (name, tip, change request
//! state), its change request (state, unresolved review threads) and the forge's comments and
//! checks — and the [`Event`]s between the snapshot taken when the poll started and a later one.

use serde::Serialize;

use crate::forge::{self, Check, CheckState, Comment};
use crate::spice::ChangeStatus;

/// One branch as a poll sees it at one moment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Snapshot {
    /// The branch git-spice stacks it on.
    pub base: Option<String>,
    /// The base's commit here (None: the base branch is gone).
    pub base_tip: Option<String>,
    /// The state of the base's change request, when it has one and the forge said.
    pub base_status: Option<ChangeStatus>,
    /// git-spice: the base moved since the branch was stacked on it.
    pub needs_restack: bool,
    pub number: Option<u64>,
    pub url: Option<String>,
    pub status: Option<ChangeStatus>,
    /// Unresolved review threads (git-spice's count).
    pub unresolved: Option<u32>,
    /// The forge's comments but git-spice's navigation comments; None without a forge to ask.
    pub comments: Option<Vec<Comment>>,
    /// The CI checks; None when there are none to read.
    pub checks: Option<Vec<Check>>,
}

impl Snapshot {
    pub fn ci(&self) -> Option<CheckState> {
        self.checks.as_deref().and_then(forge::overall)
    }

    /// The checks as a comparable list: (name, state), sorted.
    fn check_states(&self) -> Vec<(String, CheckState)> {
        let mut states: Vec<(String, CheckState)> =
            self.checks.iter().flatten().map(|check| (check.name.clone(), check.state)).collect();
        states.sort_by(|a, b| a.0.cmp(&b.0));
        states
    }
}

/// How the base changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BaseChange {
    /// The base branch has other commits now (someone committed on it, or the trunk was
    /// updated): the branch needs a rebase.
    Moved,
    /// The base's change request was merged: the branch belongs on the base's base now.
    Merged,
    /// The base's change request was closed without merging.
    Closed,
    /// git-spice stacks the branch on another base now.
    Retargeted,
    /// The base branch is gone.
    Deleted,
}

/// What a poll returns for: one of these happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    BaseUpdated {
        base: String,
        reason: BaseChange,
        detail: String,
    },
    Merged,
    Closed,
    /// Comments that were not there when the poll started (all of them without a forge that
    /// gives bodies: then `unresolved` says how many review threads are open).
    ReviewComments {
        comments: Vec<Comment>,
        unresolved: Option<u32>,
    },
    /// Every check ended and none failed.
    CiPassed {
        checks: Vec<Check>,
    },
    /// The failing checks (the others may still run).
    CiFailure {
        checks: Vec<Check>,
    },
}

impl Event {
    /// What the worker of `name` does about it, in a sentence that stands on its own.
    pub fn next_step(&self, name: &str) -> String {
        let wt = crate::process::own_name();
        let poll_again = format!("then run `{wt} poll {name}` again in the background");
        match self {
            Event::Merged => format!(
                "the change request of {name} is merged, so the work on it is done: tell whoever spawned you \
                 (they run `{wt} sync` or `{wt} cleanup {name}`)"
            ),
            Event::Closed => format!(
                "the change request of {name} was closed without merging: tell whoever spawned you and wait for \
                 what they decide"
            ),
            Event::BaseUpdated { reason: BaseChange::Closed, base, .. } => format!(
                "the change request of {base}, which {name} is stacked on, was closed without merging: tell whoever \
                 spawned you"
            ),
            Event::BaseUpdated { .. } => format!(
                "bring {name} up to date with `{wt} rebase {name}` (onto the next base that is still there when its \
                 base merged), check it still works, `{wt} push {name}`, {poll_again}"
            ),
            Event::ReviewComments { .. } => format!(
                "address each comment with commits in the worktree of {name}, `{wt} push {name}`, {poll_again}"
            ),
            Event::CiFailure { .. } => format!(
                "read the failing checks' output (their links), fix the cause with commits, `{wt} push {name}`, \
                 {poll_again}"
            ),
            Event::CiPassed { .. } => format!("CI passed; {poll_again} to wait for reviews"),
        }
    }
}

/// What already asks for action when a poll starts: the change request merged or closed, the
/// base merged, or the branch due a rebase. Reported at once: waiting would only time out.
pub fn at_start(now: &Snapshot) -> Vec<Event> {
    let mut events = Vec::new();
    match now.status {
        Some(ChangeStatus::Merged) => events.push(Event::Merged),
        Some(ChangeStatus::Closed) => events.push(Event::Closed),
        _ => {}
    }
    if let Some(base) = &now.base {
        if now.base_status == Some(ChangeStatus::Merged) {
            let detail = format!("{base}'s change request was merged");
            events.push(Event::BaseUpdated { base: base.clone(), reason: BaseChange::Merged, detail });
        } else if now.needs_restack {
            let detail = format!("{base} moved since the branch was stacked on it");
            events.push(Event::BaseUpdated { base: base.clone(), reason: BaseChange::Moved, detail });
        }
    }
    events
}

/// What changed from `before` to `now`, the most pressing first: the change request merged or
/// closed, the base, failing CI, new comments, passing CI.
pub fn between(before: &Snapshot, now: &Snapshot) -> Vec<Event> {
    let mut events = Vec::new();
    if now.status != before.status {
        match now.status {
            Some(ChangeStatus::Merged) => events.push(Event::Merged),
            Some(ChangeStatus::Closed) => events.push(Event::Closed),
            _ => {}
        }
    }
    events.extend(base_change(before, now));
    let checks_changed = now.check_states() != before.check_states();
    if checks_changed && now.ci() == Some(CheckState::Failed) {
        let failing =
            now.checks.iter().flatten().filter(|c| c.state == CheckState::Failed).cloned().collect();
        events.push(Event::CiFailure { checks: failing });
    }
    if let Some(comments) = new_comments(before, now) {
        events.push(comments);
    }
    if checks_changed && now.ci() == Some(CheckState::Passed) {
        events.push(Event::CiPassed { checks: now.checks.clone().unwrap_or_default() });
    }
    events
}

fn base_change(before: &Snapshot, now: &Snapshot) -> Option<Event> {
    let base = now.base.clone()?;
    let event = |reason, detail| Some(Event::BaseUpdated { base: base.clone(), reason, detail });
    if before.base.as_ref() != Some(&base) {
        let from = before.base.as_deref().unwrap_or("no base");
        return event(BaseChange::Retargeted, format!("git-spice moved the branch from {from} onto {base}"));
    }
    if now.base_status != before.base_status {
        match now.base_status {
            Some(ChangeStatus::Merged) => {
                return event(BaseChange::Merged, format!("{base}'s change request was merged"));
            }
            Some(ChangeStatus::Closed) => {
                return event(
                    BaseChange::Closed,
                    format!("{base}'s change request was closed without merging"),
                );
            }
            _ => {}
        }
    }
    match (&before.base_tip, &now.base_tip) {
        (Some(_), None) => event(BaseChange::Deleted, format!("the branch {base} is gone")),
        (before_tip, Some(tip)) if before_tip.as_ref() != Some(tip) => {
            let short = |sha: &str| sha.get(..10).unwrap_or(sha).to_owned();
            let from = before_tip.as_deref().map_or("nothing".to_owned(), short);
            event(BaseChange::Moved, format!("{base} moved from {from} to {}", short(tip)))
        }
        _ => None,
    }
}

fn new_comments(before: &Snapshot, now: &Snapshot) -> Option<Event> {
    match &now.comments {
        Some(comments) => {
            let seen: Vec<&str> = before.comments.iter().flatten().map(|c| c.id.as_str()).collect();
            let new: Vec<Comment> =
                comments.iter().filter(|c| !seen.contains(&c.id.as_str())).cloned().collect();
            (!new.is_empty()).then_some(Event::ReviewComments { comments: new, unresolved: now.unresolved })
        }
        // No bodies to read: git-spice's count of unresolved review threads is all there is.
        None => (now.unresolved.unwrap_or(0) > before.unresolved.unwrap_or(0))
            .then_some(Event::ReviewComments { comments: Vec::new(), unresolved: now.unresolved }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn open() -> Snapshot {
        Snapshot {
            base: Some("a".into()),
            base_tip: Some("1111111111aa".into()),
            base_status: Some(ChangeStatus::Open),
            number: Some(2),
            status: Some(ChangeStatus::Open),
            unresolved: Some(0),
            comments: Some(Vec::new()),
            ..Snapshot::default()
        }
    }

    fn check(name: &str, state: CheckState) -> Check {
        Check { name: name.into(), state, link: Some(format!("https://ci/{name}")) }
    }

    fn kinds(events: &[Event]) -> Vec<String> {
        events
            .iter()
            .map(|e| serde_json::to_value(e).unwrap()["event"].as_str().unwrap().to_owned())
            .collect()
    }

    #[test]
    fn nothing_changed_is_no_event() {
        assert_eq!(between(&open(), &open()), []);
        assert_eq!(at_start(&open()), []);
    }

    #[test]
    fn a_merged_base_and_a_moved_base_are_base_updated_with_the_reason() {
        let merged = Snapshot { base_status: Some(ChangeStatus::Merged), ..open() };
        let events = between(&open(), &merged);
        assert_eq!(kinds(&events), ["base_updated"]);
        assert!(
            matches!(&events[0], Event::BaseUpdated { reason: BaseChange::Merged, base, .. } if base == "a")
        );
        let moved = Snapshot { base_tip: Some("2222222222bb".into()), ..open() };
        assert!(matches!(
            &between(&open(), &moved)[0],
            Event::BaseUpdated { reason: BaseChange::Moved, detail, .. } if detail == "a moved from 1111111111 to 2222222222"
        ));
        let onto_main = Snapshot { base: Some("main".into()), ..open() };
        assert!(matches!(
            &between(&open(), &onto_main)[0],
            Event::BaseUpdated { reason: BaseChange::Retargeted, .. }
        ));
        let gone = Snapshot { base_tip: None, ..open() };
        assert!(matches!(
            &between(&open(), &gone)[0],
            Event::BaseUpdated { reason: BaseChange::Deleted, .. }
        ));
    }

    #[test]
    fn new_comments_are_reported_with_their_bodies_and_old_ones_are_not() {
        let old = Comment { id: "4".into(), body: "old".into() };
        let before = Snapshot { comments: Some(vec![old.clone()]), ..open() };
        let new = Comment { id: "5".into(), body: "please rename foo".into() };
        let now = Snapshot { comments: Some(vec![old, new.clone()]), ..open() };
        assert_eq!(
            between(&before, &now),
            [Event::ReviewComments { comments: vec![new], unresolved: Some(0) }]
        );
        let counted = Snapshot { comments: None, unresolved: Some(1), ..open() };
        let without_forge = Snapshot { comments: None, ..open() };
        assert_eq!(
            between(&without_forge, &counted),
            [Event::ReviewComments { comments: vec![], unresolved: Some(1) }],
            "without bodies, a new unresolved review thread still counts"
        );
    }

    #[test]
    fn ci_fails_as_soon_as_a_check_fails_and_passes_when_all_ended() {
        use CheckState::*;
        let with = |checks: Vec<Check>| Snapshot { checks: Some(checks), ..open() };
        let pending = with(vec![check("lint", Pending), check("test", Pending)]);
        assert_eq!(between(&open(), &pending), [], "pending is no event");
        let failing = with(vec![check("lint", Pending), check("test", Failed)]);
        assert_eq!(between(&pending, &failing), [Event::CiFailure { checks: vec![check("test", Failed)] }]);
        let passed = with(vec![check("lint", Passed), check("test", Passed)]);
        assert_eq!(kinds(&between(&pending, &passed)), ["ci_passed"]);
        assert_eq!(between(&passed, &passed), [], "the same result is not news");
        assert_eq!(
            kinds(&between(&failing, &with(vec![check("lint", Failed), check("test", Failed)]))),
            ["ci_failure"]
        );
    }

    #[test]
    fn several_changes_come_most_pressing_first() {
        let now = Snapshot {
            status: Some(ChangeStatus::Merged),
            comments: Some(vec![Comment { id: "9".into(), body: "lgtm".into() }]),
            checks: Some(vec![check("test", CheckState::Passed)]),
            ..open()
        };
        assert_eq!(kinds(&between(&open(), &now)), ["merged", "review_comments", "ci_passed"]);
    }

    #[test]
    fn what_already_calls_for_action_is_reported_at_start() {
        let merged = Snapshot { status: Some(ChangeStatus::Merged), ..open() };
        assert_eq!(at_start(&merged), [Event::Merged]);
        let base_merged = Snapshot { base_status: Some(ChangeStatus::Merged), ..open() };
        assert_eq!(kinds(&at_start(&base_merged)), ["base_updated"]);
        let due = Snapshot { needs_restack: true, ..open() };
        assert!(matches!(&at_start(&due)[0], Event::BaseUpdated { reason: BaseChange::Moved, .. }));
        let failed = Snapshot { checks: Some(vec![check("test", CheckState::Failed)]), ..open() };
        assert_eq!(at_start(&failed), [], "a CI result from before the poll is its starting point");
    }

    #[test]
    fn events_serialize_with_their_name_in_event() {
        let json = serde_json::to_value(Event::CiFailure { checks: vec![check("test", CheckState::Failed)] })
            .unwrap();
        assert_eq!(json["event"], "ci_failure");
        assert_eq!(json["checks"][0]["state"], "failed");
        assert_eq!(json["checks"][0]["link"], "https://ci/test");
        assert_eq!(serde_json::to_value(Event::Merged).unwrap(), serde_json::json!({"event": "merged"}));
    }
}
