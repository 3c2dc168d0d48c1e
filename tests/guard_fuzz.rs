//! No input makes the guard panic or run long: random command lines built from shell-significant
//! pieces go through the policy in-process by the thousand, and some through the binary, which
//! must exit 0 or 2 — never 1, which Claude Code treats as "let it run".

use std::path::Path;
use std::process::{Command, Stdio};

use spectacular::guard::{Verdict, Worktree, check_bash};

#[rustfmt::skip]
const PIECES: &[&str] = &[
    " ", " ", " ", "git", "push", "cd", "..", "/", "/tmp", "rm", "-rf", "echo", "x", ">", ">>", "<", "<<", "EOF",
    "\n", "&&", "||", ";", "|", "&", "(", ")", "{", "}", "$(", "`", "'", "\"", "\\", "$X", "${Y:-/}", "~", "*", "#",
    "=", "bash", "-c", "eval", "env", "sudo", "xargs", "find", "-exec", "\\;", "tee", "cp", "mv", "sed", "-i",
    "2>&1", "<<<", "<(", ">(", "((", "))", "if", "then", "fi", "for", "in", "do", "done", "case", "esac", "gs",
    "gh", "pr", "$((", "${X:-", "$'\\x2f'", "$\"", "{a,b}", "[[", "]]", ";;", "in", "f()", "while", "until",
    "function", "export", "declare", "-n", "read", "source", "trap", "EXIT", "|", "sh", "-s", "-o", "pipefail",
    "sed", "w /tmp/x", "curl", "-fsSLo", "tar", "-C", "make", "cargo", "--manifest-path=/x", "GIT_DIR=/x",
    "alias.x=!sh", "checkout", "-", "switch", "--", "api", "-XDELETE", "break", "continue", "exit", "<<'E'", "E",
    "*", "?", "~/x", "$HOME", "IFS=/", "CDPATH=/", "ln", "-s", "é", "→", "-é", "--é=x", "\u{0}", "coproc", "((",
    "$[", "]", "{1..3}", "\\",
];

/// Words of plausible commands, so that many lines parse and reach the policy.
#[rustfmt::skip]
const WORDS: &[&str] = &[
    "git", "push", "status", "checkout", "-b", "x", "main", "--", "src/lib.rs", "cd", "..", "/tmp", "src", "rm",
    "-rf", "$X", "\"$Y\"", "~", "cp", "a", "/etc/x", "mv", "tee", "-a", "sed", "-i", "'s/a/b/w /tmp/o'", "curl",
    "-o", "out", "tar", "-xf", "t.tgz", "-C", "make", "ln", "-s", "gh", "api", "-XDELETE", "bash", "-c",
    "'git push'", "eval", "export", "GIT_DIR=/x", "X=/tmp", "Y=src", "find", ".", "-delete", "xargs", "env", "sudo",
    "timeout", "5",
];
const OPERATORS: &[&str] = &[" && ", " || ", "; ", " | ", "\n", " & "];

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

    fn command_line(&mut self) -> String {
        let mut line = String::new();
        for i in 0..1 + self.next() % 4 {
            if i > 0 {
                line.push_str(OPERATORS[self.next() % OPERATORS.len()]);
            }
            let words: Vec<&str> =
                (0..1 + self.next() % 6).map(|_| WORDS[self.next() % WORDS.len()]).collect();
            line.push_str(&words.join(" "));
        }
        line
    }
}

#[test]
fn random_command_lines_never_panic_the_policy() {
    let dir = tempfile::tempdir().unwrap();
    let wt = Worktree::new(dir.path());
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let mut denied = 0;
    let mut unclear = 0;
    for round in 0..20_000 {
        let line = if round % 2 == 0 { rng.line() } else { rng.command_line() };
        let started = std::time::Instant::now();
        let verdict = std::panic::catch_unwind(|| check_bash(&line, dir.path(), &wt, Some("b")))
            .unwrap_or_else(|_| panic!("the guard panicked on {line:?}"));
        assert!(
            started.elapsed() < std::time::Duration::from_secs(2),
            "{line:?} took {:?}",
            started.elapsed()
        );
        denied += usize::from(verdict.is_deny());
        unclear += usize::from(matches!(verdict, Verdict::Unclear(_)));
    }
    assert!(denied > 1_000, "the generator should produce plenty of refusals, got {denied}");
    assert!(unclear > 1_000, "and plenty of commands wt cannot follow, got {unclear}");
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
