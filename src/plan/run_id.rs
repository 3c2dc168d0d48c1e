//! Run ids: six lowercase hex characters, given or derived from the plan file.

use std::path::Path;

use crate::digest::sha256_hex;

pub fn is_valid(id: &str) -> bool {
    id.len() == 6 && id.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// The first six hex characters of sha256(absolute path, NUL, content): running the same plan
/// file again gives the same id, so it resumes; editing it starts a new run.
pub fn derive(absolute_path: &Path, content: &[u8]) -> String {
    sha256_hex([absolute_path.as_os_str().as_encoded_bytes(), &[0], content])[..6].to_owned()
}

/// sha256 of the content, lowercase hex.
pub fn digest(content: &[u8]) -> String {
    sha256_hex([content])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn validity() {
        assert!(is_valid("a1b2c3"));
        for bad in ["A1B2C3", "a1b2c", "a1b2c3d", "g1b2c3", "", "a1b2-3"] {
            assert!(!is_valid(bad), "{bad}");
        }
    }

    #[test]
    fn derived_ids_depend_on_path_and_content() {
        let a = derive(Path::new("/r/plan.toml"), b"x");
        assert!(is_valid(&a));
        assert_eq!(a, derive(Path::new("/r/plan.toml"), b"x"));
        assert_ne!(a, derive(Path::new("/r/other.toml"), b"x"));
        assert_ne!(a, derive(Path::new("/r/plan.toml"), b"y"));
    }
}
