//! The login flows: Anthropic's and OpenAI's browser logins (PKCE, a callback server on 127.0.0.1 racing a
//! pasted code or redirect URL) and GitHub's device code for Copilot. The caller's [`LoginPrompter`] shows
//! the URL and asks the user.

use std::time::Duration;

use reqwest::Url;
use reqwest::header::{ACCEPT, USER_AGENT};
use serde_json::{Value, json};

use super::callback::CallbackServer;
use super::endpoints::{
    ANTHROPIC_AUTHORIZE_URL, ANTHROPIC_CALLBACK_PATH, ANTHROPIC_CALLBACK_PORT, ANTHROPIC_CLIENT_ID, ANTHROPIC_SCOPES,
    ANTHROPIC_TOKEN_URL, CALLBACK_HOST_VARIABLE, CODEX_AUTHORIZE_URL, CODEX_CALLBACK_PATH, CODEX_CALLBACK_PORT,
    CODEX_CLIENT_ID, CODEX_SCOPE, CODEX_TOKEN_URL, COPILOT_CLIENT_ID, COPILOT_HEADERS, GitHubUrls, redirect_uri,
};
use super::pkce::{Pkce, random_state};
use super::refresh::{codex_credentials, copilot_token, post_json, read, read_token_answer};
use super::{OAuthCredentials, OAuthError, OAuthServer, SubscriptionProvider};
use crate::agent::BoxFuture;
use crate::ai::transport::http_client;

/// How the login talks to the user.
pub trait LoginPrompter: Send + Sync {
    /// Shows the address to open (a browser is opened for it where possible) and what to do there.
    fn show_auth(&self, url: &str, instructions: &str);
    /// Asks for one line (a pasted code or redirect URL, an Enterprise domain); `None` when the user cancels.
    fn ask(&self, question: &str, placeholder: Option<&str>) -> BoxFuture<'_, Option<String>>;
    /// Reports a step of the login.
    fn progress(&self, message: &str);
}

