//! What setting a variable does, however it is set (`X=…`, `export`, `declare`, `env X=…`,
//! `read X`, `for X in`): git's location and configuration variables are refused; variables
//! programs run as commands, and the files shells read at start, must be followed too.

use super::arg::Arg;
use super::checker::Checker;
use super::state::{State, Value};

/// The variables that point git at another repository, index or object store, or that load
/// configuration (`GIT_CONFIG`, `GIT_CONFIG_COUNT`/`_KEY_n`/`_VALUE_n`, `GIT_CONFIG_PARAMETERS`).
const GIT_LOCATIONS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_EXEC_PATH",
    "GIT_TEMPLATE_DIR",
];

/// Variables whose value a program runs as a shell command.
const COMMAND_VARIABLES: &[&str] = &[
    "GIT_PAGER",
    "PAGER",
    "MANPAGER",
    "GIT_EDITOR",
    "EDITOR",
    "VISUAL",
    "GIT_SEQUENCE_EDITOR",
    "GIT_EXTERNAL_DIFF",
    "GIT_SSH",
    "GIT_SSH_COMMAND",
    "GIT_ASKPASS",
    "SSH_ASKPASS",
    "GIT_PROXY_COMMAND",
    "PROMPT_COMMAND",
    "LESSOPEN",
    "LESSCLOSE",
];

impl Checker<'_> {
    /// The effects of `name` being set to `value` in this shell or a command's environment.
    pub fn environment(&mut self, name: &str, value: &Value, state: &State) {
        let root = self.root();
        if name.starts_with("GIT_CONFIG") || GIT_LOCATIONS.contains(&name) {
            self.deny(format!(
                "{name} points git at another repository or configuration than the worktree {root}'s; run git \
                 inside the worktree without it"
            ));
            return;
        }
        match name {
            "CARGO_TARGET_DIR" | "CARGO_BUILD_TARGET_DIR" => {
                let target =
                    Arg { value: value.known().map(str::to_owned), shown: format!("${name}"), glob: false };
                self.write_target(&format!("{name}="), &target, state);
            }
            // A file inside the worktree is the project's own, as a script it runs would be.
            "BASH_ENV" | "ENV" if self.inside(value.known(), state) => {}
            "BASH_ENV" | "ENV" => {
                self.unclear(format!("{name} makes later shells run a file wt does not follow"));
            }
            "NODE_OPTIONS" if value.known().is_none_or(|v| v.contains("data:")) => {
                self.unclear(format!(
                    "{name} may give node code to run (`--import data:…`), which wt does not read"
                ));
            }
            "LESSKEY" | "LESSKEYIN" | "LESSKEY_CONTENT" => {
                self.unclear(format!(
                    "{name} gives less key bindings (and settings such as LESSOPEN) wt does not follow"
                ));
            }
            "PS0" | "PS1" | "PS2" | "PS3" | "PS4" | "SHELLOPTS" | "BASHOPTS" => {
                self.unclear(format!(
                    "{name} changes what bash runs or expands later; wt does not follow it"
                ));
            }
            _ if COMMAND_VARIABLES.contains(&name) => match value.known() {
                Some(command) => {
                    self.nested(command, state.clone());
                }
                None => self.unclear(format!("{name} names a command wt cannot know before it runs")),
            },
            _ => {}
        }
    }
}
