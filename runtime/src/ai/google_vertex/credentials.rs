//! Vertex AI's Application Default Credentials, found and read as google-auth-library finds them for
//! pi: the file `GOOGLE_APPLICATION_CREDENTIALS` names, else gcloud's
//! `application_default_credentials.json`; a `service_account` key or an `authorized_user` refresh token.
//! Also the project and location a request needs. Nothing here ever prints a key, secret or token.

use std::fmt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

/// Looks an environment variable up (the process environment in production, a map in tests).
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Where tokens come from when the file names no `token_uri` (google-auth-library always uses it).
pub(crate) const DEFAULT_TOKEN_URI: &str = "https://oauth2.googleapis.com/token";

/// The file gcloud writes on `gcloud auth application-default login`, inside its config directory.
const WELL_KNOWN_FILE: &str = "application_default_credentials.json";

/// A service account's key, as in the JSON key file Google issues.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct ServiceAccount {
    pub client_email: String,
    /// PEM (`PRIVATE KEY`, or `RSA PRIVATE KEY`).
    pub private_key: String,
    pub private_key_id: Option<String>,
    pub token_uri: String,
    pub project_id: Option<String>,
    pub quota_project_id: Option<String>,
}

/// gcloud's user credentials: an OAuth client and a refresh token.
#[derive(Clone, PartialEq, Eq)]
pub(crate) struct AuthorizedUser {
    pub client_id: String,
    pub client_secret: String,
    pub refresh_token: String,
    pub token_uri: String,
    pub quota_project_id: Option<String>,
}

/// Credentials read from an ADC file.
#[derive(Clone, PartialEq, Eq)]
pub(crate) enum Credentials {
    ServiceAccount(ServiceAccount),
    AuthorizedUser(AuthorizedUser),
}

impl Credentials {
    /// The project the credentials belong to, when they say (service accounts do).
    pub(crate) fn project_id(&self) -> Option<&str> {
        match self {
            Self::ServiceAccount(account) => account.project_id.as_deref(),
            Self::AuthorizedUser(_) => None,
        }
    }

    /// The project billed for quota (`x-goog-user-project`), when the file names one.
    pub(crate) fn quota_project_id(&self) -> Option<&str> {
        match self {
            Self::ServiceAccount(account) => account.quota_project_id.as_deref(),
            Self::AuthorizedUser(user) => user.quota_project_id.as_deref(),
        }
    }

    pub(crate) fn token_uri(&self) -> &str {
        match self {
            Self::ServiceAccount(account) => &account.token_uri,
            Self::AuthorizedUser(user) => &user.token_uri,
        }
    }

    /// What the credentials are, for messages: `service account a@b` or `user credentials (client c)`.
    pub(crate) fn describe(&self) -> String {
        match self {
            Self::ServiceAccount(account) => format!("service account {}", account.client_email),
            Self::AuthorizedUser(user) => format!("user credentials (OAuth client {})", user.client_id),
        }
    }
}

impl fmt::Debug for Credentials {
    /// Names the credentials; keys, secrets and refresh tokens are never shown.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Why no usable credentials were found.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CredentialsError {
    #[error(
        "Vertex AI has no credentials: set GOOGLE_CLOUD_API_KEY, point GOOGLE_APPLICATION_CREDENTIALS at a service-account key file, or run `gcloud auth application-default login`"
    )]
    Missing,
    #[error("cannot read the credentials file {path} named by GOOGLE_APPLICATION_CREDENTIALS: {reason}")]
    Unreadable { path: PathBuf, reason: String },
    #[error("the credentials file {path} {reason}")]
    Invalid { path: PathBuf, reason: String },
}

/// The ADC file to use and whether `GOOGLE_APPLICATION_CREDENTIALS` named it (then it must be readable).
pub(crate) fn adc_file(env: EnvLookup<'_>) -> Option<(PathBuf, bool)> {
    let named = env("GOOGLE_APPLICATION_CREDENTIALS")
        .or_else(|| env("google_application_credentials"))
        .filter(|path| !path.is_empty());
    if let Some(path) = named {
        return Some((PathBuf::from(path), true));
    }
    let config_dir = env("CLOUDSDK_CONFIG").filter(|dir| !dir.is_empty()).map(PathBuf::from).or_else(|| {
        if cfg!(windows) {
            env("APPDATA").filter(|dir| !dir.is_empty()).map(|dir| Path::new(&dir).join("gcloud"))
        } else {
            env("HOME").filter(|dir| !dir.is_empty()).map(|home| Path::new(&home).join(".config").join("gcloud"))
        }
    })?;
    Some((config_dir.join(WELL_KNOWN_FILE), false))
}