/// Runs `provider`'s login and returns the credentials to store.
pub async fn login(
    provider: SubscriptionProvider,
    prompter: &dyn LoginPrompter,
    server: &OAuthServer,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<OAuthCredentials, OAuthError> {
    let callback_host = env(CALLBACK_HOST_VARIABLE).filter(|host| !host.is_empty()).unwrap_or("127.0.0.1".into());
    match provider {
        SubscriptionProvider::Anthropic => anthropic(prompter, server, &callback_host).await,
        SubscriptionProvider::OpenAiCodex => codex(prompter, server, &callback_host).await,
        SubscriptionProvider::GitHubCopilot => copilot(prompter, server).await,
    }
}

async fn anthropic(
    prompter: &dyn LoginPrompter,
    server: &OAuthServer,
    host: &str,
) -> Result<OAuthCredentials, OAuthError> {
    let pkce = Pkce::generate()?;
    let redirect = redirect_uri(ANTHROPIC_CALLBACK_PORT, ANTHROPIC_CALLBACK_PATH);
    let name = "Anthropic";
    let callback =
        CallbackServer::bind(host, ANTHROPIC_CALLBACK_PORT, ANTHROPIC_CALLBACK_PATH, pkce.verifier.clone(), name)
            .await
            .map_err(|error| {
                OAuthError::Login(format!("cannot listen on {host}:{ANTHROPIC_CALLBACK_PORT} for the login: {error}"))
            })?;
    let url = with_query(
        &server.url(ANTHROPIC_AUTHORIZE_URL),
        &[
            ("code", "true"),
            ("client_id", ANTHROPIC_CLIENT_ID),
            ("response_type", "code"),
            ("redirect_uri", &redirect),
            ("scope", ANTHROPIC_SCOPES),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
            ("state", &pkce.verifier),
        ],
    );
    prompter.show_auth(&url, "Finish the login in your browser. On another machine, paste the address it ends on.");
    let (code, state) = code_from_browser_or_paste(prompter, Some(&callback), &pkce.verifier).await?;
    prompter.progress("Exchanging the authorization code for tokens…");
    let token_url = server.url(ANTHROPIC_TOKEN_URL);
    let body = json!({
        "grant_type": "authorization_code",
        "client_id": ANTHROPIC_CLIENT_ID,
        "code": code,
        "state": state,
        "redirect_uri": redirect,
        "code_verifier": pkce.verifier,
    });
    let answer = post_json(&token_url, &body).await?;
    read_token_answer(&token_url, &answer, 5 * 60 * 1000)
}

async fn codex(prompter: &dyn LoginPrompter, server: &OAuthServer, host: &str) -> Result<OAuthCredentials, OAuthError> {
    let pkce = Pkce::generate()?;
    let state = random_state()?;
    let redirect = redirect_uri(CODEX_CALLBACK_PORT, CODEX_CALLBACK_PATH);
    let url = with_query(
        &server.url(CODEX_AUTHORIZE_URL),
        &[
            ("response_type", "code"),
            ("client_id", CODEX_CLIENT_ID),
            ("redirect_uri", &redirect),
            ("scope", CODEX_SCOPE),
            ("code_challenge", &pkce.challenge),
            ("code_challenge_method", "S256"),
            ("state", &state),
            ("id_token_add_organizations", "true"),
            ("codex_cli_simplified_flow", "true"),
            ("originator", "pi"),
        ],
    );
    // As in pi, a port that is taken leaves the pasted code as the only way back.
    let callback =
        CallbackServer::bind(host, CODEX_CALLBACK_PORT, CODEX_CALLBACK_PATH, state.clone(), "OpenAI").await.ok();
    prompter.show_auth(&url, "Finish the login in your browser (a window should open).");
    let (code, _) = code_from_browser_or_paste(prompter, callback.as_ref(), &state).await?;
    let token_url = server.url(CODEX_TOKEN_URL);
    let form = [
        ("grant_type", "authorization_code"),
        ("client_id", CODEX_CLIENT_ID),
        ("code", code.as_str()),
        ("code_verifier", pkce.verifier.as_str()),
        ("redirect_uri", redirect.as_str()),
    ];
    let answer = super::refresh::post_form(&token_url, &form).await?;
    codex_credentials(read_token_answer(&token_url, &answer, 0)?)
}

/// The code (and state) from the callback or from what the user pastes, whichever comes first.
async fn code_from_browser_or_paste(
    prompter: &dyn LoginPrompter,
    callback: Option<&CallbackServer>,
    expected_state: &str,
) -> Result<(String, String), OAuthError> {
    let question = "Paste the authorization code or the address the browser ended on:";
    let pasted = match callback {
        Some(callback) => tokio::select! {
            code = callback.wait_for_code() => {
                return Ok((code.code, code.state.unwrap_or_else(|| expected_state.to_owned())));
            }
            pasted = prompter.ask(question, None) => pasted,
        },
        None => prompter.ask(question, None).await,
    };
    let pasted = pasted.ok_or(OAuthError::Cancelled)?;
    let (code, state) = parse_authorization_input(&pasted);
    if state.as_deref().is_some_and(|state| state != expected_state) {
        return Err(OAuthError::Login("the pasted address's state does not match this login".to_owned()));
    }
    let code = code
        .filter(|code| !code.is_empty())
        .ok_or_else(|| OAuthError::Login("no authorization code was given".to_owned()))?;
    Ok((code, state.unwrap_or_else(|| expected_state.to_owned())))
}

/// A pasted redirect URL, `code#state`, a query string, or the bare code.
pub(crate) fn parse_authorization_input(input: &str) -> (Option<String>, Option<String>) {
    let value = input.trim();
    if value.is_empty() {
        return (None, None);
    }
    if let Some(url) = Url::parse(value).ok().filter(|url| url.has_host()) {
        let param = |name: &str| url.query_pairs().find(|(key, _)| key == name).map(|(_, value)| value.into_owned());
        return (param("code"), param("state"));
    }
    if let Some((code, state)) = value.split_once('#') {
        return (Some(code.to_owned()), Some(state.to_owned()));
    }
    if value.contains("code=") {
        let pairs: Vec<(String, String)> = reqwest::Url::parse(&format!("http://localhost/?{value}")).map_or_else(
            |_| Vec::new(),
            |url| url.query_pairs().map(|(key, value)| (key.into_owned(), value.into_owned())).collect(),
        );
        let param = |name: &str| pairs.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone());
        return (param("code"), param("state"));
    }
    (Some(value.to_owned()), None)
}

async fn copilot(prompter: &dyn LoginPrompter, server: &OAuthServer) -> Result<OAuthCredentials, OAuthError> {
    let answer = prompter
        .ask("GitHub Enterprise URL or domain (empty for github.com):", Some("company.ghe.com"))
        .await
        .ok_or(OAuthError::Cancelled)?;
    let enterprise = match answer.trim() {
        "" => None,
        typed => Some(
            enterprise_domain(typed)
                .ok_or_else(|| OAuthError::Login(format!("\"{typed}\" is not a GitHub Enterprise URL or domain")))?,
        ),
    };
    let urls = GitHubUrls::for_domain(enterprise.as_deref().unwrap_or("github.com"));
    let device_url = server.url(&urls.device_code);
    let form = [("client_id", COPILOT_CLIENT_ID), ("scope", "read:user")];
    let device = read(&device_url, github_post(&device_url)?.form(&form)).await?;
    let text = |key: &str| device.get(key).and_then(Value::as_str).map(str::to_owned);
    let number = |key: &str| device.get(key).and_then(Value::as_f64);
    let (Some(device_code), Some(user_code), Some(verification_uri), Some(interval), Some(expires_in)) =
        (text("device_code"), text("user_code"), text("verification_uri"), number("interval"), number("expires_in"))
    else {
        return Err(OAuthError::InvalidAnswer { url: device_url, detail: "an incomplete device code".to_owned() });
    };
    prompter.show_auth(&verification_uri, &format!("Enter code: {user_code}"));
    let token_url = server.url(&urls.access_token);
    let github_token = poll_device_token(&token_url, &device_code, interval, expires_in).await?;
    let credentials = copilot_token(&github_token, enterprise.as_deref(), server).await?;
    prompter.progress("Enabling models…");
    enable_copilot_models(&credentials.access, enterprise.as_deref(), server).await;
    Ok(credentials)
}

