//! Where a Bedrock call gets its region, endpoint and credentials, as pi 0.73.1 and the AWS SDK for
//! JavaScript find them: `AWS_BEARER_TOKEN_BEDROCK` (bearer auth), `AWS_REGION` / `AWS_DEFAULT_REGION`,
//! `AWS_PROFILE` with the shared `credentials` and `config` files, `AWS_ACCESS_KEY_ID` /
//! `AWS_SECRET_ACCESS_KEY` / `AWS_SESSION_TOKEN`, and the model's base URL.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

/// The region pi uses when nothing names one (and no profile is set).
const DEFAULT_REGION: &str = "us-east-1";
/// The value pi-ai's key lookup reports for a provider whose credentials live elsewhere.
pub const AUTHENTICATED: &str = "<authenticated>";

/// Where AWS settings are read from: the process environment, or a fixed set of variables (tests).
#[derive(Clone, Default)]
pub struct AwsEnvironment {
    fixed: Option<Arc<HashMap<String, String>>>,
}

impl std::fmt::Debug for AwsEnvironment {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Values may be secrets: only say where they come from.
        f.write_str(if self.fixed.is_some() { "AwsEnvironment(fixed)" } else { "AwsEnvironment(process)" })
    }
}

impl AwsEnvironment {
    /// The process environment.
    pub fn process() -> Self {
        Self { fixed: None }
    }

    /// Exactly these variables, nothing from the process.
    pub fn fixed<K: Into<String>, V: Into<String>>(vars: impl IntoIterator<Item = (K, V)>) -> Self {
        let vars = vars.into_iter().map(|(k, v)| (k.into(), v.into())).collect();
        Self { fixed: Some(Arc::new(vars)) }
    }

    /// A variable's value when it is set and not empty (the SDK and pi treat empty as unset).
    pub fn var(&self, name: &str) -> Option<String> {
        let value = match &self.fixed {
            Some(vars) => vars.get(name).cloned(),
            None => std::env::var(name).ok(),
        };
        value.filter(|value| !value.is_empty())
    }
}

/// Whether `env` holds any of the AWS credential sources pi's key lookup checks for Bedrock (profile,
/// key pair, bearer token, container or web-identity credentials).
pub fn env_has_credentials(env: &dyn Fn(&str) -> Option<String>) -> bool {
    let set = |name: &str| env(name).is_some_and(|value| !value.is_empty());
    set("AWS_PROFILE")
        || (set("AWS_ACCESS_KEY_ID") && set("AWS_SECRET_ACCESS_KEY"))
        || set("AWS_BEARER_TOKEN_BEDROCK")
        || set("AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")
        || set("AWS_CONTAINER_CREDENTIALS_FULL_URI")
        || set("AWS_WEB_IDENTITY_TOKEN_FILE")
}

/// An access key pair (with a session token for temporary credentials). Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct AwsCredentials {
    pub access_key_id: String,
    pub secret_access_key: String,
    pub session_token: Option<String>,
}

impl std::fmt::Debug for AwsCredentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AwsCredentials").field("session_token", &self.session_token.is_some()).finish_non_exhaustive()
    }
}

/// How requests are authorized.
#[derive(Clone, PartialEq, Eq)]
pub enum BedrockAuth {
    /// SigV4 signatures with these credentials.
    SigV4(AwsCredentials),
    /// `Authorization: Bearer <Bedrock API key>`.
    Bearer(String),
}

impl std::fmt::Debug for BedrockAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SigV4(credentials) => f.debug_tuple("SigV4").field(credentials).finish(),
            Self::Bearer(_) => f.write_str("Bearer(..)"),
        }
    }
}

/// Where and how one call goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BedrockTarget {
    /// The endpoint without a trailing slash (`https://bedrock-runtime.us-east-1.amazonaws.com`).
    pub endpoint: String,
    pub region: String,
    pub auth: BedrockAuth,
}

/// The region `AWS_REGION` or `AWS_DEFAULT_REGION` names (pi reads both; the SDK only the first).
pub fn configured_region(env: &AwsEnvironment) -> Option<String> {
    env.var("AWS_REGION").or_else(|| env.var("AWS_DEFAULT_REGION"))
}

/// The region of a standard Bedrock runtime endpoint (`bedrock-runtime[-fips].<region>.amazonaws.com[.cn]`).
pub fn standard_endpoint_region(base_url: &str) -> Option<String> {
    let url = reqwest::Url::parse(base_url).ok()?;
    let host = url.host_str()?.to_ascii_lowercase();
    let rest = host.strip_prefix("bedrock-runtime-fips.").or_else(|| host.strip_prefix("bedrock-runtime."))?;
    let region = rest.strip_suffix(".amazonaws.com").or_else(|| rest.strip_suffix(".amazonaws.com.cn"))?;
    let valid = !region.is_empty() && region.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    valid.then(|| region.to_owned())
}

