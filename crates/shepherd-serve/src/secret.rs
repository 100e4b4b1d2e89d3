//! The dashboard's per-start secret.

use crate::error::ServeError;

/// The dashboard's secret: 32 random bytes as hex, made at start.
#[derive(Clone)]
pub struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Secret(..)")
    }
}

impl Secret {
    /// A fresh secret from the operating system's random source.
    pub fn generate() -> Result<Secret, ServeError> {
        let mut bytes = [0u8; 32];
        getrandom::fill(&mut bytes).map_err(|e| ServeError::Random(e.to_string()))?;
        Ok(Secret(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    /// The secret's text.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Whether `candidate` is the secret (compared in constant time).
    pub fn matches(&self, candidate: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), candidate.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}
