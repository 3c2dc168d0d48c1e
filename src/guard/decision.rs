//! A hook decision and the JSON Claude Code reads. Most restrictive wins: deny > ask > allow >
//! no decision.

use serde::Serialize;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    None,
    Allow(String),
    Ask(String),
    Deny(String),
}

impl Decision {
    fn rank(&self) -> u8 {
        match self {
            Decision::None => 0,
            Decision::Allow(_) => 1,
            Decision::Ask(_) => 2,
            Decision::Deny(_) => 3,
        }
    }

    /// The more restrictive of the two (the first on a tie).
    pub fn and(self, other: Decision) -> Decision {
        if other.rank() > self.rank() { other } else { self }
    }

    pub fn is_deny(&self) -> bool {
        matches!(self, Decision::Deny(_))
    }

    /// The hook's stdout: PreToolUse decision JSON, or nothing for no decision.
    pub fn to_json(&self) -> Option<String> {
        let (decision, reason) = match self {
            Decision::None => return None,
            Decision::Allow(reason) => ("allow", reason),
            Decision::Ask(reason) => ("ask", reason),
            Decision::Deny(reason) => ("deny", reason),
        };
        #[derive(Serialize)]
        #[serde(rename_all = "camelCase")]
        struct Specific<'a> {
            hook_event_name: &'static str,
            permission_decision: &'a str,
            permission_decision_reason: &'a str,
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
            },
        };
        serde_json::to_string(&output).ok()
    }
}
