//! No input makes the guard panic: random command lines built from shell-significant pieces go
//! through the policy in-process by the thousand, and some through the binary, which must exit
//! 0 or 2 — never 1, which Claude Code treats as "let it run".

use std::path::Path;
use std::process::{Command, Stdio};

use spectacular::guard::{Decision, Worktree, check_bash};

const PIECES: &[&str] = &[
    " ", " ", " ", "git", "push", "cd", "..", "/", "/tmp", "rm", "-rf", "echo", "x", ">", ">>", "<", "<<",
    "EOF", "\n", "&&", "||", ";", "|", "&", "(", ")", "{", "}", "$(", "`", "'", "\"", "\\", "$X", "${Y:-/}",
    "~", "*", "#", "=", "bash", "-c", "eval", "env", "sudo", "xargs", "find", "-exec", "\\;", "tee", "cp",
    "mv", "sed", "-i", "2>&1", "<<<", "<(", ">(", "((", "))", "if", "then", "fi", "for", "in", "do", "done",
    "case", "esac", "gs", "gh", "pr",
];

/// A small deterministic generator (xorshift), so a failure can be reproduced from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 as usize
    }

    fn line(&mut self) -> String {
        let len = 1 + self.next() % 24;
        (0..len).map(|_| PIECES[self.next() % PIECES.len()]).collect()
    }
}

#[test]
fn random_command_lines_never_panic_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let wt = Worktree::new(dir.path());
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut denied = 0;
    for _ in 0..20_000 {
        let line = rng.line();
        let decision = std::panic::catch_unwind(|| check_bash(&line, dir.path(), &wt, Some("b")))
            .unwrap_or_else(|_| panic!("the guard panicked on {line:?}"));
        denied += usize::from(decision.is_deny());
        assert!(!matches!(decision, Decision::None), "a Bash call always gets a decision: {line:?}");
    }
    assert!(denied > 1_000, "the generator should produce plenty of refusals, got {denied}");
}

#[test]
fn the_binary_exits_0_or_2_whatever_the_input() {
    let mut rng = Rng(0x0dd_ba11);
    for round in 0..150 {
        let input = match round % 3 {
            0 => serde_json::json!({"cwd": "/tmp", "tool_name": "Bash", "tool_input": {"command": rng.line()}}).to_string(),
            1 => serde_json::json!({"cwd": rng.line(), "tool_name": "Write", "tool_input": {"file_path": rng.line()}}).to_string(),
            _ => rng.line(),
        };
        let mut child = Command::new(env!("CARGO_BIN_EXE_wt"))
            .args(["guard", "--root", Path::new("/tmp/wt-fuzz-root").to_str().unwrap()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        use std::io::Write;
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
        let code = child.wait().unwrap().code();
        assert!(matches!(code, Some(0 | 2)), "exit {code:?} for {input:?}");
    }
}
