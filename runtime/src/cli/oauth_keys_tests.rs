//! Tests of renewing logins in auth.json against the mock's token endpoints: the other entries stay, a
//! token another process renewed is reused, and a failed renewal says what to do.

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;
use crate::ai::oauth::OAuthServer;
use crate::testing::{MockLlmServer, MockScript, TEST_OAUTH_REFRESH_TOKEN};

async fn mock() -> MockLlmServer {
    MockLlmServer::start(MockScript::from_json_str("[]").expect("script")).await.expect("mock starts")
}

fn read(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).expect("auth.json")).expect("json")
}

fn expired(refresh: &str) -> Value {
    json!({"type": "oauth", "refresh": refresh, "access": "sk-ant-oat01-old", "expires": 1000})
}

#[tokio::test]
async fn an_expired_login_is_renewed_once_and_the_file_keeps_its_other_entries() {
    let server = mock().await;
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("auth.json");
    let original = json!({
        "openai": {"type": "api_key", "key": "sk-openai"},
        "anthropic": expired(TEST_OAUTH_REFRESH_TOKEN),
        "zai": {"type": "api_key", "key": "z"},
    });
    std::fs::write(&path, serde_json::to_string_pretty(&original).expect("json")).expect("write");
    let keyring = Arc::new(OAuthKeyring::load(&path, OAuthServer::at(&server.oauth_origin()), None));

    let key = keyring.key_for("anthropic").await.expect("renewed").expect("a key");
    assert_eq!(key, "sk-ant-oat01-mock-1");
    let again = keyring.lookup()("anthropic").await.expect("cached");
    assert_eq!(again.as_deref(), Some("sk-ant-oat01-mock-1"), "a fresh token is not renewed again");
    assert_eq!(server.login_requests().len(), 1);

    let stored = read(&path);
    let keys: Vec<&str> = stored.as_object().expect("object").keys().map(String::as_str).collect();
    assert_eq!(keys, ["openai", "anthropic", "zai"], "file order kept");
    assert_eq!(stored["openai"], original["openai"]);
    assert_eq!(stored["zai"], original["zai"]);
    assert_eq!(stored["anthropic"]["access"], "sk-ant-oat01-mock-1");
    assert_eq!(stored["anthropic"]["refresh"], "mock-oauth-refresh-1");
    assert!(stored["anthropic"]["expires"].as_i64().expect("ms") > now_ms());
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&path).expect("meta").permissions().mode() & 0o777, 0o600);
    assert!(!dir.path().join("auth.json.lock").exists(), "the lock is released");
    let request = &server.login_requests()[0];
    assert_eq!(request.path, "/v1/oauth/token");
    assert_eq!(request.body["grant_type"], "refresh_token");
    assert_eq!(request.body["client_id"], "9d1c250a-e61b-44d9-88ed-5944d1962f5e");
}

#[tokio::test]
async fn a_token_another_process_renewed_is_used_without_asking_the_server() {
    let server = mock().await;
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("auth.json");
    std::fs::write(&path, json!({"anthropic": expired("r-old")}).to_string()).expect("write");
    let keyring = OAuthKeyring::load(&path, OAuthServer::at(&server.oauth_origin()), None);
    let renewed_elsewhere = json!({"anthropic": {"type": "oauth", "refresh": "r-new", "access": "sk-ant-oat01-other", "expires": now_ms() + 3_600_000}});
    std::fs::write(&path, renewed_elsewhere.to_string()).expect("write");
    assert_eq!(keyring.key_for("anthropic").await.expect("key").as_deref(), Some("sk-ant-oat01-other"));
    assert!(server.login_requests().is_empty());
}

