//! Shell patterns matched against one path component (`*`, `?`, `[…]`, `[!…]`), in time linear
//! in the lengths: what a write to a glob may reach (`targets`).

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
