//! The mock server's Google OAuth side, for the `google-vertex` API: a token endpoint (`POST /token`, form
//! body) that accepts a service-account JWT signed RS256 with the fixed test key (header, claims and
//! signature checked) or the test refresh token, and serves short access tokens with `expires_in`; and the
//! check that a Vertex request (`…/publishers/…:streamGenerateContent`) carries a live token or an API key.

use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
use rustls_pki_types::SubjectPublicKeyInfoDer;
use rustls_pki_types::pem::PemObject;
use serde_json::{Value, json};

use super::{MockLlmServer, RecordedRequest, lock};

/// The service-account key the mock trusts (test only: it protects nothing).
pub const TEST_PRIVATE_KEY_PEM: &str = include_str!("../fixtures/vertex-test-key.pem");
/// Its public half, which the mock verifies assertions with.
pub const TEST_PUBLIC_KEY_PEM: &str = include_str!("../fixtures/vertex-test-key.pub.pem");
/// The service account the test key belongs to.
pub const TEST_CLIENT_EMAIL: &str = "pi-gen-test@pi-gen-test.iam.gserviceaccount.com";
/// The project named in the test key file.
pub const TEST_PROJECT_ID: &str = "pi-gen-test";
/// gcloud-style user credentials the mock accepts.
pub const TEST_CLIENT_ID: &str = "mock-client-id.apps.googleusercontent.com";
pub const TEST_CLIENT_SECRET: &str = "mock-client-secret";
pub const TEST_REFRESH_TOKEN: &str = "mock-refresh-token";
/// The scope an assertion must ask for.
const CLOUD_PLATFORM_SCOPE: &str = "https://www.googleapis.com/auth/cloud-platform";
/// The path of the token endpoint.
const TOKEN_ROUTE: &str = "/token";
/// How far an assertion's `iat` may be from the mock's clock.
const CLOCK_SKEW_SECS: i64 = 300;

/// Tokens issued and the endpoint's settings.
#[derive(Debug)]
pub(super) struct OAuthState {
    lifetime_secs: AtomicU64,
    counter: AtomicUsize,
    issued: Mutex<Vec<(String, Instant)>>,
    /// Answers `(status, body)` to give the next token requests instead of tokens.
    failures: Mutex<VecDeque<(u16, String)>>,
}

impl Default for OAuthState {
    fn default() -> Self {
        Self {
            lifetime_secs: AtomicU64::new(3600),
            counter: AtomicUsize::new(0),
            issued: Mutex::default(),
            failures: Mutex::default(),
        }
    }
}

impl OAuthState {
    /// How long tokens served now live, in seconds.
    pub(super) fn lifetime_secs(&self) -> u64 {
        self.lifetime_secs.load(Ordering::SeqCst)
    }
}

impl MockLlmServer {
    /// `http://127.0.0.1:PORT/token`, the `token_uri` of the test credentials.
    pub fn token_uri(&self) -> String {
        format!("http://127.0.0.1:{}{TOKEN_ROUTE}", self.addr.port())
    }

    /// How long tokens served from now on live (`expires_in`, seconds; 3600 unless set).
    pub fn set_token_lifetime(&self, seconds: u64) {
        self.shared.oauth.lifetime_secs.store(seconds, Ordering::SeqCst);
    }

    /// Answers the next `count` token requests with `status` and `body` instead of a token.
    pub fn fail_token_requests(&self, count: usize, status: u16, body: &Value) {
        let mut failures = lock(&self.shared.oauth.failures);
        failures.extend(std::iter::repeat_n((status, body.to_string()), count));
    }

    /// How many token requests arrived (answered or failed).
    pub fn token_requests(&self) -> usize {
        lock(&self.shared.requests).iter().filter(|request| is_token_route(&request.path)).count()
    }

    /// The requests that were not token requests (the model calls), in arrival order.
    pub fn model_requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests)
            .iter()
            .filter(|request| {
                let route = request.path.split('?').next().unwrap_or_default();
                !is_token_route(route) && !super::subscriptions::is_login_route(route)
            })
            .cloned()
            .collect()
    }

    /// A service-account key file (JSON) with the test key, whose `token_uri` is this server.
    pub fn service_account_json(&self) -> Value {
        json!({
            "type": "service_account",
            "project_id": TEST_PROJECT_ID,
            "private_key_id": "0123456789abcdef",
            "private_key": TEST_PRIVATE_KEY_PEM,
            "client_email": TEST_CLIENT_EMAIL,
            "client_id": "100000000000000000001",
            "auth_uri": "https://accounts.google.com/o/oauth2/auth",
            "token_uri": self.token_uri(),
        })
    }

    /// gcloud's `application_default_credentials.json` for the test user, with this server as `token_uri`.
    pub fn authorized_user_json(&self) -> Value {
        json!({
            "client_id": TEST_CLIENT_ID,
            "client_secret": TEST_CLIENT_SECRET,
            "refresh_token": TEST_REFRESH_TOKEN,
            "type": "authorized_user",
            "token_uri": self.token_uri(),
        })
    }
}

