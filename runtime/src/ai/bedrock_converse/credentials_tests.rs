//! Tests of the AWS region, endpoint and credential resolution.

use super::*;

const BASE: &str = "https://bedrock-runtime.us-east-1.amazonaws.com";

fn env(vars: &[(&str, &str)]) -> AwsEnvironment {
    AwsEnvironment::fixed(vars.iter().map(|(k, v)| (k.to_string(), v.to_string())))
}

fn keys(id: &str, secret: &str, token: Option<&str>) -> BedrockAuth {
    BedrockAuth::SigV4(AwsCredentials {
        access_key_id: id.into(),
        secret_access_key: secret.into(),
        session_token: token.map(Into::into),
    })
}

/// A home directory with `~/.aws/credentials` and `~/.aws/config`.
fn home_with_files() -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir_all(home.path().join(".aws")).expect("mkdir");
    let credentials = "[default]\naws_access_key_id = AKIDDEFAULT\naws_secret_access_key = default/secret ; note\n\n\
                       [work]\naws_access_key_id=AKIDWORK\naws_secret_access_key=work#secret\naws_session_token = tok\n\
                       [role]\nrole_arn = arn:aws:iam::1:role/x\nsource_profile = default\n";
    std::fs::write(home.path().join(".aws/credentials"), credentials).expect("credentials");
    let config = "# comment\n[default]\nregion = eu-west-1\n[profile work]\nregion = ap-southeast-2\n\
                  [profile sso]\nsso_session = corp\nregion = us-west-2\n[work]\nregion = never\n\
                  [profile noregion]\naws_access_key_id = AKIDCONF\naws_secret_access_key = conf\n";
    std::fs::write(home.path().join(".aws/config"), config).expect("config");
    home
}

#[test]
fn environment_keys_and_default_region() {
    let target = resolve_target(
        BASE,
        &env(&[("AWS_ACCESS_KEY_ID", "AKID"), ("AWS_SECRET_ACCESS_KEY", "s"), ("AWS_SESSION_TOKEN", "t")]),
    )
    .expect("resolves");
    assert_eq!(target.region, "us-east-1");
    assert_eq!(target.endpoint, BASE, "the catalog endpoint is used when nothing names a region");
    assert_eq!(target.auth, keys("AKID", "s", Some("t")));
    let debug = format!("{target:?}");
    assert!(!debug.contains("AKID") && !debug.contains("\"s\""), "{debug}");
}

#[test]
fn a_configured_region_picks_its_endpoint_unless_the_base_url_is_custom() {
    let vars = [("AWS_ACCESS_KEY_ID", "AKID"), ("AWS_SECRET_ACCESS_KEY", "s"), ("AWS_DEFAULT_REGION", "eu-central-1")];
    let target = resolve_target(BASE, &env(&vars)).expect("resolves");
    assert_eq!(
        (target.region.as_str(), target.endpoint.as_str()),
        ("eu-central-1", "https://bedrock-runtime.eu-central-1.amazonaws.com")
    );
    let custom = resolve_target("http://127.0.0.1:9/proxy/", &env(&vars)).expect("resolves");
    assert_eq!((custom.region.as_str(), custom.endpoint.as_str()), ("eu-central-1", "http://127.0.0.1:9/proxy"));
    let china = resolve_target(BASE, &env(&[("AWS_REGION", "cn-north-1"), ("AWS_BEARER_TOKEN_BEDROCK", "b")]));
    assert_eq!(china.map(|t| t.endpoint).as_deref(), Ok("https://bedrock-runtime.cn-north-1.amazonaws.com.cn"));
    // A standard endpoint's own region when nothing else is configured.
    let frankfurt = resolve_target(
        "https://bedrock-runtime.eu-central-1.amazonaws.com",
        &env(&[("AWS_BEARER_TOKEN_BEDROCK", "b")]),
    );
    assert_eq!(frankfurt.map(|t| t.region).as_deref(), Ok("eu-central-1"));
    assert_eq!(
        standard_endpoint_region("https://bedrock-runtime-fips.us-gov-west-1.amazonaws.com"),
        Some("us-gov-west-1".into())
    );
    assert_eq!(standard_endpoint_region("https://example.com"), None);
}

#[test]
fn bearer_tokens_replace_signing_unless_auth_is_skipped() {
    let target = resolve_target(BASE, &env(&[("AWS_BEARER_TOKEN_BEDROCK", "api-key-1")])).expect("resolves");
    assert_eq!(target.auth, BedrockAuth::Bearer("api-key-1".into()));
    assert_eq!(format!("{:?}", target.auth), "Bearer(..)");
    let skipped = resolve_target(BASE, &env(&[("AWS_BEARER_TOKEN_BEDROCK", "k"), ("AWS_BEDROCK_SKIP_AUTH", "1")]));
    assert_eq!(skipped.map(|t| t.auth), Ok(keys("dummy-access-key", "dummy-secret-key", None)));
}

