//! Unit tests of the google-vertex provider: URLs as the genai SDK builds them, pi's key and credential
//! choice, ADC files, the signed assertion, token freshness, and the Vertex differences in the body.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use ring::signature::{RSA_PKCS1_2048_8192_SHA256, UnparsedPublicKey};
use serde_json::{Value, json};

use super::credentials::{self, Credentials, CredentialsError};
use super::jwt::{self, Claims, JwtError};
use super::token::is_fresh;
use super::*;
use crate::ai::{LlmContext, ThinkingLevel, ToolSpec};
use crate::protocol::{AssistantContent, AssistantMessage, ImageContent, Message, ToolCall, UserContent, UserMessage};

const TEST_KEY: &str = include_str!("../../testing/fixtures/vertex-test-key.pem");

fn env_of(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + use<> {
    let map: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
    move |name| map.get(name).cloned()
}

fn vertex_model(id: &str, base_url: &str) -> Model {
    let mut model = Model::new("google-vertex", id, API, base_url);
    model.reasoning = true;
    model.input = vec!["text".into(), "image".into()];
    model
}

fn project(location: &str) -> Target {
    Target::Project { project: "my-proj".into(), location: location.into() }
}

#[test]
fn urls_follow_the_genai_sdk() {
    let none = env_of(&[]);
    let builtin = vertex_model("gemini-2.5-pro", "https://{location}-aiplatform.googleapis.com");
    let url = |model: &Model, target: &Target| request_url(model, target, &none);
    assert_eq!(
        url(&builtin, &project("us-central1")).as_deref(),
        Ok(
            "https://us-central1-aiplatform.googleapis.com/v1/projects/my-proj/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        )
    );
    assert_eq!(
        url(&builtin, &project("global")).as_deref(),
        Ok(
            "https://aiplatform.googleapis.com/v1/projects/my-proj/locations/global/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        )
    );
    assert_eq!(
        url(&builtin, &project("eu")).as_deref(),
        Ok(
            "https://aiplatform.eu.rep.googleapis.com/v1/projects/my-proj/locations/eu/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        )
    );
    assert_eq!(
        url(&builtin, &Target::ApiKey("k".into())).as_deref(),
        Ok(
            "https://aiplatform.googleapis.com/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        ),
        "express mode: no project path"
    );
    // A models.json base URL is the collection root: no project path; `v1` only when it names no version.
    let custom = vertex_model("gemini-2.5-pro", "http://127.0.0.1:9/");
    assert_eq!(
        url(&custom, &project("us-central1")).as_deref(),
        Ok("http://127.0.0.1:9/v1/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse")
    );
    let versioned = vertex_model("gemini-2.5-pro", "https://proxy.example/v1beta1/projects/p/locations/l");
    assert_eq!(
        url(&versioned, &project("l")).as_deref(),
        Ok(
            "https://proxy.example/v1beta1/projects/p/locations/l/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        )
    );
    // GOOGLE_VERTEX_BASE_URL replaces the host only.
    let env = env_of(&[("GOOGLE_VERTEX_BASE_URL", "http://127.0.0.1:7")]);
    assert_eq!(
        request_url(&builtin, &project("us-east5"), &env).as_deref(),
        Ok(
            "http://127.0.0.1:7/v1/projects/my-proj/locations/us-east5/publishers/google/models/gemini-2.5-pro:streamGenerateContent?alt=sse"
        )
    );
    // Model ids as the SDK's `tModel` reads them.
    let path = |id: &str| url(&vertex_model(id, ""), &Target::ApiKey("k".into()));
    assert!(path("anthropic/claude-x/extra").is_ok_and(|u| u.contains("/v1/publishers/anthropic/models/claude-x:")));
    assert!(path("publishers/meta/models/llama").is_ok_and(|u| u.contains("/v1/publishers/meta/models/llama:")));
    assert!(path("../secret").is_err());
    assert!(names_api_version("https://h/v1") && names_api_version("https://h/a/v1beta1/b"));
    assert!(!names_api_version("https://h/api/vertex") && !names_api_version("http://127.0.0.1:9"));
}

#[test]
fn keys_markers_and_placeholders_choose_the_credentials() {
    let none = env_of(&[]);
    assert_eq!(api_key(Some("  AIza-key "), &none).as_deref(), Some("AIza-key"));
    assert_eq!(api_key(Some(CREDENTIALS_MARKER), &none), None);
    assert_eq!(api_key(Some(AUTHENTICATED_MARKER), &none), None, "pi's ADC marker is a placeholder");
    assert_eq!(api_key(Some("<your key>"), &none), None);
    assert_eq!(api_key(Some("<a>b>"), &none).as_deref(), Some("<a>b>"));
    let env = env_of(&[("GOOGLE_CLOUD_API_KEY", " from-env ")]);
    assert_eq!(api_key(None, &env).as_deref(), Some("from-env"));
    assert_eq!(api_key(Some(""), &env).as_deref(), Some("from-env"));
    assert_eq!(api_key(Some(CREDENTIALS_MARKER), &env), None, "a given marker does not fall back to the env");
}

fn write_json(dir: &Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, value.to_string()).expect("write");
    path.to_string_lossy().into_owned()
}

fn service_account() -> Value {
    json!({"type": "service_account", "project_id": "sa-proj", "private_key_id": "k1", "private_key": TEST_KEY,
           "client_email": "sa@sa-proj.iam.gserviceaccount.com", "token_uri": "http://127.0.0.1:1/token"})
}

#[test]
fn credentials_come_from_adc_files() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sa = write_json(dir.path(), "sa.json", &service_account());
    let options = StreamOptions::default();
    // Project and location before credentials, as pi checks them.
    let resolve = |pairs: &[(&str, &str)]| resolve_target(&options, &env_of(pairs)).map(|(target, _)| target);
    assert_eq!(resolve(&[]).err().as_deref(), Some(NO_PROJECT));
    assert_eq!(resolve(&[("GOOGLE_CLOUD_PROJECT", "p")]).err().as_deref(), Some(NO_LOCATION));
    let missing = resolve(&[("GCLOUD_PROJECT", "p"), ("GOOGLE_CLOUD_LOCATION", "l"), ("HOME", "/nonexistent")]);
    assert_eq!(missing.err(), Some(CredentialsError::Missing.to_string()));
    let named = [("GOOGLE_APPLICATION_CREDENTIALS", sa.as_str()), ("GOOGLE_CLOUD_LOCATION", "us-central1")];
    assert_eq!(resolve(&named), Ok(project_in("sa-proj", "us-central1")), "the key file's project_id");
    let with_env = [named[0], named[1], ("GOOGLE_CLOUD_PROJECT", "env-proj"), ("GCLOUD_PROJECT", "other")];
    assert_eq!(resolve(&with_env), Ok(project_in("env-proj", "us-central1")), "GOOGLE_CLOUD_PROJECT first");
    let gone = [("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent/sa.json"), named[1], with_env[2]];
    assert!(resolve(&gone).is_err_and(|e| e.contains("cannot read the credentials file /nonexistent/sa.json")));
    // gcloud's file under CLOUDSDK_CONFIG (or HOME/.config/gcloud).
    let user = json!({"type": "authorized_user", "client_id": "cid", "client_secret": "very-secret", "refresh_token": "rt-secret"});
    write_json(dir.path(), "application_default_credentials.json", &user);
    let config = dir.path().to_string_lossy().into_owned();
    let gcloud = [("CLOUDSDK_CONFIG", config.as_str()), ("GOOGLE_CLOUD_PROJECT", "p"), ("GOOGLE_CLOUD_LOCATION", "l")];
    let (_, found) = resolve_target(&options, &env_of(&gcloud)).expect("user credentials");
    let Some(Credentials::AuthorizedUser(found)) = found else { panic!("{found:?}") };
    assert_eq!(found.token_uri, credentials::DEFAULT_TOKEN_URI);
    assert!(!format!("{:?}", Credentials::AuthorizedUser(found)).contains("secret"), "Debug hides secrets");
    // An API key wins over everything.
    let keyed = StreamOptions { api_key: Some("k".into()), ..StreamOptions::default() };
    assert_eq!(
        resolve_target(&keyed, &env_of(&gcloud)).map(|(t, c)| (t, c.is_none())),
        Ok((Target::ApiKey("k".into()), true))
    );
}

fn project_in(project: &str, location: &str) -> Target {
    Target::Project { project: project.into(), location: location.into() }
}

#[test]
fn bad_files_are_named_without_their_secrets() {
    let path = Path::new("/creds.json");
    let error = |value: &str| credentials::parse(value, path).err().map(|e| e.to_string()).unwrap_or_default();
    assert_eq!(error("{\"private_key\": \"sec"), "the credentials file /creds.json is not JSON (line 1, column 20)");
    assert_eq!(error("[]"), "the credentials file /creds.json is not a JSON object");
    let no_email = json!({"type": "service_account", "private_key": "TOP-SECRET"}).to_string();
    assert_eq!(error(&no_email), "the credentials file /creds.json has no \"client_email\"");
    let external = json!({"type": "external_account", "audience": "x"}).to_string();
    assert!(error(&external).contains("type \"external_account\""));
    let no_refresh = json!({"type": "authorized_user", "client_id": "c", "client_secret": "TOP-SECRET"}).to_string();
    assert_eq!(error(&no_refresh), "the credentials file /creds.json has no \"refresh_token\"");
}

#[test]
fn adc_availability_follows_pi() {
    let dir = tempfile::tempdir().expect("tempdir");
    let sa = write_json(dir.path(), "sa.json", &service_account());
    let available = |pairs: &[(&str, &str)]| has_adc_credentials(&env_of(pairs));
    assert!(available(&[("GOOGLE_APPLICATION_CREDENTIALS", &sa), ("GOOGLE_CLOUD_LOCATION", "l")]));
    assert!(!available(&[("GOOGLE_APPLICATION_CREDENTIALS", &sa)]), "a location is needed");
    assert!(!available(&[("GOOGLE_APPLICATION_CREDENTIALS", "/nonexistent"), ("GOOGLE_CLOUD_LOCATION", "l")]));
    assert!(!available(&[("HOME", "/nonexistent"), ("GOOGLE_CLOUD_PROJECT", "p"), ("GOOGLE_CLOUD_LOCATION", "l")]));
    let env = env_of(&[("GOOGLE_APPLICATION_CREDENTIALS", &sa), ("GOOGLE_CLOUD_LOCATION", "l")]);
    assert_eq!(crate::ai::catalog::env_api_key("google-vertex", &env).as_deref(), Some(AUTHENTICATED_MARKER));
    assert_eq!(crate::ai::catalog::env_api_key("google", &env), None);
}

#[test]
fn assertions_are_signed_rs256_with_pi_claims() {
    let key = jwt::rsa_key(TEST_KEY).expect("the test key");
    let claims = Claims { issuer: "sa@x", scope: token::SCOPE, audience: "http://127.0.0.1:1/token", issued_at: 1000 };
    let assertion = jwt::assertion(&key, &claims).expect("signed");
    let parts: Vec<&str> = assertion.split('.').collect();
    assert_eq!(parts.len(), 3);
    let decode = |part: &str| URL_SAFE_NO_PAD.decode(part).expect("base64url");
    assert_eq!(String::from_utf8(decode(parts[0])).ok().as_deref(), Some(r#"{"alg":"RS256"}"#));
    assert_eq!(
        String::from_utf8(decode(parts[1])).ok().as_deref(),
        Some(
            r#"{"iss":"sa@x","scope":"https://www.googleapis.com/auth/cloud-platform","aud":"http://127.0.0.1:1/token","exp":4600,"iat":1000}"#
        )
    );
    let signed = format!("{}.{}", parts[0], parts[1]);
    let public = UnparsedPublicKey::new(&RSA_PKCS1_2048_8192_SHA256, key.public().as_ref().to_vec());
    assert!(public.verify(signed.as_bytes(), &decode(parts[2])).is_ok());
    assert!(public.verify(b"tampered", &decode(parts[2])).is_err());
    assert_eq!(jwt::rsa_key("not a key").err(), Some(JwtError::NotPem));
    let broken = "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n";
    assert!(matches!(jwt::rsa_key(broken), Err(JwtError::KeyRejected(_))));
}

#[test]
fn tokens_are_refreshed_five_minutes_early() {
    let now = Instant::now();
    assert!(is_fresh(now + Duration::from_secs(3600), now, token::REFRESH_MARGIN));
    assert!(!is_fresh(now + Duration::from_secs(299), now, token::REFRESH_MARGIN));
    assert!(!is_fresh(now, now, Duration::ZERO));
    let refused = TokenError::Refused { url: "u".into(), account: "a".into(), status: 400, detail: "d".into() };
    assert_eq!(refused.kind(), crate::ai::ProviderErrorKind::Authentication);
    let busy = TokenError::Refused { url: "u".into(), account: "a".into(), status: 503, detail: "d".into() };
    assert!(busy.kind().is_retryable());
    let delays: Vec<u128> = (1..=3).map(|n| token::retry_delay(n).as_millis()).collect();
    assert_eq!(delays, [600, 1600, 3600], "gaxios's backoff");
}

#[test]
fn the_body_is_geminis_with_vertex_key_orders() {
    let model = vertex_model("gemini-2.5-flash-lite", "");
    let call =
        ToolCall { id: "c1".into(), name: "read".into(), arguments: json!({"path": "a"}), thought_signature: None };
    let assistant = AssistantMessage {
        content: vec![AssistantContent::ToolCall(call)],
        provider: "google-vertex".into(),
        model: "gemini-2.5-flash-lite".into(),
        ..AssistantMessage::default()
    };
    let image = UserContent::Image(ImageContent { data: "aW1n".into(), mime_type: "image/png".into() });
    let context = LlmContext {
        system_prompt: "SYS".into(),
        messages: vec![
            Message::User(UserMessage { content: crate::protocol::MessageContent::Blocks(vec![image]), timestamp: 0 }),
            Message::Assistant(assistant),
        ],
        tools: vec![ToolSpec { name: "read".into(), description: "D".into(), parameters: json!({"type": "object"}) }],
    };
    let options = StreamOptions { reasoning: Some(ThinkingLevel::Minimal), ..StreamOptions::default() };
    let body = build_body_for(Dialect::Vertex, &model, &context, &options).expect("a body");
    assert_eq!(
        body.to_string(),
        r#"{"contents":[{"parts":[{"inlineData":{"mimeType":"image/png","data":"aW1n"}}],"role":"user"},{"parts":[{"functionCall":{"name":"read","args":{"path":"a"}}}],"role":"model"},{"parts":[{"functionResponse":{"name":"read","response":{"error":"No result provided"}}}],"role":"user"}],"systemInstruction":{"parts":[{"text":"SYS"}],"role":"user"},"tools":[{"functionDeclarations":[{"description":"D","name":"read","parametersJsonSchema":{"type":"object"}}]}],"generationConfig":{"maxOutputTokens":16384,"thinkingConfig":{"includeThoughts":true,"thinkingBudget":128}}}"#,
        "pi's Vertex provider gives Flash-Lite 2.5-flash's budgets"
    );
    let gemma = build_body_for(Dialect::Vertex, &vertex_model("gemma-4-27b", ""), &context, &options).expect("a body");
    assert_eq!(gemma["generationConfig"]["thinkingConfig"], json!({"includeThoughts": true, "thinkingBudget": -1}));
}
