//! sha256 in lowercase hex: how wt fingerprints a plan, a run id's source, and the files and
//! index a task must leave alone.

use sha2::{Digest, Sha256};

/// sha256 of the parts, fed in order, as lowercase hex.
pub fn sha256_hex<'a>(parts: impl IntoIterator<Item = &'a [u8]>) -> String {
    let mut hasher = Sha256::new();
    for part in parts {
        hasher.update(part);
    }
    hasher.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn matches_the_known_digest_of_abc() {
        assert_eq!(
            super::sha256_hex([b"a".as_slice(), b"bc"]),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
