//! Tests of the credentials' auth.json shape, the endpoint override, PKCE and pasted-code parsing.

use base64::Engine;
use serde_json::json;

use super::login::{enterprise_domain, parse_authorization_input};
use super::pkce::{Pkce, random_state};
use super::*;

fn jwt(claims: serde_json::Value) -> String {
    let encode = |value: serde_json::Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(value.to_string().as_bytes())
    };
    format!("{}.{}.sig", encode(json!({"alg": "none"})), encode(claims))
}

#[test]
fn an_entry_round_trips_with_its_extra_fields_in_pi_order() {
    let entry =
        json!({"type": "oauth", "refresh": "r", "access": "a", "expires": 1_700_000_000_000_i64, "accountId": "acc"});
    let credentials = OAuthCredentials::from_entry(&entry).expect("oauth entry");
    assert_eq!((credentials.access.as_str(), credentials.refresh.as_str()), ("a", "r"));
    assert_eq!(credentials.extra_text("accountId"), Some("acc"));
    assert_eq!(credentials.to_entry().to_string(), entry.to_string());
    assert!(credentials.is_expired(1_700_000_000_000));
    assert!(!credentials.is_expired(1_699_999_999_999));
    assert_eq!(OAuthCredentials::from_entry(&json!({"type": "api_key", "key": "k"})), None);
    let debug = format!("{credentials:?}");
    assert!(!debug.contains("\"a\"") && debug.contains("redacted"), "{debug}");
}

#[test]
fn the_override_replaces_only_scheme_and_host() {
    let server = OAuthServer::at("http://127.0.0.1:9/");
    assert_eq!(server.url("https://platform.claude.com/v1/oauth/token"), "http://127.0.0.1:9/v1/oauth/token");
    assert_eq!(
        server.url("https://api.github.com/copilot_internal/v2/token"),
        "http://127.0.0.1:9/copilot_internal/v2/token"
    );
    let env = |name: &str| (name == OAUTH_SERVER_VARIABLE).then(|| " http://h:1 ".to_owned());
    assert_eq!(OAuthServer::from_env(&env).url("https://auth.openai.com/oauth/token"), "http://h:1/oauth/token");
    assert_eq!(OAuthServer::default().url("https://x.y/z"), "https://x.y/z");
}

#[test]
fn pkce_challenge_is_the_verifiers_sha256_and_states_differ() {
    use sha2::Digest;
    let pkce = Pkce::generate().expect("random");
    assert_eq!(pkce.verifier.len(), 43);
    let expected =
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(pkce.verifier.as_bytes()));
    assert_eq!(pkce.challenge, expected);
    let (a, b) = (random_state().expect("random"), random_state().expect("random"));
    assert_eq!(a.len(), 32);
    assert_ne!(a, b);
}

#[test]
fn pasted_codes_are_read_in_every_form() {
    let owned = |pair: (Option<String>, Option<String>)| pair;
    assert_eq!(
        owned(parse_authorization_input("http://localhost:53692/callback?code=c1&state=s1")),
        (Some("c1".into()), Some("s1".into()))
    );
    assert_eq!(parse_authorization_input("c2#s2"), (Some("c2".into()), Some("s2".into())));
    assert_eq!(parse_authorization_input("code=c3&state=s3"), (Some("c3".into()), Some("s3".into())));
    assert_eq!(parse_authorization_input("  c4 "), (Some("c4".into()), None));
    assert_eq!(parse_authorization_input(""), (None, None));
}

#[test]
fn codex_tokens_name_their_account_and_enterprise_hosts_are_read_from_urls() {
    let token = jwt(json!({"https://api.openai.com/auth": {"chatgpt_account_id": "acct_1"}}));
    assert_eq!(chatgpt_account_id(&token).as_deref(), Some("acct_1"));
    assert_eq!(chatgpt_account_id(&jwt(json!({"sub": "x"}))), None);
    assert_eq!(chatgpt_account_id("not-a-jwt"), None);
    assert_eq!(enterprise_domain("https://ghe.example.com/some/path").as_deref(), Some("ghe.example.com"));
    assert_eq!(enterprise_domain("ghe.example.com").as_deref(), Some("ghe.example.com"));
}

#[test]
fn providers_are_known_by_their_ids() {
    for provider in SubscriptionProvider::ALL {
        assert_eq!(SubscriptionProvider::from_id(provider.id()), Some(provider));
    }
    assert_eq!(SubscriptionProvider::from_id("openai"), None);
}
