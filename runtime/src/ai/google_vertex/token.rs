//! OAuth access tokens for Vertex AI: fetched from the credentials' token endpoint (a signed JWT for a
//! service account, the refresh-token grant for gcloud's user credentials), kept in memory for the whole
//! process and shared by every request with the same credentials, and fetched again five minutes before
//! they expire (google-auth-library's eager refresh). Concurrent requests wait for one fetch; a failed
//! fetch is retried as gaxios retries it.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use sha2::{Digest, Sha256};

use super::credentials::{AuthorizedUser, Credentials, ServiceAccount};
use super::jwt::{self, Claims, JwtError};
use crate::ai::error_kind::ProviderErrorKind;
use crate::ai::http_send::{root_cause, shown_url};
use crate::ai::transport::http_client;

/// The scope Vertex AI needs (the genai SDK asks for it).
pub(crate) const SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// The grant a service account's signed JWT is sent with.
const JWT_BEARER_GRANT: &str = "urn:ietf:params:oauth:grant-type:jwt-bearer";
/// A token this close to its expiry is fetched again (google-auth-library's `eagerRefreshThresholdMillis`).
pub(crate) const REFRESH_MARGIN: Duration = Duration::from_secs(300);
/// Retries of a token request answered 408, 429 or 5xx (gaxios's default for token requests).
const STATUS_RETRIES: u32 = 3;
/// Retries of a token request that got no answer (gaxios's `noResponseRetries`).
const NO_RESPONSE_RETRIES: u32 = 2;
/// Characters of a token endpoint's non-JSON answer quoted in an error.
const BODY_EXCERPT_CHARS: usize = 200;

/// Why no access token could be had. The texts name the endpoint and what it said, never a secret.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum TokenError {
    #[error("cannot sign the token request of {account}: {error}")]
    Assertion { account: String, error: JwtError },
    #[error("the Google Cloud token endpoint {url} refused the {account}: {status} {detail}")]
    Refused { url: String, account: String, status: u16, detail: String },
    #[error("cannot reach the Google Cloud token endpoint {url}: {cause}")]
    Unreachable { url: String, cause: String },
    #[error("the Google Cloud token endpoint {url} did not answer in time")]
    TimedOut { url: String },
    #[error("the Google Cloud token endpoint {url} answered without an access token ({reason})")]
    NoToken { url: String, reason: String },
}

impl TokenError {
    /// The kind of failure: a refused grant or a bad key is an authentication failure; the others are as
    /// their status or transport says.
    pub fn kind(&self) -> ProviderErrorKind {
        match self {
            Self::Assertion { .. } => ProviderErrorKind::Authentication,
            Self::Refused { status: 400 | 401 | 403, .. } => ProviderErrorKind::Authentication,
            Self::Refused { status, .. } => ProviderErrorKind::from_status(*status, None),
            Self::Unreachable { .. } | Self::TimedOut { .. } => ProviderErrorKind::Network,
            Self::NoToken { .. } => ProviderErrorKind::Server,
        }
    }
}

/// A token and when it stops being good.
#[derive(Clone)]
struct CachedToken {
    value: String,
    expires_at: Instant,
}

type Slot = Arc<tokio::sync::Mutex<Option<CachedToken>>>;

/// The process's tokens, one slot per set of credentials (and token endpoint).
static TOKENS: LazyLock<Mutex<HashMap<[u8; 32], Slot>>> = LazyLock::new(Default::default);

/// An access token for `credentials`: the cached one while it has more than [`REFRESH_MARGIN`] left, else a
/// new one from the token endpoint. `timeout` bounds each attempt.
pub(crate) async fn access_token(credentials: &Credentials, timeout: Duration) -> Result<String, TokenError> {
    let slot = {
        let mut tokens = TOKENS.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        tokens.entry(cache_key(credentials)).or_default().clone()
    };
    // Held across the fetch, so requests that arrive meanwhile take the token it brings.
    let mut cached = slot.lock().await;
    if let Some(token) = cached.as_ref().filter(|token| is_fresh(token.expires_at, Instant::now(), REFRESH_MARGIN)) {
        return Ok(token.value.clone());
    }
    let (value, expires_in) = fetch(credentials, timeout).await?;
    let expires_at = Instant::now() + Duration::from_secs(expires_in);
    *cached = Some(CachedToken { value: value.clone(), expires_at });
    Ok(value)
}

/// Whether a token expiring at `expires_at` is still good at `now`, `margin` ahead.
pub(crate) fn is_fresh(expires_at: Instant, now: Instant, margin: Duration) -> bool {
    expires_at > now + margin
}

/// A digest of everything that identifies the credentials (secrets included, so that a changed key or
/// refresh token is a new slot; the digest is never shown).
fn cache_key(credentials: &Credentials) -> [u8; 32] {
    let mut digest = Sha256::new();
    let fields: [&str; 4] = match credentials {
        Credentials::ServiceAccount(account) => {
            ["service_account", &account.token_uri, &account.client_email, &account.private_key]
        }
        Credentials::AuthorizedUser(user) => ["authorized_user", &user.token_uri, &user.client_id, &user.refresh_token],
    };
    for field in fields {
        digest.update(field.as_bytes());
        digest.update([0]);
    }
    digest.finalize().into()
}

