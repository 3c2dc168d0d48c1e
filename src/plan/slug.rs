//! Branch slugs from task names: lowercase ASCII letters, digits and single dashes, at most 40.

use unicode_normalization::UnicodeNormalization;

pub const MAX_SLUG_LEN: usize = 40;

/// `"Add OAuth2 (Google) — login!"` becomes `"add-oauth2-google-login"`. Accented letters keep
/// their base letter; other non-ASCII characters separate words; apostrophes vanish so
/// `"don't"` stays one word. A name with nothing usable becomes `"task"`.
pub fn slugify(name: &str) -> String {
    let mut slug = String::new();
    let mut pending_dash = false;
    for c in name.nfkd() {
        if c.is_ascii_alphanumeric() {
            if pending_dash && !slug.is_empty() {
                slug.push('-');
            }
            pending_dash = false;
            slug.push(c.to_ascii_lowercase());
        } else if matches!(c, '\'' | '\u{2019}') || is_combining_mark(c) {
            continue;
        } else {
            pending_dash = true;
        }
    }
    truncate_at_word(&mut slug);
    if slug.is_empty() { "task".to_owned() } else { slug }
}

fn is_combining_mark(c: char) -> bool {
    matches!(c as u32, 0x0300..=0x036F | 0x1AB0..=0x1AFF | 0x1DC0..=0x1DFF | 0x20D0..=0x20FF | 0xFE20..=0xFE2F)
}

fn truncate_at_word(slug: &mut String) {
    if slug.len() <= MAX_SLUG_LEN {
        return;
    }
    // The slug is ASCII, so any byte index is a char boundary.
    let cut = match slug[..=MAX_SLUG_LEN].rfind('-') {
        Some(dash) if dash > MAX_SLUG_LEN / 2 => dash,
        _ => MAX_SLUG_LEN,
    };
    slug.truncate(cut);
    while slug.ends_with('-') {
        slug.pop();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn punctuation_becomes_single_dashes() {
        assert_eq!(slugify("Add schema: users (v2)!"), "add-schema-users-v2");
        assert_eq!(slugify("  --Leading and trailing--  "), "leading-and-trailing");
        assert_eq!(slugify("`wt guard` -- fast/path"), "wt-guard-fast-path");
    }

    #[test]
    fn apostrophes_do_not_split_words() {
        assert_eq!(slugify("Don't break user’s config"), "dont-break-users-config");
    }

    #[test]
    fn accents_keep_their_letter_and_other_scripts_separate() {
        assert_eq!(slugify("Crème brûlée façade"), "creme-brulee-facade");
        assert_eq!(slugify("Add 日本語 support 🚀"), "add-support");
        assert_eq!(slugify("日本語"), "task");
        assert_eq!(slugify("Ligature ﬁle"), "ligature-file");
    }

    #[test]
    fn long_names_are_cut_at_a_word_boundary() {
        let slug = slugify("Implement the authentication middleware for every public endpoint");
        assert_eq!(slug, "implement-the-authentication-middleware");
        assert!(slug.len() <= MAX_SLUG_LEN);
        let unbroken = slugify(&"x".repeat(60));
        assert_eq!(unbroken.len(), MAX_SLUG_LEN);
    }

    #[test]
    fn slug_is_always_a_valid_ref_component() {
        for name in ["..", "a..b", "@{x}", "x.lock", "~^:?*[\\", "-"] {
            let slug = slugify(name);
            assert!(slug.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-'), "{slug}");
            assert!(!slug.starts_with('-') && !slug.ends_with('-'), "{slug}");
        }
    }
}
