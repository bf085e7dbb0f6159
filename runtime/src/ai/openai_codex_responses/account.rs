//! The ChatGPT account a Codex access token belongs to: the `chatgpt_account_id` of the token's
//! `https://api.openai.com/auth` claim, read from the JWT payload without verifying it (as pi does).

use base64::Engine;
use base64::engine::general_purpose::{GeneralPurpose, GeneralPurposeConfig};
use base64::engine::{DecodePaddingMode, general_purpose};
use serde_json::Value;

/// The claim that holds the account details.
pub const AUTH_CLAIM: &str = "https://api.openai.com/auth";
/// The account id inside [`AUTH_CLAIM`].
const ACCOUNT_ID_FIELD: &str = "chatgpt_account_id";

/// Why no account id could be read (the token itself is never part of the message).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the OpenAI Codex access token is not a JWT carrying a ChatGPT account id ({AUTH_CLAIM} → {ACCOUNT_ID_FIELD})")]
pub struct NoAccountId;

/// The account id of `token` (a JWT), or [`NoAccountId`].
pub fn account_id(token: &str) -> Result<String, NoAccountId> {
    let mut parts = token.split('.');
    let (Some(_), Some(payload), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return Err(NoAccountId);
    };
    let bytes = decode_segment(payload).ok_or(NoAccountId)?;
    let claims: Value = serde_json::from_slice(&bytes).map_err(|_| NoAccountId)?;
    let id = claims.get(AUTH_CLAIM).and_then(|auth| auth.get(ACCOUNT_ID_FIELD));
    match id {
        Some(Value::String(id)) if !id.is_empty() => Ok(id.clone()),
        // pi takes any truthy value; a number would be sent as its text.
        Some(Value::Number(number)) if number.as_f64().is_some_and(|n| n != 0.0) => Ok(number.to_string()),
        _ => Err(NoAccountId),
    }
}

/// A JWT segment: base64url as JWTs use it, or standard base64 (what pi's `atob` reads), padded or not.
fn decode_segment(segment: &str) -> Option<Vec<u8>> {
    let lenient = GeneralPurposeConfig::new().with_decode_padding_mode(DecodePaddingMode::Indifferent);
    let url = GeneralPurpose::new(&base64::alphabet::URL_SAFE, lenient);
    let standard = GeneralPurpose::new(&base64::alphabet::STANDARD, lenient);
    url.decode(segment).ok().or_else(|| standard.decode(segment).ok()).or_else(|| {
        // Whitespace is dropped, as atob drops it.
        let compact: String = segment.chars().filter(|c| !c.is_ascii_whitespace()).collect();
        general_purpose::STANDARD_NO_PAD.decode(compact.trim_end_matches('=')).ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn jwt(payload: &serde_json::Value) -> String {
        let encode = |value: &str| general_purpose::URL_SAFE_NO_PAD.encode(value);
        format!("{}.{}.sig", encode(r#"{"alg":"none"}"#), encode(&payload.to_string()))
    }

    #[test]
    fn the_account_id_comes_from_the_auth_claim() {
        let token = jwt(&serde_json::json!({AUTH_CLAIM: {"chatgpt_account_id": "acct-1"}, "exp": 1}));
        assert_eq!(account_id(&token), Ok("acct-1".to_owned()));
        let padded = format!(
            "h.{}.s",
            general_purpose::STANDARD.encode(r#"{"https://api.openai.com/auth":{"chatgpt_account_id":"a"}}"#)
        );
        assert_eq!(account_id(&padded), Ok("a".to_owned()));
    }

    #[test]
    fn tokens_without_the_claim_are_refused_without_showing_them() {
        assert_eq!(account_id("sk-plain-key"), Err(NoAccountId));
        assert_eq!(account_id("a.b.c.d"), Err(NoAccountId));
        assert_eq!(account_id(&jwt(&serde_json::json!({"sub": "x"}))), Err(NoAccountId));
        assert_eq!(account_id(&jwt(&serde_json::json!({AUTH_CLAIM: {"chatgpt_account_id": ""}}))), Err(NoAccountId));
        assert!(!NoAccountId.to_string().contains("sk-"));
    }
}