/// The regional endpoint the SDK resolves for `region`.
fn regional_endpoint(region: &str) -> String {
    let suffix = if region.starts_with("cn-") { "amazonaws.com.cn" } else { "amazonaws.com" };
    format!("https://bedrock-runtime.{region}.{suffix}")
}

/// Resolves endpoint, region and auth for a model whose base URL is `base_url`, as pi does: a base URL
/// that is not a standard Bedrock endpoint is always used; a standard one only when neither a region nor a
/// profile is configured (else the configured region's endpoint is). Errors are worded for the user and
/// never contain a secret.
pub fn resolve_target(base_url: &str, env: &AwsEnvironment) -> Result<BedrockTarget, String> {
    let configured = configured_region(env);
    let profile = env.var("AWS_PROFILE");
    let endpoint_region = standard_endpoint_region(base_url);
    let explicit = endpoint_region.is_none() || (configured.is_none() && profile.is_none());
    let files = SharedFiles::load(env);
    let region = match (configured, endpoint_region.filter(|_| explicit), profile.as_deref()) {
        (Some(region), _, _) => region,
        (None, Some(region), _) => region,
        (None, None, None) => DEFAULT_REGION.to_owned(),
        (None, None, Some(profile)) => files
            .region(profile)
            .ok_or_else(|| format!("Region is missing: AWS profile \"{profile}\" names no region; set AWS_REGION"))?,
    };
    let endpoint = if explicit { base_url.trim_end_matches('/').to_owned() } else { regional_endpoint(&region) };
    let skip_auth = env.var("AWS_BEDROCK_SKIP_AUTH").as_deref() == Some("1");
    let auth = match env.var("AWS_BEARER_TOKEN_BEDROCK").filter(|_| !skip_auth) {
        Some(token) => BedrockAuth::Bearer(token),
        None if skip_auth => BedrockAuth::SigV4(AwsCredentials {
            access_key_id: "dummy-access-key".to_owned(),
            secret_access_key: "dummy-secret-key".to_owned(),
            session_token: None,
        }),
        None => BedrockAuth::SigV4(credentials(env, &files, profile.as_deref())?),
    };
    Ok(BedrockTarget { endpoint, region, auth })
}

/// The SDK's default chain as far as it goes here: with `AWS_PROFILE` set, that profile only (the
/// environment's key pair is skipped, as the SDK skips it); else the environment's key pair, then the
/// `default` profile.
fn credentials(env: &AwsEnvironment, files: &SharedFiles, profile: Option<&str>) -> Result<AwsCredentials, String> {
    if profile.is_none()
        && let (Some(access_key_id), Some(secret_access_key)) =
            (env.var("AWS_ACCESS_KEY_ID"), env.var("AWS_SECRET_ACCESS_KEY"))
    {
        return Ok(AwsCredentials { access_key_id, secret_access_key, session_token: env.var("AWS_SESSION_TOKEN") });
    }
    let name = profile.unwrap_or("default");
    match files.profile_credentials(name) {
        ProfileCredentials::Static(credentials) => Ok(credentials),
        ProfileCredentials::Unsupported(kind) => Err(format!(
            "AWS profile \"{name}\" gets its credentials through {kind}, which pi-gen does not support; \
             use static keys in the profile, AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY or AWS_BEARER_TOKEN_BEDROCK"
        )),
        ProfileCredentials::Missing if profile.is_some() => Err(format!(
            "Could not resolve credentials using profile: [{name}] in the AWS configuration or credentials files"
        )),
        ProfileCredentials::Missing => Err("Could not load credentials from any providers: set AWS_ACCESS_KEY_ID and \
             AWS_SECRET_ACCESS_KEY, AWS_PROFILE or AWS_BEARER_TOKEN_BEDROCK"
            .to_owned()),
    }
}

/// What a profile says about credentials.
#[derive(Debug, PartialEq, Eq)]
enum ProfileCredentials {
    Static(AwsCredentials),
    /// Another source (role, SSO, process, web identity, login); its description.
    Unsupported(&'static str),
    Missing,
}

/// The shared `config` and `credentials` files, parsed into profiles.
#[derive(Debug, Default)]
struct SharedFiles {
    config: HashMap<String, HashMap<String, String>>,
    credentials: HashMap<String, HashMap<String, String>>,
}

impl SharedFiles {
    /// `AWS_CONFIG_FILE` / `AWS_SHARED_CREDENTIALS_FILE`, else `~/.aws/config` and `~/.aws/credentials`;
    /// a missing or unreadable file holds no profiles.
    fn load(env: &AwsEnvironment) -> Self {
        let home = env.var("HOME").map(PathBuf::from);
        let path = |var: &str, default: &str| -> Option<PathBuf> {
            match env.var(var) {
                Some(path) => match (path.strip_prefix("~/"), &home) {
                    (Some(rest), Some(home)) => Some(home.join(rest)),
                    _ => Some(PathBuf::from(path)),
                },
                None => home.as_ref().map(|home| home.join(".aws").join(default)),
            }
        };
        let read = |path: Option<PathBuf>| path.and_then(|path| std::fs::read_to_string(path).ok()).unwrap_or_default();
        Self {
            config: parse_ini(&read(path("AWS_CONFIG_FILE", "config")), true),
            credentials: parse_ini(&read(path("AWS_SHARED_CREDENTIALS_FILE", "credentials")), false),
        }
    }

