//! The command line that runs a Bash call inside `wt sandbox` (the plugin's workers, which wt
//! cannot sandbox as a whole): `'<wt>' sandbox --root '<worktree>' [--branch '<b>'] [--rules
//! '<file>'] -- bash -c '<the original command>'`. Every piece is single-quoted, so the original
//! command reaches `bash -c` byte for byte, whatever it holds.

use std::path::Path;

pub fn sandboxed(
    command: &str,
    exe: &Path,
    root: &Path,
    branch: Option<&str>,
    rules: Option<&Path>,
) -> String {
    let mut line =
        format!("{} sandbox --root {}", quote(&exe.to_string_lossy()), quote(&root.to_string_lossy()));
    if let Some(branch) = branch {
        line.push_str(&format!(" --branch {}", quote(branch)));
    }
    if let Some(rules) = rules {
        line.push_str(&format!(" --rules {}", quote(&rules.to_string_lossy())));
    }
    line.push_str(&format!(" -- bash -c {}", quote(command)));
    line
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
        let line = sandboxed(
            "echo 'it''s' \"$HOME\" && git status",
            Path::new("/opt/wt bin/wt"),
            Path::new("/r/wt"),
            Some("feat/x"),
            Some(Path::new("/r/rules.toml")),
        );
        assert_eq!(
            line,
            r#"'/opt/wt bin/wt' sandbox --root '/r/wt' --branch 'feat/x' --rules '/r/rules.toml' -- bash -c 'echo '\''it'\'''\''s'\'' "$HOME" && git status'"#
        );
        let script = crate::guard::shell::parse(&line).unwrap();
        let crate::guard::shell::Node::Command(command) = &script.items[0].node else { panic!() };
        let words: Vec<String> = command.words.iter().map(|w| w.literal().unwrap()).collect();
        assert_eq!(words.last().unwrap(), "echo 'it''s' \"$HOME\" && git status");
    }
}