#[test]
fn profiles_come_from_the_shared_files() {
    let home = home_with_files();
    let home_var = home.path().to_string_lossy().into_owned();
    let with = |extra: &[(&str, &str)]| {
        let mut vars = vec![("HOME", home_var.as_str())];
        vars.extend_from_slice(extra);
        resolve_target(BASE, &env(&vars))
    };
    let work = with(&[("AWS_PROFILE", "work"), ("AWS_ACCESS_KEY_ID", "ENV"), ("AWS_SECRET_ACCESS_KEY", "ENV")])
        .expect("resolves");
    assert_eq!(work.auth, keys("AKIDWORK", "work#secret", Some("tok")), "the profile wins over the environment");
    assert_eq!(
        (work.region.as_str(), work.endpoint.as_str()),
        ("ap-southeast-2", "https://bedrock-runtime.ap-southeast-2.amazonaws.com")
    );
    // No profile and no keys in the environment: the default profile, but pi's fixed region.
    let fallback = with(&[]).expect("resolves");
    assert_eq!(fallback.auth, keys("AKIDDEFAULT", "default/secret", None));
    assert_eq!(fallback.region, "us-east-1");
    let from_config = with(&[("AWS_PROFILE", "noregion"), ("AWS_REGION", "us-west-2")]).expect("resolves");
    assert_eq!(from_config.auth, keys("AKIDCONF", "conf", None));
    let no_region = with(&[("AWS_PROFILE", "noregion")]).expect_err("no region");
    assert!(no_region.starts_with("Region is missing"), "{no_region}");
    let sso = with(&[("AWS_PROFILE", "sso")]).expect_err("unsupported");
    assert!(sso.contains("sso_session") && sso.contains("\"sso\""), "{sso}");
    let role = with(&[("AWS_PROFILE", "role"), ("AWS_REGION", "us-east-1")]).expect_err("unsupported");
    assert!(role.contains("role_arn"), "{role}");
    let missing = with(&[("AWS_PROFILE", "nope"), ("AWS_REGION", "us-east-1")]).expect_err("missing");
    assert!(missing.contains("[nope]"), "{missing}");
    // Files named by the environment win over ~/.aws.
    let other = tempfile::tempdir().expect("tempdir");
    let path = other.path().join("creds");
    std::fs::write(&path, "[default]\naws_access_key_id = AKIDFILE\naws_secret_access_key = f\n").expect("write");
    let named = with(&[("AWS_SHARED_CREDENTIALS_FILE", &path.to_string_lossy())]).expect("resolves");
    assert_eq!(named.auth, keys("AKIDFILE", "f", None));
}

#[test]
fn nothing_configured_is_an_error_without_secrets() {
    let error = resolve_target(BASE, &env(&[("HOME", "/nonexistent")])).expect_err("no credentials");
    assert!(error.starts_with("Could not load credentials from any providers"), "{error}");
}

#[test]
fn the_key_lookup_counts_what_pi_counts() {
    let lookup = |vars: &'static [(&'static str, &'static str)]| {
        move |name: &str| vars.iter().find(|(k, _)| *k == name).map(|(_, v)| (*v).to_owned())
    };
    assert!(env_has_credentials(&lookup(&[("AWS_PROFILE", "x")])));
    assert!(env_has_credentials(&lookup(&[("AWS_ACCESS_KEY_ID", "a"), ("AWS_SECRET_ACCESS_KEY", "b")])));
    assert!(!env_has_credentials(&lookup(&[("AWS_ACCESS_KEY_ID", "a")])));
    assert!(env_has_credentials(&lookup(&[("AWS_BEARER_TOKEN_BEDROCK", "t")])));
    assert!(env_has_credentials(&lookup(&[("AWS_WEB_IDENTITY_TOKEN_FILE", "/t")])));
    assert!(!env_has_credentials(&lookup(&[("AWS_PROFILE", ""), ("AWS_REGION", "us-east-1")])));
}

#[test]
fn ini_files_parse_like_the_sdk() {
    let text =
        "[profile a]\nkey = v1 # trailing\nnested =\n  sub = ignored\n[profile \"b\"]\nk=v;x\n[sso-session s]\nk = v\n";
    let parsed = parse_ini(text, true);
    assert_eq!(parsed.get("a").and_then(|p| p.get("key")).map(String::as_str), Some("v1"));
    assert_eq!(parsed.get("a").and_then(|p| p.get("sub")), None);
    assert_eq!(parsed.get("b").and_then(|p| p.get("k")).map(String::as_str), Some("v;x"));
    assert!(!parsed.contains_key("sso-session s") && !parsed.contains_key("s"));
    assert!(parse_ini("[profile a]\nk = v\n", false).contains_key("profile a"), "credentials files take names as is");
}