fn is_token_route(path: &str) -> bool {
    path.split('?').next() == Some(TOKEN_ROUTE)
}

/// The mock's answer when OAuth decides it: the token endpoint's, or a 401 for a Vertex request without a
/// live token or key. `None` lets the request through to the script.
pub(super) fn answer(state: &OAuthState, route: &str, request: &RecordedRequest) -> Option<(u16, String)> {
    if is_token_route(route) && request.method == "POST" {
        return Some(serve_token(state, request));
    }
    let vertex = route.contains("/publishers/") && route.ends_with(":streamGenerateContent");
    (vertex && !authorized(state, request)).then(|| {
        let body = json!({"error": {"code": 401, "message": "Request had invalid authentication credentials. Expected OAuth 2 access token or API key.", "status": "UNAUTHENTICATED"}});
        (401, body.to_string())
    })
}

fn authorized(state: &OAuthState, request: &RecordedRequest) -> bool {
    if request.header("x-goog-api-key").is_some_and(|key| !key.is_empty()) {
        return true;
    }
    let Some(token) = request.header("authorization").and_then(|value| value.strip_prefix("Bearer ")) else {
        return false;
    };
    let now = Instant::now();
    lock(&state.issued).iter().any(|(issued, expires)| issued == token && *expires > now)
}

fn serve_token(state: &OAuthState, request: &RecordedRequest) -> (u16, String) {
    if let Some(failure) = lock(&state.failures).pop_front() {
        return failure;
    }
    let form = match &request.body {
        Value::String(body) => parse_form(body),
        _ => Vec::new(),
    };
    let field = |name: &str| form.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
    let own_uri = request.header("host").map(|host| format!("http://{host}{TOKEN_ROUTE}")).unwrap_or_default();
    let checked = match field("grant_type") {
        Some("urn:ietf:params:oauth:grant-type:jwt-bearer") => check_assertion(field("assertion"), &own_uri),
        Some("refresh_token") => check_refresh(field("client_id"), field("client_secret"), field("refresh_token")),
        other => Err(("unsupported_grant_type", format!("grant_type {other:?}"))),
    };
    if let Err((error, description)) = checked {
        let status = if error == "invalid_client" { 401 } else { 400 };
        return (status, json!({"error": error, "error_description": description}).to_string());
    }
    let n = state.counter.fetch_add(1, Ordering::SeqCst) + 1;
    let lifetime = state.lifetime_secs.load(Ordering::SeqCst);
    let token = format!("mock-access-token-{n}");
    lock(&state.issued).push((token.clone(), Instant::now() + Duration::from_secs(lifetime)));
    (200, json!({"access_token": token, "expires_in": lifetime, "token_type": "Bearer"}).to_string())
}

