//! A hook decision and the JSON Claude Code reads. Most restrictive wins: deny > ask > a
//! rewritten allow > allow > no decision. A rewrite (`updatedInput`: the Bash command wrapped in
//! `wt sandbox`) survives every combination but a deny: combined with an ask, the person is asked
//! about the rewritten call, so no approval ever lets the unwrapped command run.

use serde::Serialize;
use serde_json::Value;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    None,
    Allow(String),
    Ask(String),
    Deny(String),
    /// Allow (or ask, when `ask`) with the tool input replaced by `input`.
    Rewrite {
        reason: String,
        input: Value,
        ask: bool,
    },
}

impl Decision {
    fn rank(&self) -> u8 {
        match self {
            Decision::None => 0,
            Decision::Allow(_) => 1,
            Decision::Rewrite { ask: false, .. } => 2,
            Decision::Ask(_) => 3,
            Decision::Rewrite { ask: true, .. } => 4,
            Decision::Deny(_) => 5,
        }
    }

    /// The more restrictive of the two (the first on a tie); an ask keeps a rewrite's input.
    pub fn and(self, other: Decision) -> Decision {
        match (self, other) {
            (Decision::Ask(reason), Decision::Rewrite { input, .. })
            | (Decision::Rewrite { input, .. }, Decision::Ask(reason)) => {
                Decision::Rewrite { reason, input, ask: true }
            }
            (first, second) => {
                if second.rank() > first.rank() {
                    second
                } else {
                    first
                }
            }
        }
    }

    pub fn is_deny(&self) -> bool {
        matches!(self, Decision::Deny(_))
    }

    /// The hook's stdout: PreToolUse decision JSON, or nothing for no decision.
    pub fn to_json(&self) -> Option<String> {
        let (decision, reason, updated_input) = match self {
            Decision::None => return None,
            Decision::Allow(reason) => ("allow", reason, None),
            Decision::Ask(reason) => ("ask", reason, None),
            Decision::Deny(reason) => ("deny", reason, None),
            Decision::Rewrite { reason, input, ask } => {
                (if *ask { "ask" } else { "allow" }, reason, Some(input))
            }
        };
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Specific<'a> {
            hook_event_name: &'static str,
            permission_decision: &'a str,
            permission_decision_reason: &'a str,
            #[serde(skip_serializing_if = "Option::is_none")]
            updated_input: Option<&'a Value>,
        }
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Output<'a> {
            hook_specific_output: Specific<'a>,
        }
        let output = Output {
            hook_specific_output: Specific {
                hook_event_name: "PreToolUse",
                permission_decision: decision,
                permission_decision_reason: reason,
                updated_input,
            },
        };
        serde_json::to_string(&output).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rewrite() -> Decision {
        Decision::Rewrite { reason: "wrapped".into(), input: serde_json::json!({"command": "x"}), ask: false }
    }

    #[test]
    fn a_rewrite_outranks_allow_and_survives_an_ask_but_not_a_deny() {
        assert_eq!(Decision::Allow("a".into()).and(rewrite()), rewrite());
        assert_eq!(rewrite().and(Decision::Allow("a".into())), rewrite());
        assert_eq!(rewrite().and(Decision::None), rewrite());
        let asked = rewrite().and(Decision::Ask("a person decides".into()));
        assert!(
            matches!(&asked, Decision::Rewrite { ask: true, reason, .. } if reason == "a person decides")
        );
        assert!(rewrite().and(Decision::Deny("no".into())).is_deny());
    }

    #[test]
    fn a_rewrite_prints_the_updated_input_with_its_permission() {
        let json: Value = serde_json::from_str(&rewrite().to_json().unwrap()).unwrap();
        let specific = &json["hookSpecificOutput"];
        assert_eq!(specific["permissionDecision"], "allow");
        assert_eq!(specific["updatedInput"]["command"], "x");
        let plain: Value = serde_json::from_str(&Decision::Allow("a".into()).to_json().unwrap()).unwrap();
        assert!(plain["hookSpecificOutput"].get("updatedInput").is_none());
    }
}
