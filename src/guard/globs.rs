//! A write to a glob (`rm -f *.o`, `touch src/*.rs`): the shell writes whatever matches. That
//! stays inside the worktree when the folder before the pattern is inside, the pattern is in
//! the last component, cannot match `.git` or `..` (it does not start with `.` or `[`), and no
//! symlink in that folder leads out. Anything else is not followed.

use std::path::Path;

use super::arg::Arg;
use super::bash::Checker;
use super::state::State;

/// Entries of a folder looked at for symlinks before giving up.
const MAX_ENTRIES: usize = 4096;

pub fn write_pattern(checker: &mut Checker, command: &str, path: &str, state: &State) {
    let (dir, pattern) = match path.rfind('/') {
        Some(i) => (&path[..i.max(1)], &path[i + 1..]),
        None => (".", path),
    };
    let unclear = |checker: &mut Checker| {
        checker.unclear(format!("`{command}` writes to `{path}`, a pattern wt does not follow"));
    };
    if dir.contains(['*', '?', '[']) || pattern.starts_with(['.', '[']) || pattern.is_empty() {
        return unclear(checker);
    }
    checker.write_target(command, &Arg::literal(dir), state);
    let Some(folders) = checker.resolve_all(dir, state) else { return unclear(checker) };
    for folder in folders {
        if !checker.wt.contains(&folder) || links_out(checker, &folder, pattern) {
            return unclear(checker);
        }
    }
}

/// Whether a symlink in `folder` that `pattern` matches leads outside the worktree (or there
/// are too many entries to look).
fn links_out(checker: &Checker, folder: &Path, pattern: &str) -> bool {
    let Ok(entries) = std::fs::read_dir(folder) else { return false };
    for (n, entry) in entries.flatten().enumerate() {
        if n >= MAX_ENTRIES {
            return true;
        }
        let name = entry.file_name();
        if entry.file_type().is_ok_and(|t| t.is_symlink()) && matches(pattern, &name.to_string_lossy()) {
            let real = super::paths::real_path(&entry.path());
            if !checker.wt.contains(&real) {
                return true;
            }
        }
    }
    false
}

/// Whether one path component `name` matches `pattern` (`*`, `?`, `[…]`, `[!…]`), greedily
/// with one backtrack point, so in time linear in both lengths times the stars.
pub fn matches(pattern: &str, name: &str) -> bool {
    let p: Vec<char> = pattern.chars().collect();
    let n: Vec<char> = name.chars().collect();
    let (mut pi, mut ni) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
                continue;
            }
            Some('?') => {
                pi += 1;
                ni += 1;
                continue;
            }
            Some('[') => {
                if let Some((end, hit)) = bracket(&p, pi, n[ni]) {
                    if hit {
                        pi = end + 1;
                        ni += 1;
                        continue;
                    }
                } else if n[ni] == '[' {
                    pi += 1;
                    ni += 1;
                    continue;
                }
            }
            Some(&c) if c == n[ni] => {
                pi += 1;
                ni += 1;
                continue;
            }
            _ => {}
        }
        match star {
            Some((sp, sn)) => {
                pi = sp + 1;
                ni = sn + 1;
                star = Some((sp, sn + 1));
            }
            None => return false,
        }
    }
    p[pi..].iter().all(|&c| c == '*')
}

/// A bracket expression starting at `start`: where it ends, and whether `c` is in it.
fn bracket(p: &[char], start: usize, c: char) -> Option<(usize, bool)> {
    let mut i = start + 1;
    let negated = matches!(p.get(i), Some('!' | '^'));
    i += usize::from(negated);
    let mut hit = false;
    let mut first = true;
    while let Some(&d) = p.get(i) {
        if d == ']' && !first {
            return Some((i, hit != negated));
        }
        if p.get(i + 1) == Some(&'-') && p.get(i + 2).is_some_and(|e| *e != ']') {
            hit |= (d..=p[i + 2]).contains(&c);
            i += 3;
        } else {
            hit |= d == c;
            i += 1;
        }
        first = false;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn component_patterns_match_as_the_shell_does() {
        assert!(matches("*.o", "a.o"));
        assert!(!matches("*.o", "etc-link"));
        assert!(matches("*", "etc-link"));
        assert!(matches("e?c-*", "etc-link"));
        assert!(matches("[a-f]*", "etc-link"));
        assert!(!matches("[!e]*", "etc-link"));
        assert!(matches("*a*b*c", "xxaxxbxxc"));
        assert!(!matches(&"*a".repeat(50), &"a".repeat(40)));
    }
}
