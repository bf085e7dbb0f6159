//! The mock server's side of the subscription logins: Anthropic's and OpenAI's authorize pages (answered
//! with a redirect to the login's callback, as a browser that is already signed in would see) and token
//! endpoints, GitHub's device flow, and the Copilot token exchange. Tokens are issued with the lifetime set
//! by [`MockLlmServer::set_token_lifetime`], and refresh tokens are single-use, as Anthropic's and
//! OpenAI's are, so a refresh made twice fails.

use std::collections::HashSet;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

use super::{MockLlmServer, RecordedRequest, lock};

/// The refresh token the mock accepts once for each provider before it issued any.
pub const TEST_OAUTH_REFRESH_TOKEN: &str = "mock-oauth-refresh-0";
/// The GitHub token the Copilot token exchange accepts (the device flow hands it out).
pub const TEST_GITHUB_TOKEN: &str = "gho_mock-github-token";
/// The ChatGPT account id in the Codex access tokens the mock issues.
pub const TEST_CHATGPT_ACCOUNT_ID: &str = "mock-chatgpt-account";
/// The code the authorize pages hand back.
const AUTH_CODE: &str = "mock-authorization-code";

/// Routes of the subscription logins.
const ANTHROPIC_TOKEN: &str = "/v1/oauth/token";
const OPENAI_TOKEN: &str = "/oauth/token";
const AUTHORIZE: &str = "/oauth/authorize";
const DEVICE_CODE: &str = "/login/device/code";
const DEVICE_TOKEN: &str = "/login/oauth/access_token";
const COPILOT_TOKEN: &str = "/copilot_internal/v2/token";

/// A status, extra headers and a body.
pub(super) type Answer = (u16, Vec<(String, String)>, String);

#[derive(Debug, Default)]
pub(super) struct SubscriptionState {
    counter: AtomicUsize,
    /// Refresh tokens that may still be used once.
    live_refresh: Mutex<HashSet<String>>,
    /// Refresh tokens already used (a second use is refused).
    spent_refresh: Mutex<HashSet<String>>,
    /// The PKCE challenge of the last authorize request.
    challenge: Mutex<Option<String>>,
}

/// Whether `route` is one of the login and token routes (they are not model requests).
pub(super) fn is_login_route(route: &str) -> bool {
    matches!(route, ANTHROPIC_TOKEN | OPENAI_TOKEN | AUTHORIZE | DEVICE_CODE | DEVICE_TOKEN | COPILOT_TOKEN)
        || (route.starts_with("/models/") && route.ends_with("/policy"))
}

/// The answer `(status, headers, body)` when the request is a login request.
pub(super) fn answer(
    state: &SubscriptionState,
    lifetime_secs: u64,
    route: &str,
    request: &RecordedRequest,
) -> Option<Answer> {
    let plain = |(status, body): (u16, Value)| (status, Vec::new(), body.to_string());
    match (request.method.as_str(), route) {
        ("GET", AUTHORIZE) => Some(authorize(state, &request.path)),
        ("POST", ANTHROPIC_TOKEN) => Some(plain(token(state, lifetime_secs, &request.body, false))),
        ("POST", OPENAI_TOKEN) => {
            let form = request.body.as_str().map(form_to_json).unwrap_or(Value::Null);
            Some(plain(token(state, lifetime_secs, &form, true)))
        }
        ("POST", DEVICE_CODE) => Some(plain((
            200,
            json!({
                "device_code": "mock-device-code",
                "user_code": "MOCK-CODE",
                "verification_uri": "https://github.com/login/device",
                "interval": 1,
                "expires_in": 60,
            }),
        ))),
        ("POST", DEVICE_TOKEN) => {
            Some(plain((200, json!({"access_token": TEST_GITHUB_TOKEN, "token_type": "bearer"}))))
        }
        ("GET", COPILOT_TOKEN) => Some(plain(copilot_token(state, lifetime_secs, request))),
        ("POST", policy) if policy.starts_with("/models/") && policy.ends_with("/policy") => {
            Some(plain((200, json!({"state": "enabled"}))))
        }
        _ => None,
    }
}

