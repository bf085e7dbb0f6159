//! Renewing expired credentials, one request per provider as pi-ai makes it: Anthropic's token endpoint
//! (JSON), OpenAI's (a form) and GitHub's Copilot token exchange (a GET with the GitHub token).

use std::time::Duration;

use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use serde_json::{Map, Value, json};

use super::endpoints::{
    ANTHROPIC_CLIENT_ID, ANTHROPIC_TOKEN_URL, CODEX_CLIENT_ID, CODEX_TOKEN_URL, COPILOT_HEADERS, GitHubUrls,
};
use super::{OAuthCredentials, OAuthError, OAuthServer, SubscriptionProvider, chatgpt_account_id, now_ms};
use crate::ai::transport::http_client;

/// How long one token request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// Anthropic's and Copilot's tokens are renewed five minutes before the server says they end.
const EARLY_RENEWAL_MS: i64 = 5 * 60 * 1000;

/// Fresh credentials for `credentials` of `provider`.
pub async fn refresh(
    provider: SubscriptionProvider,
    credentials: &OAuthCredentials,
    server: &OAuthServer,
) -> Result<OAuthCredentials, OAuthError> {
    match provider {
        SubscriptionProvider::Anthropic => {
            let url = server.url(ANTHROPIC_TOKEN_URL);
            let body = json!({
                "grant_type": "refresh_token",
                "client_id": ANTHROPIC_CLIENT_ID,
                "refresh_token": credentials.refresh,
            });
            let answer = post_json(&url, &body).await?;
            read_token_answer(&url, &answer, EARLY_RENEWAL_MS)
        }
        SubscriptionProvider::OpenAiCodex => {
            let url = server.url(CODEX_TOKEN_URL);
            let form = [
                ("grant_type", "refresh_token"),
                ("refresh_token", credentials.refresh.as_str()),
                ("client_id", CODEX_CLIENT_ID),
            ];
            let answer = post_form(&url, &form).await?;
            codex_credentials(read_token_answer(&url, &answer, 0)?)
        }
        SubscriptionProvider::GitHubCopilot => {
            let enterprise = credentials.extra_text("enterpriseUrl").filter(|domain| !domain.is_empty());
            copilot_token(&credentials.refresh, enterprise, server).await
        }
    }
}

/// Codex credentials carry the ChatGPT account id read from the access token.
pub(crate) fn codex_credentials(mut credentials: OAuthCredentials) -> Result<OAuthCredentials, OAuthError> {
    let account = chatgpt_account_id(&credentials.access).ok_or(OAuthError::NoAccountId)?;
    credentials.extra.insert("accountId".into(), account.into());
    Ok(credentials)
}

/// Exchanges a GitHub token for a Copilot token (`refresh` stays the GitHub token).
pub(crate) async fn copilot_token(
    github_token: &str,
    enterprise: Option<&str>,
    server: &OAuthServer,
) -> Result<OAuthCredentials, OAuthError> {
    let url = server.url(&GitHubUrls::for_domain(enterprise.unwrap_or("github.com")).copilot_token);
    let client = client(&url)?;
    let mut request = client
        .get(&url)
        .header(ACCEPT, "application/json")
        .header(AUTHORIZATION, format!("Bearer {github_token}"))
        .timeout(REQUEST_TIMEOUT);
    for (name, value) in COPILOT_HEADERS {
        request = request.header(name, value);
    }
    let answer = read(&url, request).await?;
    let token = answer.get("token").and_then(Value::as_str);
    let expires_at = answer.get("expires_at").and_then(Value::as_f64);
    let (Some(token), Some(expires_at)) = (token, expires_at) else {
        return Err(invalid(&url, "no `token` and `expires_at`"));
    };
    let mut extra = Map::new();
    if let Some(domain) = enterprise {
        extra.insert("enterpriseUrl".into(), domain.into());
    }
    Ok(OAuthCredentials {
        access: token.to_owned(),
        refresh: github_token.to_owned(),
        expires: (expires_at * 1000.0) as i64 - EARLY_RENEWAL_MS,
        extra,
    })
}

/// `access_token`, `refresh_token` and `expires_in` (seconds) of a token answer, with `margin_ms` taken off
/// the lifetime.
pub(crate) fn read_token_answer(url: &str, answer: &Value, margin_ms: i64) -> Result<OAuthCredentials, OAuthError> {
    let text = |key: &str| answer.get(key).and_then(Value::as_str).filter(|value| !value.is_empty());
    let (Some(access), Some(refresh)) = (text("access_token"), text("refresh_token")) else {
        return Err(invalid(url, "no `access_token` and `refresh_token`"));
    };
    let Some(expires_in) = answer.get("expires_in").and_then(Value::as_f64) else {
        return Err(invalid(url, "no numeric `expires_in`"));
    };
    Ok(OAuthCredentials {
        access: access.to_owned(),
        refresh: refresh.to_owned(),
        expires: now_ms() + (expires_in * 1000.0) as i64 - margin_ms,
        extra: Map::new(),
    })
}

pub(crate) async fn post_json(url: &str, body: &Value) -> Result<Value, OAuthError> {
    let request = client(url)?
        .post(url)
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json")
        .body(body.to_string())
        .timeout(REQUEST_TIMEOUT);
    read(url, request).await
}

pub(crate) async fn post_form(url: &str, form: &[(&str, &str)]) -> Result<Value, OAuthError> {
    let request = client(url)?.post(url).header(ACCEPT, "application/json").form(form).timeout(REQUEST_TIMEOUT);
    read(url, request).await
}

fn client(url: &str) -> Result<&'static reqwest::Client, OAuthError> {
    http_client().map_err(|cause| OAuthError::Unreachable { url: url.to_owned(), cause })
}

/// Sends `request` and reads a JSON answer; a status other than 2xx is an error carrying the start of the body.
pub(crate) async fn read(url: &str, request: reqwest::RequestBuilder) -> Result<Value, OAuthError> {
    let unreachable = |error: reqwest::Error| OAuthError::Unreachable { url: url.to_owned(), cause: cause(&error) };
    let response = request.send().await.map_err(unreachable)?;
    let status = response.status();
    let body = response.text().await.map_err(unreachable)?;
    if !status.is_success() {
        return Err(OAuthError::Refused { url: url.to_owned(), status: status.as_u16(), body: excerpt(&body) });
    }
    serde_json::from_str(&body).map_err(|error| invalid(url, &format!("not JSON ({error})")))
}

fn invalid(url: &str, detail: &str) -> OAuthError {
    OAuthError::InvalidAnswer { url: url.to_owned(), detail: detail.to_owned() }
}

/// The innermost cause of a request error (reqwest's outer text only says "error sending request").
fn cause(error: &reqwest::Error) -> String {
    if error.is_timeout() {
        return "no answer within 30 seconds".to_owned();
    }
    let mut source: &dyn std::error::Error = error;
    while let Some(inner) = source.source() {
        source = inner;
    }
    source.to_string()
}

/// The start of an error body, on one line.
fn excerpt(body: &str) -> String {
    let line: String = body.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(300) {
        Some((cut, _)) => format!("{}…", &line[..cut]),
        None if line.is_empty() => "(empty body)".to_owned(),
        None => line,
    }
}