/// Reads the ADC file: the one `GOOGLE_APPLICATION_CREDENTIALS` names (which must exist), else gcloud's.
pub(crate) fn load(env: EnvLookup<'_>) -> Result<Credentials, CredentialsError> {
    let Some((path, named)) = adc_file(env) else { return Err(CredentialsError::Missing) };
    let text = match std::fs::read_to_string(&path) {
        Ok(text) => text,
        Err(error) if named => return Err(CredentialsError::Unreadable { path, reason: error.to_string() }),
        Err(_) => return Err(CredentialsError::Missing),
    };
    parse(&text, &path)
}

/// Parses an ADC file's JSON. Only syntax positions and field names appear in errors, never values.
pub(crate) fn parse(text: &str, path: &Path) -> Result<Credentials, CredentialsError> {
    let invalid = |reason: String| CredentialsError::Invalid { path: path.to_path_buf(), reason };
    let value: Value = serde_json::from_str(text)
        .map_err(|error| invalid(format!("is not JSON (line {}, column {})", error.line(), error.column())))?;
    let Value::Object(fields) = value else { return Err(invalid("is not a JSON object".to_owned())) };
    let required = |name: &str| -> Result<String, CredentialsError> {
        string_field(&fields, name).ok_or_else(|| invalid(format!("has no \"{name}\"")))
    };
    let token_uri = string_field(&fields, "token_uri").unwrap_or_else(|| DEFAULT_TOKEN_URI.to_owned());
    match fields.get("type").and_then(Value::as_str) {
        Some("authorized_user") => Ok(Credentials::AuthorizedUser(AuthorizedUser {
            client_id: required("client_id")?,
            client_secret: required("client_secret")?,
            refresh_token: required("refresh_token")?,
            token_uri,
            quota_project_id: string_field(&fields, "quota_project_id"),
        })),
        Some(
            other @ ("impersonated_service_account"
            | "external_account"
            | "external_account_authorized_user"
            | "gdch_service_account"),
        ) => Err(invalid(format!(
            "holds credentials of type \"{other}\"; pi-gen reads \"service_account\" and \"authorized_user\" ones"
        ))),
        // google-auth-library reads a file of any other type as a service-account key.
        _ => Ok(Credentials::ServiceAccount(ServiceAccount {
            client_email: required("client_email")?,
            private_key: required("private_key")?,
            private_key_id: string_field(&fields, "private_key_id"),
            token_uri,
            project_id: string_field(&fields, "project_id"),
            quota_project_id: string_field(&fields, "quota_project_id"),
        })),
    }
}

fn string_field(fields: &Map<String, Value>, name: &str) -> Option<String> {
    fields.get(name).and_then(Value::as_str).map(str::trim).filter(|text| !text.is_empty()).map(str::to_owned)
}

/// A non-empty, trimmed environment value.
fn env_value(env: EnvLookup<'_>, name: &str) -> Option<String> {
    env(name).map(|value| value.trim().to_owned()).filter(|value| !value.is_empty())
}

/// The project from the environment, as pi reads it (`GOOGLE_CLOUD_PROJECT`, then `GCLOUD_PROJECT`).
pub(crate) fn env_project(env: EnvLookup<'_>) -> Option<String> {
    env_value(env, "GOOGLE_CLOUD_PROJECT").or_else(|| env_value(env, "GCLOUD_PROJECT"))
}

/// The location (region, `global`, `us` or `eu`) from `GOOGLE_CLOUD_LOCATION`.
pub(crate) fn env_location(env: EnvLookup<'_>) -> Option<String> {
    env_value(env, "GOOGLE_CLOUD_LOCATION")
}

/// The quota project google-auth-library puts in `x-goog-user-project`: `GOOGLE_CLOUD_QUOTA_PROJECT`, else the
/// file's `quota_project_id`.
pub(crate) fn quota_project(env: EnvLookup<'_>, credentials: &Credentials) -> Option<String> {
    env_value(env, "GOOGLE_CLOUD_QUOTA_PROJECT").or_else(|| credentials.quota_project_id().map(str::to_owned))
}

/// pi's test for Vertex being usable without an API key (its `<authenticated>` marker): an ADC file exists
/// and a location is set, and a project is set (or, here also, the service-account key names its own).
pub fn has_adc_credentials(env: EnvLookup<'_>) -> bool {
    let Some((path, _)) = adc_file(env) else { return false };
    if !path.is_file() || env_location(env).is_none() {
        return false;
    }
    env_project(env).is_some()
        || std::fs::read_to_string(&path)
            .ok()
            .and_then(|text| parse(&text, &path).ok())
            .is_some_and(|credentials| credentials.project_id().is_some())
}
