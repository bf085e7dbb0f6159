//! `<agent dir>/auth.json` (`{"<provider>": {"type": "api_key", "key": ...}}` or an OAuth entry, whose
//! `access` token [`super::oauth_keys::OAuthKeyring`] renews when it expires) and pi's key precedence: `--api-key`, auth.json, the
//! provider's environment variable, then models.json `apiKey`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::config_value::{CommandFailure, EnvLookup, try_resolve_config_value};
use super::error::CliError;
use crate::ai::catalog::env_api_key;

/// One stored credential.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum StoredCredential {
    /// `{"type": "api_key", "key": ...}`; the key may name an environment variable or be `!command`.
    ApiKey { key: String },
    /// `{"type": "oauth", "access": ..., "refresh": ..., "expires": ms}`.
    OAuth { access: Option<String>, expires: Option<i64>, enterprise_url: Option<String> },
    /// An entry of another type: it counts as configured but yields no key.
    Other,
}

/// The credentials auth.json holds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AuthFile {
    pub credentials: BTreeMap<String, StoredCredential>,
}

impl AuthFile {
    /// Reads `path`, creating it as `{}` with mode 600 (and its directory with mode 700) when it
    /// does not exist, as pi does. A file that cannot be read or parsed yields a warning on
    /// stderr and no credentials; its contents are never printed.
    pub fn load_or_create(path: &Path) -> AuthFile {
        if let Err(error) = ensure_exists(path) {
            eprintln!("Warning: cannot create {}: {error}", path.display());
            return AuthFile::default();
        }
        match std::fs::read_to_string(path) {
            Ok(text) => AuthFile::parse(&text).unwrap_or_else(|problem| {
                eprintln!("Warning: ignoring {}: {problem}", path.display());
                AuthFile::default()
            }),
            Err(error) => {
                eprintln!("Warning: cannot read {}: {error}", path.display());
                AuthFile::default()
            }
        }
    }

    /// Parses auth.json text. Errors carry the position but never the file's contents.
    pub fn parse(text: &str) -> Result<AuthFile, String> {
        if text.trim().is_empty() {
            return Ok(AuthFile::default());
        }
        let root: Value = serde_json::from_str(text)
            .map_err(|error| format!("invalid JSON at {}:{}", error.line(), error.column()))?;
        let Value::Object(entries) = root else { return Err("expected a JSON object keyed by provider".to_owned()) };
        let text_field = |entry: &Value, key: &str| entry.get(key).and_then(Value::as_str).map(str::to_owned);
        let credentials = entries
            .into_iter()
            .filter(|(_, entry)| entry.is_object())
            .map(|(provider, entry)| {
                let credential = match entry.get("type").and_then(Value::as_str) {
                    Some("api_key") => match text_field(&entry, "key") {
                        Some(key) => StoredCredential::ApiKey { key },
                        None => StoredCredential::Other,
                    },
                    Some("oauth") => StoredCredential::OAuth {
                        access: text_field(&entry, "access"),
                        expires: entry.get("expires").and_then(Value::as_i64),
                        enterprise_url: text_field(&entry, "enterpriseUrl"),
                    },
                    _ => StoredCredential::Other,
                };
                (provider, credential)
            })
            .collect();
        Ok(AuthFile { credentials })
    }
}

fn ensure_exists(path: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
    if path.exists() {
        return Ok(());
    }
    if let Some(dir) = path.parent().filter(|dir| !dir.exists()) {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true).mode(0o600);
    match options.open(path) {
        Ok(mut file) => std::io::Write::write_all(&mut file, b"{}"),
        // Another process created it first: fine.
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(error),
    }
}

/// Where a provider's key comes from, in pi's order of precedence.
pub struct KeySources<'a> {
    /// `--api-key`, for the provider of the chosen model only.
    pub runtime: Option<(String, String)>,
    pub auth: &'a AuthFile,
    pub env: EnvLookup<'a>,
    /// models.json `apiKey` values by provider (raw).
    pub models_json_keys: BTreeMap<String, String>,
    pub auth_path: PathBuf,
}

impl KeySources<'_> {
    /// Whether `provider` has a key configured anywhere, without running any command (pi's
    /// `hasConfiguredAuth`, which decides which models are "available").
    pub fn has_auth(&self, provider: &str) -> bool {
        self.runtime.as_ref().is_some_and(|(name, _)| name == provider)
            || self.auth.credentials.contains_key(provider)
            || env_api_key(provider, self.env).is_some()
            || self.models_json_keys.contains_key(provider)
    }

    /// `provider`'s key: `--api-key`, auth.json, environment variable, models.json `apiKey`.
    /// `Ok(None)` when none is configured; an error when a configured `!command` fails.
    pub fn api_key(&self, provider: &str) -> Result<Option<String>, CliError> {
        if let Some((_, key)) = self.runtime.as_ref().filter(|(name, key)| name == provider && !key.is_empty()) {
            return Ok(Some(key.clone()));
        }
        match self.auth.credentials.get(provider) {
            Some(StoredCredential::ApiKey { key }) => {
                let source_name = self.auth_path.display().to_string();
                let what = || format!("key of provider \"{provider}\" in {source_name}");
                return try_resolve_config_value(key, self.env)
                    .map_err(|failure| key_command_error(failure, provider, key, &source_name, what));
            }
            // A run renews an expired login before each request (`OAuthKeyring`); this is its current token.
            Some(StoredCredential::OAuth { access: Some(access), .. }) => return Ok(Some(access.clone())),
            _ => {}
        }
        if let Some(key) = env_api_key(provider, self.env) {
            return Ok(Some(key));
        }
        let Some(raw) = self.models_json_keys.get(provider) else { return Ok(None) };
        let what = || format!("apiKey of provider \"{provider}\" in models.json");
        try_resolve_config_value(raw, self.env)
            .map_err(|failure| key_command_error(failure, provider, raw, "models.json \"apiKey\"", what))
    }
}

/// The error for a key `!command` that gave nothing: failed, or stopped at its time limit.
fn key_command_error(
    failure: CommandFailure,
    provider: &str,
    raw: &str,
    source_name: &str,
    what: impl FnOnce() -> String,
) -> CliError {
    match failure {
        CommandFailure::Failed => {
            CliError::KeyCommandFailed { provider: provider.to_owned(), source_name: source_name.to_owned() }
        }
        CommandFailure::TimedOut(limit) => command_timed_out(raw, what(), limit),
    }
}

/// [`CliError::CommandTimedOut`] for the `!command` `raw`.
pub(super) fn command_timed_out(raw: &str, what: String, limit: std::time::Duration) -> CliError {
    let seconds = super::config_value::seconds(limit);
    CliError::CommandTimedOut { command: raw.trim_start_matches('!').to_owned(), what, seconds }
}

#[cfg(test)]
#[path = "auth_tests.rs"]
mod tests;
