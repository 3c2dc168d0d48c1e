//! The command line that runs a Bash call inside `wt sandbox` (the plugin's workers, which wt
//! cannot sandbox as a whole): `'<wt>' sandbox --root '<worktree>' [--branch '<b>'] [--rules
//! '<file>'] [--tmp '<dir>' --objects '<dir>' | --check] -- bash -c '<the original command>'`.
//! Every piece is single-quoted, so the original command reaches `bash -c` byte for byte,
//! whatever it holds. A command of a run's task (with its task folders) is checked by the engine
//! when the task's turn ends; any other — a team agent's, one in a worktree made by hand — is
//! checked by `wt sandbox` itself when it ends (`--check`).

use std::path::Path;

/// The `wt sandbox` a command is wrapped in.
pub struct Sandbox<'a> {
    pub exe: &'a Path,
    pub root: &'a Path,
    pub branch: Option<&'a str>,
    pub rules: Option<&'a Path>,
    pub folders: Option<&'a TaskFolders>,
}

/// Where a task's temporary files and new git objects go (in its run's state).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskFolders {
    pub tmp: std::path::PathBuf,
    pub objects: std::path::PathBuf,
}

impl Sandbox<'_> {
    /// The command line that runs `command` with `bash -c` inside this sandbox.
    pub fn around(&self, command: &str) -> String {
        let path = |path: &Path| quote(&path.to_string_lossy());
        let mut line = format!("{} sandbox --root {}", path(self.exe), path(self.root));
        if let Some(branch) = self.branch {
            line.push_str(&format!(" --branch {}", quote(branch)));
        }
        if let Some(rules) = self.rules {
            line.push_str(&format!(" --rules {}", path(rules)));
        }
        match (self.folders, self.branch) {
            (Some(folders), _) => {
                line.push_str(&format!(" --tmp {} --objects {}", path(&folders.tmp), path(&folders.objects)))
            }
            (None, Some(_)) => line.push_str(" --check"),
            (None, None) => {}
        }
        line.push_str(&format!(" -- bash -c {}", quote(command)));
        line
    }
}

/// `text` as one shell word: single quotes, with each `'` written as `'\''`.
pub fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_original_command_survives_quoting_byte_for_byte() {
        let sandbox = Sandbox {
            exe: Path::new("/opt/wt bin/wt"),
            root: Path::new("/r/wt"),
            branch: Some("feat/x"),
            rules: Some(Path::new("/r/rules.toml")),
            folders: None,
        };
        let line = sandbox.around("echo 'it''s' \"$HOME\" && git status");
        assert_eq!(
            line,
            r#"'/opt/wt bin/wt' sandbox --root '/r/wt' --branch 'feat/x' --rules '/r/rules.toml' --check -- bash -c 'echo '\''it'\'''\''s'\'' "$HOME" && git status'"#
        );
        let script = crate::guard::shell::parse(&line).unwrap();
        let crate::guard::shell::Node::Command(command) = &script.items[0].node else { panic!() };
        let words: Vec<String> = command.words.iter().map(|w| w.literal().unwrap()).collect();
        assert_eq!(words.last().unwrap(), "echo 'it''s' \"$HOME\" && git status");
    }
}
