//! Brace expansion of a literal word (`src/{a,b}.rs`, `{1..3}`, `{src,..}/x`), as bash does it
//! before any other expansion: each unquoted `{…,…}` or `{x..y}` becomes one word per
//! alternative. Bounded: past [`MAX_WORDS`] results, the word is left unknown.

/// A character of the word, and whether it was quoted (quoted braces do not expand).
pub type Piece = (char, bool);

/// Words one brace expansion may produce before wt stops following it.
pub const MAX_WORDS: usize = 256;

/// The words `word` expands to; `None` when there are more than [`MAX_WORDS`].
pub fn expand(word: &[Piece]) -> Option<Vec<Vec<Piece>>> {
    let mut out = Vec::new();
    expand_into(word, &mut out)?;
    Some(out)
}

fn expand_into(word: &[Piece], out: &mut Vec<Vec<Piece>>) -> Option<()> {
    let Some((open, close, alternatives)) = first_brace(word)? else {
        if out.len() >= MAX_WORDS {
            return None;
        }
        out.push(word.to_vec());
        return Some(());
    };
    for alternative in alternatives {
        let mut next = word[..open].to_vec();
        next.extend(alternative);
        next.extend_from_slice(&word[close + 1..]);
        expand_into(&next, out)?;
    }
    Some(())
}

/// Where a `{…}` opens and closes, and the words it stands for.
type Brace = (usize, usize, Vec<Vec<Piece>>);

/// The first unquoted `{…}` that expands (`None` when a sequence is longer than
/// [`MAX_WORDS`]).
fn first_brace(word: &[Piece]) -> Option<Option<Brace>> {
    for open in (0..word.len()).filter(|&i| word[i] == ('{', false)) {
        let mut depth = 0usize;
        let mut commas = Vec::new();
        for (i, &(c, quoted)) in word.iter().enumerate().skip(open) {
            match (c, quoted) {
                ('{', false) => depth += 1,
                ('}', false) if depth == 1 => {
                    let inner = &word[open + 1..i];
                    if !commas.is_empty() {
                        let mut parts = Vec::new();
                        let mut start = open + 1;
                        for &comma in &commas {
                            parts.push(word[start..comma].to_vec());
                            start = comma + 1;
                        }
                        parts.push(word[start..i].to_vec());
                        return Some(Some((open, i, parts)));
                    }
                    match sequence(inner) {
                        Sequence::Words(words) => return Some(Some((open, i, words))),
                        Sequence::TooLong => return None,
                        Sequence::NotOne => break,
                    }
                }
                ('}', false) => depth -= 1,
                (',', false) if depth == 1 => commas.push(i),
                _ => {}
            }
        }
    }
    Some(None)
}

enum Sequence {
    NotOne,
    TooLong,
    Words(Vec<Vec<Piece>>),
}

/// `{1..5}`, `{5..1..2}`, `{a..e}`.
fn sequence(inner: &[Piece]) -> Sequence {
    match sequence_words(inner) {
        Some(Some(words)) => Sequence::Words(words),
        Some(None) => Sequence::TooLong,
        None => Sequence::NotOne,
    }
}

fn sequence_words(inner: &[Piece]) -> Option<Option<Vec<Vec<Piece>>>> {
    let text: String = inner.iter().map(|p| p.0).collect();
    let parts: Vec<&str> = text.split("..").collect();
    let (first, last, step) = match parts.as_slice() {
        [a, b] => (*a, *b, 1),
        [a, b, s] => (*a, *b, s.parse::<i64>().ok()?.unsigned_abs().clamp(1, 1 << 32) as i64),
        _ => return None,
    };
    let unquoted = |s: String| s.chars().map(|c| (c, false)).collect::<Vec<Piece>>();
    if let (Ok(a), Ok(b)) = (first.parse::<i64>(), last.parse::<i64>()) {
        let count = a.abs_diff(b) / step as u64 + 1;
        if count > MAX_WORDS as u64 {
            return Some(None);
        }
        let sign = if b >= a { 1 } else { -1 };
        return Some(Some((0..count as i64).map(|k| unquoted((a + sign * k * step).to_string())).collect()));
    }
    let (mut a, mut b) = (first.chars(), last.chars());
    let (Some(a), None, Some(b), None) = (a.next(), a.next(), b.next(), b.next()) else { return None };
    let range: Vec<char> = if a <= b { (a..=b).collect() } else { (b..=a).rev().collect() };
    Some(Some(range.into_iter().step_by(step as usize).map(|c| vec![(c, false)]).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let pieces: Vec<Piece> = text.chars().map(|c| (c, false)).collect();
        expand(&pieces).unwrap().into_iter().map(|w| w.into_iter().map(|p| p.0).collect()).collect()
    }

    #[test]
    fn alternatives_and_sequences_expand_in_order() {
        assert_eq!(words("src/{a,b}.rs"), ["src/a.rs", "src/b.rs"]);
        assert_eq!(words("{src,..}/x"), ["src/x", "../x"]);
        assert_eq!(words("x{1..3}"), ["x1", "x2", "x3"]);
        assert_eq!(words("{a,b}{c,d}"), ["ac", "ad", "bc", "bd"]);
        assert_eq!(words("{a,{b,c}}"), ["a", "b", "c"]);
        assert_eq!(words("{}"), ["{}"]);
        assert_eq!(words("{x}"), ["{x}"]);
        let quoted: Vec<Piece> = "{a,b}".chars().map(|c| (c, true)).collect();
        assert_eq!(expand(&quoted).unwrap().len(), 1);
        assert!(expand(&"{1..100000}".chars().map(|c| (c, false)).collect::<Vec<_>>()).is_none());
        assert!(expand(&"{a,b}".repeat(10).chars().map(|c| (c, false)).collect::<Vec<_>>()).is_none());
    }
}