type Rejection = (&'static str, String);

fn check_refresh(client_id: Option<&str>, secret: Option<&str>, refresh: Option<&str>) -> Result<(), Rejection> {
    if client_id != Some(TEST_CLIENT_ID) || secret != Some(TEST_CLIENT_SECRET) {
        return Err(("invalid_client", "Unauthorized".to_owned()));
    }
    if refresh != Some(TEST_REFRESH_TOKEN) {
        return Err(("invalid_grant", "Bad Request".to_owned()));
    }
    Ok(())
}

/// Checks a service-account JWT as Google does: RS256 header, the test account as issuer, the
/// cloud-platform scope, this endpoint as audience, a current `iat` with `exp` at most an hour on, and the
/// signature under the test key.
fn check_assertion(assertion: Option<&str>, own_uri: &str) -> Result<(), Rejection> {
    let invalid = |description: &str| ("invalid_grant", description.to_owned());
    let assertion = assertion.ok_or_else(|| ("invalid_request", "Missing required parameter: assertion".to_owned()))?;
    let mut parts = assertion.split('.');
    let (Some(header), Some(claims), Some(signature), None) = (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid("Invalid JWT: not three segments"));
    };
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).map_err(|_| invalid("Invalid JWT: bad base64url"));
    let json = |bytes: Vec<u8>| serde_json::from_slice::<Value>(&bytes).map_err(|_| invalid("Invalid JWT: not JSON"));
    let header = json(decode(header)?)?;
    if header["alg"] != "RS256" {
        return Err(invalid("Invalid JWT: alg must be RS256"));
    }
    let claims = json(decode(claims)?)?;
    if claims["iss"] != TEST_CLIENT_EMAIL {
        return Err(invalid("Invalid JWT: unknown issuer"));
    }
    if !claims["scope"].as_str().is_some_and(|scope| scope.split(' ').any(|s| s == CLOUD_PLATFORM_SCOPE)) {
        return Err(("invalid_scope", "Invalid OAuth scope or ID token audience provided.".to_owned()));
    }
    if claims["aud"] != own_uri {
        return Err(invalid("Invalid JWT: Token must be a short-lived token and in a reasonable timeframe (aud)"));
    }
    let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |since| since.as_secs()) as i64;
    let (Some(iat), Some(exp)) = (claims["iat"].as_i64(), claims["exp"].as_i64()) else {
        return Err(invalid("Invalid JWT: iat and exp are required"));
    };
    if (iat - now).abs() > CLOCK_SKEW_SECS || exp <= iat || exp - iat > 3600 {
        return Err(invalid("Invalid JWT: Token must be a short-lived token and in a reasonable timeframe"));
    }
    let signing_input = &assertion[..assertion.len() - signature.len() - 1];
    let public_key = test_public_key().ok_or_else(|| invalid("the mock cannot read its test public key"))?;
    UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, public_key)
        .verify(signing_input.as_bytes(), &decode(signature)?)
        .map_err(|_| invalid("Invalid JWT Signature."))
}

/// The RSAPublicKey inside the test key's SubjectPublicKeyInfo (the BIT STRING after the algorithm).
fn test_public_key() -> Option<Vec<u8>> {
    let spki = SubjectPublicKeyInfoDer::from_pem_slice(TEST_PUBLIC_KEY_PEM.as_bytes()).ok()?;
    let (0x30, info, _) = der_element(spki.as_ref())? else { return None };
    let (0x30, _, rest) = der_element(info)? else { return None };
    let (0x03, bits, _) = der_element(rest)? else { return None };
    bits.strip_prefix(&[0]).map(<[u8]>::to_vec)
}

/// One DER element: tag, content, and what follows.
fn der_element(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, rest) = input.split_first()?;
    let (&first, rest) = rest.split_first()?;
    let (length, rest) = if first < 0x80 {
        (usize::from(first), rest)
    } else {
        let count = usize::from(first & 0x7f);
        if count == 0 || count > 4 || rest.len() < count {
            return None;
        }
        let length = rest[..count].iter().fold(0usize, |length, byte| (length << 8) | usize::from(*byte));
        (length, &rest[count..])
    };
    (rest.len() >= length).then(|| (tag, &rest[..length], &rest[length..]))
}

/// `application/x-www-form-urlencoded` pairs, decoded.
fn parse_form(body: &str) -> Vec<(String, String)> {
    body.split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(key), percent_decode(value))
        })
        .collect()
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        let escaped = (bytes[index] == b'%')
            .then(|| text.get(index + 1..index + 3))
            .flatten()
            .and_then(|hex| u8::from_str_radix(hex, 16).ok());
        match (bytes[index], escaped) {
            (_, Some(byte)) => {
                out.push(byte);
                index += 2;
            }
            (b'+', None) => out.push(b' '),
            (byte, None) => out.push(byte),
        }
        index += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms_decode_and_the_test_key_halves_match() {
        assert_eq!(
            parse_form("grant_type=urn%3Aietf%3Aparams&a=b+c&empty=&bad=%zz"),
            [
                ("grant_type".to_owned(), "urn:ietf:params".to_owned()),
                ("a".to_owned(), "b c".to_owned()),
                ("empty".to_owned(), String::new()),
                ("bad".to_owned(), "%zz".to_owned()),
            ]
        );
        let public = test_public_key().expect("the committed public key parses");
        let der = rustls_pki_types::PrivatePkcs8KeyDer::from_pem_slice(TEST_PRIVATE_KEY_PEM.as_bytes()).expect("PEM");
        let pair = ring::signature::RsaKeyPair::from_pkcs8(der.secret_pkcs8_der()).expect("an RSA key");
        assert_eq!(public, pair.public().as_ref(), "the committed PEMs are one key pair");
    }
}
