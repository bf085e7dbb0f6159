//! PKCE (RFC 7636) for the browser logins: a random verifier and its S256 challenge, and random states.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::{SecureRandom, SystemRandom};
use sha2::{Digest, Sha256};

use super::OAuthError;

/// A verifier (32 random bytes, base64url) and its challenge (SHA-256 of it, base64url).
pub(crate) struct Pkce {
    pub verifier: String,
    pub challenge: String,
}

impl Pkce {
    pub(crate) fn generate() -> Result<Pkce, OAuthError> {
        let verifier = URL_SAFE_NO_PAD.encode(random_bytes::<32>()?);
        let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        Ok(Pkce { verifier, challenge })
    }
}

/// 16 random bytes as hex (the Codex login's `state`).
pub(crate) fn random_state() -> Result<String, OAuthError> {
    Ok(random_bytes::<16>()?.iter().map(|byte| format!("{byte:02x}")).collect())
}

fn random_bytes<const N: usize>() -> Result<[u8; N], OAuthError> {
    let mut bytes = [0u8; N];
    SystemRandom::new()
        .fill(&mut bytes)
        .map_err(|_| OAuthError::Login("the system's random number generator failed".to_owned()))?;
    Ok(bytes)
}
