//! The signed JWT a service account trades for an access token (RFC 7523, as google-auth-library's
//! gtoken builds it): header `{"alg":"RS256"}`, claims `iss`, `scope`, `aud`, `exp` (an hour on), `iat`,
//! signed RS256 with the key's PEM (`ring` signs; `rustls-pki-types` reads the PEM).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::rand::SystemRandom;
use ring::signature::{RSA_PKCS1_SHA256, RsaKeyPair};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{PrivatePkcs1KeyDer, PrivatePkcs8KeyDer};
use serde_json::json;

/// How long an assertion is valid, as gtoken makes it.
const ASSERTION_LIFETIME_SECS: u64 = 3600;

/// Why an assertion could not be made. Never carries key material.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JwtError {
    #[error("its private_key is not a PEM-encoded RSA private key")]
    NotPem,
    #[error("its private_key was rejected: {0}")]
    KeyRejected(String),
    #[error("signing with its private_key failed")]
    Signing,
}

/// The claims of an assertion.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Claims<'a> {
    /// The service account's email.
    pub issuer: &'a str,
    /// Space-separated OAuth scopes.
    pub scope: &'a str,
    /// The token endpoint the assertion is for.
    pub audience: &'a str,
    /// Seconds since the Unix epoch.
    pub issued_at: u64,
}

/// The RSA key in `pem`: PKCS#8 (`PRIVATE KEY`, what Google issues) or PKCS#1 (`RSA PRIVATE KEY`).
pub(crate) fn rsa_key(pem: &str) -> Result<RsaKeyPair, JwtError> {
    let rejected = |error: ring::error::KeyRejected| JwtError::KeyRejected(error.to_string());
    // The key files store newlines as `\n` escapes inside JSON; serde has already turned them into newlines.
    if let Ok(der) = PrivatePkcs8KeyDer::from_pem_slice(pem.as_bytes()) {
        return RsaKeyPair::from_pkcs8(der.secret_pkcs8_der()).map_err(rejected);
    }
    if let Ok(der) = PrivatePkcs1KeyDer::from_pem_slice(pem.as_bytes()) {
        return RsaKeyPair::from_der(der.secret_pkcs1_der()).map_err(rejected);
    }
    Err(JwtError::NotPem)
}

/// `header.claims.signature`, each part base64url without padding.
pub(crate) fn assertion(key: &RsaKeyPair, claims: &Claims<'_>) -> Result<String, JwtError> {
    let header = json!({"alg": "RS256"});
    let payload = json!({
        "iss": claims.issuer,
        "scope": claims.scope,
        "aud": claims.audience,
        "exp": claims.issued_at + ASSERTION_LIFETIME_SECS,
        "iat": claims.issued_at,
    });
    let signing_input =
        format!("{}.{}", URL_SAFE_NO_PAD.encode(header.to_string()), URL_SAFE_NO_PAD.encode(payload.to_string()));
    let mut signature = vec![0; key.public().modulus_len()];
    key.sign(&RSA_PKCS1_SHA256, &SystemRandom::new(), signing_input.as_bytes(), &mut signature)
        .map_err(|_| JwtError::Signing)?;
    Ok(format!("{signing_input}.{}", URL_SAFE_NO_PAD.encode(signature)))
}