/// The form of the token request: a signed assertion, or the refresh-token grant (google-auth-library's
/// field order).
fn token_form(credentials: &Credentials) -> Result<Vec<(&'static str, String)>, TokenError> {
    match credentials {
        Credentials::ServiceAccount(account) => {
            let assertion = signed_assertion(account)
                .map_err(|error| TokenError::Assertion { account: credentials.describe(), error })?;
            Ok(vec![("grant_type", JWT_BEARER_GRANT.to_owned()), ("assertion", assertion)])
        }
        Credentials::AuthorizedUser(AuthorizedUser { client_id, client_secret, refresh_token, .. }) => Ok(vec![
            ("refresh_token", refresh_token.clone()),
            ("client_id", client_id.clone()),
            ("client_secret", client_secret.clone()),
            ("grant_type", "refresh_token".to_owned()),
        ]),
    }
}

fn signed_assertion(account: &ServiceAccount) -> Result<String, JwtError> {
    let key = jwt::rsa_key(&account.private_key)?;
    let issued_at = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs());
    let claims = Claims { issuer: &account.client_email, scope: SCOPE, audience: &account.token_uri, issued_at };
    jwt::assertion(&key, &claims)
}

/// POSTs the token request (retrying like gaxios) and returns the token with its lifetime in seconds.
async fn fetch(credentials: &Credentials, timeout: Duration) -> Result<(String, u64), TokenError> {
    let url = credentials.token_uri();
    let shown = shown_url(url);
    let client = http_client().map_err(|cause| TokenError::Unreachable { url: shown.clone(), cause })?;
    let mut attempt = 0;
    loop {
        // Signed afresh each attempt, as gtoken does (an assertion's `iat` should be now).
        let form = token_form(credentials)?;
        let request = client.post(url).header(reqwest::header::ACCEPT, "application/json").form(&form);
        let sent = tokio::time::timeout(timeout, request.send()).await;
        let response = match sent {
            Err(_) if attempt < NO_RESPONSE_RETRIES => None,
            Err(_) => return Err(TokenError::TimedOut { url: shown }),
            Ok(Err(_)) if attempt < NO_RESPONSE_RETRIES => None,
            Ok(Err(error)) => return Err(TokenError::Unreachable { url: shown, cause: root_cause(&error) }),
            Ok(Ok(response)) => {
                let status = response.status().as_u16();
                if attempt < STATUS_RETRIES && matches!(status, 100..=199 | 408 | 429 | 500..=599) {
                    None
                } else {
                    let body = tokio::time::timeout(timeout, response.text()).await;
                    let body = match body {
                        Ok(Ok(body)) => body,
                        Ok(Err(error)) => {
                            return Err(TokenError::Unreachable { url: shown, cause: root_cause(&error) });
                        }
                        Err(_) => return Err(TokenError::TimedOut { url: shown }),
                    };
                    Some((status, body))
                }
            }
        };
        if let Some((status, body)) = response {
            return read_answer(credentials, &shown, status, &body);
        }
        attempt += 1;
        tokio::time::sleep(retry_delay(attempt)).await;
    }
}

/// gaxios's wait before retry number `attempt` (from 1): 100 ms plus half a second times `2^attempt - 1`.
pub(crate) fn retry_delay(attempt: u32) -> Duration {
    let growth = 2u64.saturating_pow(attempt.min(16)) - 1;
    Duration::from_millis(100 + growth * 500)
}

/// The token and its lifetime from a 2xx answer; the endpoint's `error: error_description` otherwise.
fn read_answer(credentials: &Credentials, url: &str, status: u16, body: &str) -> Result<(String, u64), TokenError> {
    let json: Option<Value> = serde_json::from_str(body).ok();
    if !(200..300).contains(&status) {
        let detail = json.as_ref().and_then(oauth_error).unwrap_or_else(|| excerpt(body));
        return Err(TokenError::Refused { url: url.to_owned(), account: credentials.describe(), status, detail });
    }
    let no_token = |reason: &str| TokenError::NoToken { url: url.to_owned(), reason: reason.to_owned() };
    let json = json.ok_or_else(|| no_token("the answer is not JSON"))?;
    let token = json
        .get("access_token")
        .and_then(Value::as_str)
        .filter(|token| !token.is_empty())
        .ok_or_else(|| no_token("no access_token"))?;
    // A token without a lifetime counts as expiring at once: the next request fetches another.
    let expires_in = json.get("expires_in").and_then(Value::as_f64).map_or(0, |seconds| seconds.max(0.0) as u64);
    Ok((token.to_owned(), expires_in))
}

/// `error: error_description` from an OAuth error answer.
fn oauth_error(json: &Value) -> Option<String> {
    let error = json.get("error")?;
    let error = match error {
        Value::String(code) => code.clone(),
        // Some Google endpoints answer in their API error shape instead.
        other => other.get("message").and_then(Value::as_str).map_or_else(|| other.to_string(), str::to_owned),
    };
    match json.get("error_description").and_then(Value::as_str) {
        Some(description) => Some(format!("{error}: {description}")),
        None => Some(error),
    }
}

fn excerpt(body: &str) -> String {
    let flat = body.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.is_empty() {
        return "(no body)".to_owned();
    }
    let mut text: String = flat.chars().take(BODY_EXCERPT_CHARS).collect();
    if flat.chars().count() > BODY_EXCERPT_CHARS {
        text.push('…');
    }
    text
}
