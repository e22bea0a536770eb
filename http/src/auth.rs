//! The shared secret of a module and its gateway.

use sha2::{Digest, Sha256};

/// A module's shared secret, kept as its SHA-256 so that comparing takes the same time
/// whatever the guess.
#[derive(Clone)]
pub struct Secret([u8; 32]);

impl Secret {
    /// `None` for an empty secret: no secret at all.
    pub fn new(secret: &str) -> Option<Self> {
        (!secret.is_empty()).then(|| Self(Sha256::digest(secret.as_bytes()).into()))
    }

    /// Whether `given` is the secret, compared in constant time over the digests.
    pub fn matches(&self, given: &str) -> bool {
        let given: [u8; 32] = Sha256::digest(given.as_bytes()).into();
        self.0
            .iter()
            .zip(given.iter())
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
    }
}

#[cfg(test)]
mod tests {
    use super::Secret;

    #[test]
    fn only_the_secret_itself_matches() {
        let secret = Secret::new("s3cret").unwrap();
        assert!(secret.matches("s3cret"));
        assert!(!secret.matches("s3cre"));
        assert!(!secret.matches("s3cret "));
        assert!(!secret.matches(""));
        assert!(Secret::new("").is_none());
    }
}