#[tokio::test]
async fn a_refused_renewal_names_the_provider_and_the_way_out_and_leaves_the_file_alone() {
    let server = mock().await;
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("auth.json");
    let original = json!({"anthropic": expired("not-a-token-the-mock-knows")}).to_string();
    std::fs::write(&path, &original).expect("write");
    let keyring = OAuthKeyring::load(&path, OAuthServer::at(&server.oauth_origin()), None);
    let error = keyring.key_for("anthropic").await.expect_err("refused");
    assert!(error.contains("\"anthropic\"") && error.contains("/login anthropic") && error.contains("400"), "{error}");
    assert!(!error.contains("not-a-token"), "no token in errors: {error}");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), original);
}

#[tokio::test]
async fn codex_and_copilot_logins_renew_with_their_own_requests() {
    let server = mock().await;
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("auth.json");
    let entries = json!({
        "openai-codex": {"type": "oauth", "refresh": TEST_OAUTH_REFRESH_TOKEN, "access": "old", "expires": 0, "accountId": "old"},
        "github-copilot": {"type": "oauth", "refresh": crate::testing::TEST_GITHUB_TOKEN, "access": "old", "expires": 0},
    });
    std::fs::write(&path, entries.to_string()).expect("write");
    let keyring = OAuthKeyring::load(&path, OAuthServer::at(&server.oauth_origin()), None);
    let codex = keyring.key_for("openai-codex").await.expect("codex").expect("key");
    assert_eq!(crate::ai::oauth::chatgpt_account_id(&codex).as_deref(), Some(crate::testing::TEST_CHATGPT_ACCOUNT_ID));
    let copilot = keyring.key_for("github-copilot").await.expect("copilot").expect("key");
    assert!(copilot.starts_with("tid=mock-"), "{copilot}");
    let stored = read(&path);
    assert_eq!(stored["openai-codex"]["accountId"], crate::testing::TEST_CHATGPT_ACCOUNT_ID);
    assert_eq!(stored["github-copilot"]["refresh"], crate::testing::TEST_GITHUB_TOKEN);
    let requests = server.login_requests();
    assert_eq!(requests[0].path, "/oauth/token");
    assert!(
        requests[0].body.as_str().is_some_and(|form| form.contains("grant_type=refresh_token")),
        "{:?}",
        requests[0].body
    );
    assert_eq!(requests[1].path, "/copilot_internal/v2/token");
    assert_eq!(requests[1].header("editor-version"), Some("vscode/1.107.0"));
}

#[tokio::test]
async fn an_api_key_flag_and_providers_without_logins_get_no_oauth_key() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("auth.json");
    let fresh = json!({"type": "oauth", "refresh": "r", "access": "sk-ant-oat01-live", "expires": now_ms() + 60_000});
    std::fs::write(&path, json!({"anthropic": fresh}).to_string()).expect("write");
    let keyring = OAuthKeyring::load(&path, OAuthServer::default(), Some("anthropic".to_owned()));
    assert_eq!(keyring.key_for("anthropic").await, Ok(None));
    let keyring = OAuthKeyring::load(&path, OAuthServer::default(), None);
    assert_eq!(keyring.key_for("anthropic").await, Ok(Some("sk-ant-oat01-live".to_owned())));
    assert_eq!(keyring.key_for("openai").await, Ok(None));
}

#[test]
fn store_entry_adds_and_removes_one_provider_and_refuses_to_overwrite_a_broken_file() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("auth.json");
    store_entry(&path, "anthropic", Some(json!({"type": "oauth", "access": "a", "refresh": "r", "expires": 1})))
        .expect("store");
    store_entry(&path, "openai", Some(json!({"type": "api_key", "key": "k"}))).expect("store");
    store_entry(&path, "anthropic", None).expect("remove");
    assert_eq!(read(&path), json!({"openai": {"type": "api_key", "key": "k"}}));
    std::fs::write(&path, "{ broken").expect("write");
    let error = store_entry(&path, "openai", None).expect_err("broken file");
    assert!(error.to_string().contains("auth.json") && error.to_string().contains("1:"), "{error}");
    assert_eq!(std::fs::read_to_string(&path).expect("read"), "{ broken");
}