    /// A profile's settings: the config file's, with the credentials file's over them (the SDK's merge for
    /// credentials).
    fn merged(&self, name: &str) -> Option<HashMap<String, String>> {
        let (config, credentials) = (self.config.get(name), self.credentials.get(name));
        if config.is_none() && credentials.is_none() {
            return None;
        }
        let mut merged = config.cloned().unwrap_or_default();
        merged.extend(credentials.cloned().unwrap_or_default());
        Some(merged)
    }

    /// A profile's `region`, the config file's first (the SDK prefers it for settings).
    fn region(&self, name: &str) -> Option<String> {
        let from = |file: &HashMap<String, HashMap<String, String>>| file.get(name)?.get("region").cloned();
        from(&self.config).or_else(|| from(&self.credentials)).filter(|region| !region.is_empty())
    }

    fn profile_credentials(&self, name: &str) -> ProfileCredentials {
        let Some(profile) = self.merged(name) else { return ProfileCredentials::Missing };
        let get = |key: &str| profile.get(key).filter(|value| !value.is_empty()).cloned();
        if profile.contains_key("role_arn") {
            return ProfileCredentials::Unsupported("an assumed role (role_arn)");
        }
        if let (Some(access_key_id), Some(secret_access_key)) = (get("aws_access_key_id"), get("aws_secret_access_key"))
        {
            return ProfileCredentials::Static(AwsCredentials {
                access_key_id,
                secret_access_key,
                session_token: get("aws_session_token"),
            });
        }
        let other = [
            ("web_identity_token_file", "a web identity token (web_identity_token_file)"),
            ("credential_process", "a credential process (credential_process)"),
            ("sso_session", "AWS IAM Identity Center (sso_session)"),
            ("sso_start_url", "AWS IAM Identity Center (sso_start_url)"),
            ("login_session", "a console login session (login_session)"),
        ];
        other
            .iter()
            .find(|(key, _)| profile.contains_key(*key))
            .map_or(ProfileCredentials::Missing, |(_, kind)| ProfileCredentials::Unsupported(kind))
    }
}

/// Profiles of an AWS shared file: `[name]` sections (`[profile name]` in the config file, where a bare
/// name other than `default` is not a profile), `key = value` lines, `#` and `;` comments. Indented
/// continuation lines (nested settings) are skipped.
fn parse_ini(text: &str, config_file: bool) -> HashMap<String, HashMap<String, String>> {
    let mut profiles: HashMap<String, HashMap<String, String>> = HashMap::new();
    let mut current: Option<String> = None;
    for line in text.lines() {
        if line.starts_with([' ', '\t']) {
            continue;
        }
        let line = strip_comment(line).trim();
        if line.is_empty() {
            continue;
        }
        if let Some(section) = line.strip_prefix('[').and_then(|rest| rest.split(']').next()) {
            let section = section.trim();
            current = if !config_file || section == "default" {
                Some(section.to_owned())
            } else {
                let name = section.strip_prefix("profile").filter(|rest| rest.starts_with([' ', '\t']));
                name.map(|name| name.trim().trim_matches(['"', '\'']).to_owned())
            };
            if let Some(name) = &current {
                profiles.entry(name.clone()).or_default();
            }
            continue;
        }
        if let (Some(name), Some((key, value))) = (&current, line.split_once('=')) {
            profiles.entry(name.clone()).or_default().insert(key.trim().to_ascii_lowercase(), value.trim().to_owned());
        }
    }
    profiles
}

/// `line` up to a `#` or `;` that starts it or follows whitespace (the SDK's comment rule).
fn strip_comment(line: &str) -> &str {
    let bytes = line.as_bytes();
    let start =
        (0..bytes.len()).find(|&i| matches!(bytes[i], b'#' | b';') && (i == 0 || bytes[i - 1].is_ascii_whitespace()));
    start.map_or(line, |i| &line[..i])
}

#[cfg(test)]
#[path = "credentials_tests.rs"]
mod tests;