/// Accepts each Copilot model's policy for the account, as pi does after its login (some models answer only
/// once enabled). A model that cannot be enabled is left as it is.
async fn enable_copilot_models(token: &str, enterprise: Option<&str>, server: &OAuthServer) {
    let Ok(client) = http_client() else { return };
    let base = server.url(&crate::ai::github_copilot::copilot_base_url(token, enterprise));
    let requests = crate::ai::catalog::builtin_provider_models(SubscriptionProvider::GitHubCopilot.id()).map(|model| {
        let mut request = client
            .post(format!("{base}/models/{}/policy", model.id))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::AUTHORIZATION, format!("Bearer {token}"))
            .timeout(Duration::from_secs(30));
        for (name, value) in COPILOT_HEADERS {
            request = request.header(name, value);
        }
        request
            .header("openai-intent", "chat-policy")
            .header("x-interaction-type", "chat-policy")
            .body(r#"{"state":"enabled"}"#)
            .send()
    });
    futures_util::future::join_all(requests).await;
}

/// Polls GitHub until the user has entered the code (pi's pacing: the interval times 1.2, times 1.4 and
/// longer after a `slow_down`).
async fn poll_device_token(
    url: &str,
    device_code: &str,
    interval_secs: f64,
    expires_in_secs: f64,
) -> Result<String, OAuthError> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(expires_in_secs.max(0.0));
    let mut interval_ms = (interval_secs * 1000.0).max(1000.0);
    let mut multiplier = 1.2;
    let mut slowed_down = false;
    let form = [
        ("client_id", COPILOT_CLIENT_ID),
        ("device_code", device_code),
        ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"),
    ];
    while tokio::time::Instant::now() < deadline {
        let wait = Duration::from_millis((interval_ms * multiplier).ceil() as u64);
        tokio::time::sleep(wait.min(deadline - tokio::time::Instant::now())).await;
        let answer = read(url, github_post(url)?.form(&form)).await?;
        if let Some(token) = answer.get("access_token").and_then(Value::as_str) {
            return Ok(token.to_owned());
        }
        match answer.get("error").and_then(Value::as_str) {
            Some("authorization_pending") => {}
            Some("slow_down") => {
                slowed_down = true;
                interval_ms = match answer.get("interval").and_then(Value::as_f64) {
                    Some(seconds) if seconds > 0.0 => seconds * 1000.0,
                    _ => (interval_ms + 5000.0).max(1000.0),
                };
                multiplier = 1.4;
            }
            Some(error) => {
                let description = answer.get("error_description").and_then(Value::as_str);
                let suffix = description.map(|text| format!(": {text}")).unwrap_or_default();
                return Err(OAuthError::Login(format!("GitHub refused the device login ({error}{suffix})")));
            }
            None => {}
        }
    }
    let hint = if slowed_down { " (GitHub asked to slow down: check that this machine's clock is right)" } else { "" };
    Err(OAuthError::Login(format!("the device code expired before the login finished{hint}")))
}

fn github_post(url: &str) -> Result<reqwest::RequestBuilder, OAuthError> {
    let client = http_client().map_err(|cause| OAuthError::Unreachable { url: url.to_owned(), cause })?;
    Ok(client.post(url).header(ACCEPT, "application/json").header(USER_AGENT, COPILOT_HEADERS[0].1))
}

/// The host of a GitHub Enterprise URL or bare domain.
pub(crate) fn enterprise_domain(input: &str) -> Option<String> {
    let trimmed = input.trim();
    let url = if trimmed.contains("://") { trimmed.to_owned() } else { format!("https://{trimmed}") };
    Url::parse(&url).ok()?.host_str().map(str::to_owned)
}

/// `base` with `pairs` as its query, form-encoded as a browser would read it.
fn with_query(base: &str, pairs: &[(&str, &str)]) -> String {
    match Url::parse(base) {
        Ok(mut url) => {
            url.query_pairs_mut().extend_pairs(pairs);
            url.to_string()
        }
        Err(_) => base.to_owned(),
    }
}
