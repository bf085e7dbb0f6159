//! Subscription logins, as pi-ai's OAuth providers: Anthropic (Claude Pro/Max), OpenAI Codex (a ChatGPT
//! plan) and GitHub Copilot. Each one refreshes stored credentials and runs its login flow; where the
//! credentials are kept (auth.json) is the CLI's business.

mod callback;
mod endpoints;
pub mod login;
mod pkce;
mod refresh;

use std::fmt;

use base64::Engine;
use serde_json::{Map, Value};

pub use endpoints::{OAUTH_SERVER_VARIABLE, OAuthServer};
pub use login::{LoginPrompter, login};
pub use refresh::refresh;

/// A provider whose users log in with an account instead of an API key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum SubscriptionProvider {
    Anthropic,
    GitHubCopilot,
    OpenAiCodex,
}

impl SubscriptionProvider {
    /// Every provider, in the order pi lists them.
    pub const ALL: [SubscriptionProvider; 3] =
        [SubscriptionProvider::Anthropic, SubscriptionProvider::GitHubCopilot, SubscriptionProvider::OpenAiCodex];

    /// The provider id (auth.json's key and the models' `provider`).
    pub fn id(self) -> &'static str {
        match self {
            SubscriptionProvider::Anthropic => "anthropic",
            SubscriptionProvider::GitHubCopilot => "github-copilot",
            SubscriptionProvider::OpenAiCodex => "openai-codex",
        }
    }

    /// What the login menu calls it.
    pub fn display_name(self) -> &'static str {
        match self {
            SubscriptionProvider::Anthropic => "Anthropic (Claude Pro/Max)",
            SubscriptionProvider::GitHubCopilot => "GitHub Copilot",
            SubscriptionProvider::OpenAiCodex => "ChatGPT Plus/Pro (Codex Subscription)",
        }
    }

    pub fn from_id(id: &str) -> Option<SubscriptionProvider> {
        SubscriptionProvider::ALL.into_iter().find(|provider| provider.id() == id)
    }
}

/// Stored OAuth credentials: auth.json's `{"type": "oauth", "refresh", "access", "expires", ...}` entry.
/// Fields other than the three (Codex's `accountId`, Copilot's `enterpriseUrl`, anything a newer pi adds)
/// are kept in `extra` and written back unchanged.
#[derive(Clone, PartialEq)]
pub struct OAuthCredentials {
    pub access: String,
    pub refresh: String,
    /// When `access` stops being usable, in milliseconds since the epoch.
    pub expires: i64,
    pub extra: Map<String, Value>,
}

impl OAuthCredentials {
    /// Reads an auth.json entry of type `oauth`; `None` when it is not one or lacks a token.
    pub fn from_entry(entry: &Value) -> Option<OAuthCredentials> {
        let object = entry.as_object()?;
        if object.get("type").and_then(Value::as_str) != Some("oauth") {
            return None;
        }
        let text = |key: &str| object.get(key).and_then(Value::as_str).map(str::to_owned);
        let extra = object
            .iter()
            .filter(|(key, _)| !matches!(key.as_str(), "type" | "access" | "refresh" | "expires"))
            .map(|(key, value)| (key.clone(), value.clone()))
            .collect();
        Some(OAuthCredentials {
            access: text("access")?,
            refresh: text("refresh").unwrap_or_default(),
            // A missing or odd `expires` counts as expired, so the token is renewed rather than trusted.
            expires: object.get("expires").and_then(Value::as_f64).map_or(0, |ms| ms as i64),
            extra,
        })
    }

    /// The auth.json entry, in pi's key order (`type` first, then the credentials as the flow returned them).
    pub fn to_entry(&self) -> Value {
        let mut entry = Map::new();
        entry.insert("type".into(), "oauth".into());
        entry.insert("refresh".into(), self.refresh.clone().into());
        entry.insert("access".into(), self.access.clone().into());
        entry.insert("expires".into(), self.expires.into());
        entry.extend(self.extra.iter().map(|(key, value)| (key.clone(), value.clone())));
        Value::Object(entry)
    }

    /// Whether `access` is past its time at `now_ms` (pi renews at the stored time, which already keeps a
    /// margin for the providers that need one).
    pub fn is_expired(&self, now_ms: i64) -> bool {
        now_ms >= self.expires
    }

    /// A text field of `extra`.
    pub fn extra_text(&self, key: &str) -> Option<&str> {
        self.extra.get(key).and_then(Value::as_str)
    }
}

impl fmt::Debug for OAuthCredentials {
    /// Tokens never appear in debug output.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OAuthCredentials")
            .field("access", &"<redacted>")
            .field("refresh", &"<redacted>")
            .field("expires", &self.expires)
            .field("extra", &self.extra.keys().collect::<Vec<_>>())
            .finish()
    }
}

/// Why a refresh or login failed. Messages name the endpoint and what went wrong, never a token.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OAuthError {
    #[error("cannot reach {url}: {cause}")]
    Unreachable { url: String, cause: String },
    #[error("{url} answered {status}: {body}")]
    Refused { url: String, status: u16, body: String },
    #[error("{url} answered with something that is not a token: {detail}")]
    InvalidAnswer { url: String, detail: String },
    #[error("the access token carries no ChatGPT account id")]
    NoAccountId,
    #[error("login cancelled")]
    Cancelled,
    #[error("{0}")]
    Login(String),
}

/// The current time in milliseconds since the epoch.
pub fn now_ms() -> i64 {
    chrono::Utc::now().timestamp_millis()
}

/// The ChatGPT account id in a Codex access token (the `https://api.openai.com/auth` claim's
/// `chatgpt_account_id`); `None` when the token is not such a JWT.
pub fn chatgpt_account_id(access_token: &str) -> Option<String> {
    let mut parts = access_token.split('.');
    let (Some(_), Some(payload), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
        return None;
    };
    let bytes = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(payload.trim_end_matches('='))
        .or_else(|_| base64::engine::general_purpose::STANDARD.decode(payload))
        .ok()?;
    let claims: Value = serde_json::from_slice(&bytes).ok()?;
    let id = claims.get("https://api.openai.com/auth")?.get("chatgpt_account_id")?.as_str()?;
    (!id.is_empty()).then(|| id.to_owned())
}

#[cfg(test)]
mod tests;