/// A signed-in browser: straight back to the `redirect_uri` with a code and the request's `state`.
fn authorize(state: &SubscriptionState, path: &str) -> Answer {
    let url = reqwest::Url::parse(&format!("http://mock{path}")).ok();
    let param = |name: &str| {
        url.as_ref().and_then(|url| url.query_pairs().find(|(key, _)| key == name).map(|(_, value)| value.into_owned()))
    };
    let (Some(redirect), Some(login_state)) = (param("redirect_uri"), param("state")) else {
        return (400, Vec::new(), json!({"error": "invalid_request"}).to_string());
    };
    *lock(&state.challenge) = param("code_challenge");
    let mut target = match reqwest::Url::parse(&redirect) {
        Ok(target) => target,
        Err(_) => return (400, Vec::new(), json!({"error": "invalid_request"}).to_string()),
    };
    target.query_pairs_mut().append_pair("code", AUTH_CODE).append_pair("state", &login_state);
    (302, vec![("Location".to_owned(), target.to_string())], String::new())
}

/// Anthropic's (JSON) or OpenAI's (form) token endpoint.
fn token(state: &SubscriptionState, lifetime_secs: u64, fields: &Value, openai: bool) -> (u16, Value) {
    let field = |name: &str| fields.get(name).and_then(Value::as_str);
    let refused = |description: &str| (400, json!({"error": "invalid_grant", "error_description": description}));
    match field("grant_type") {
        Some("refresh_token") => {
            let Some(refresh) = field("refresh_token") else { return refused("refresh_token is missing") };
            if lock(&state.spent_refresh).contains(refresh) {
                return refused("refresh token already used");
            }
            let first = refresh == TEST_OAUTH_REFRESH_TOKEN;
            if !first && !lock(&state.live_refresh).remove(refresh) {
                return refused("unknown refresh token");
            }
            lock(&state.spent_refresh).insert(refresh.to_owned());
        }
        Some("authorization_code") => {
            if field("code") != Some(AUTH_CODE) {
                return refused("unknown authorization code");
            }
            let verifier = field("code_verifier").unwrap_or_default();
            let challenge = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
            if lock(&state.challenge).as_deref() != Some(challenge.as_str()) {
                return refused("code_verifier does not match the code_challenge");
            }
        }
        _ => return (400, json!({"error": "unsupported_grant_type"})),
    }
    let n = state.counter.fetch_add(1, Ordering::SeqCst) + 1;
    let refresh = format!("mock-oauth-refresh-{n}");
    lock(&state.live_refresh).insert(refresh.clone());
    let access = if openai { codex_access_token(n) } else { format!("sk-ant-oat01-mock-{n}") };
    (
        200,
        json!({"access_token": access, "refresh_token": refresh, "expires_in": lifetime_secs, "token_type": "Bearer"}),
    )
}

/// A JWT-shaped Codex access token naming the test account.
fn codex_access_token(n: usize) -> String {
    let part = |value: Value| URL_SAFE_NO_PAD.encode(value.to_string().as_bytes());
    let claims = json!({"https://api.openai.com/auth": {"chatgpt_account_id": TEST_CHATGPT_ACCOUNT_ID}, "n": n});
    format!("{}.{}.mock-signature", part(json!({"alg": "none", "typ": "JWT"})), part(claims))
}

fn copilot_token(state: &SubscriptionState, lifetime_secs: u64, request: &RecordedRequest) -> (u16, Value) {
    if request.header("authorization") != Some(&format!("Bearer {TEST_GITHUB_TOKEN}")) {
        return (401, json!({"message": "Bad credentials"}));
    }
    let n = state.counter.fetch_add(1, Ordering::SeqCst) + 1;
    let now = chrono::Utc::now().timestamp();
    let expires_at = now + i64::try_from(lifetime_secs).unwrap_or(i64::MAX / 2);
    (
        200,
        json!({"token": format!("tid=mock-{n};exp={expires_at};sku=mock"), "expires_at": expires_at, "refresh_in": 1500}),
    )
}

fn form_to_json(body: &str) -> Value {
    let url = reqwest::Url::parse(&format!("http://mock/?{body}"));
    let pairs =
        url.map(|url| url.query_pairs().map(|(k, v)| (k.into_owned(), Value::String(v.into_owned()))).collect());
    Value::Object(pairs.unwrap_or_default())
}

impl MockLlmServer {
    /// `http://127.0.0.1:PORT`: the origin to give `PI_GEN_OAUTH_SERVER` so every login request comes here.
    pub fn oauth_origin(&self) -> String {
        format!("http://127.0.0.1:{}", self.addr.port())
    }

    /// The login and token requests that arrived, in order.
    pub fn login_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests)
            .iter()
            .filter(|request| is_login_route(request.path.split('?').next().unwrap_or_default()))
            .cloned()
            .collect()
    }
}
