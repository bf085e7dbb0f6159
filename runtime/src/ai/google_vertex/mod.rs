//! The `google-vertex` provider: Gemini on Google Cloud's Vertex AI, as pi 0.73.1 reaches it through the
//! `@google/genai` SDK. The body and the event stream are the Gemini API's (shared with
//! `google_generative_ai`); what differs is where the request goes and how it is authorized: an API key
//! (`GOOGLE_CLOUD_API_KEY`, sent as `x-goog-api-key`) or Application Default Credentials exchanged for a
//! cached OAuth token (`Authorization: Bearer`), with the project and location from the environment.
//! Like the genai SDK under pi, failed requests are not retried.

mod credentials;
mod jwt;
mod token;

use std::sync::Arc;

use reqwest::header::{AUTHORIZATION, CONTENT_TYPE, HeaderMap, HeaderName, HeaderValue, USER_AGENT};

pub use credentials::{CredentialsError, EnvLookup, has_adc_credentials};
pub use jwt::JwtError;
pub use token::TokenError;

use self::credentials::Credentials;
use super::Model;
use super::google_generative_ai::{Dialect, build_body_for, decoder_for};
use super::pi15::apply_user_agent;
use super::provider::{ApiProvider, LlmContext, StreamOptions, error_stream};
use super::stream::AssistantMessageStream;
use super::transport::{
    AuthHeaders, DEFAULT_IDLE_TIMEOUT, DecodeError, HttpRequest, apply_headers, secret_header,
    spawn_authorized_sse_call, spawn_sse_call,
};

/// The api name this provider serves.
pub const API: &str = "google-vertex";

/// The `apiKey` value that asks for Application Default Credentials instead of a key (pi's marker, for
/// models.json providers of this API).
pub const CREDENTIALS_MARKER: &str = "gcp-vertex-credentials";

/// The key pi's environment lookup reports when Application Default Credentials are set up.
pub const AUTHENTICATED_MARKER: &str = "<authenticated>";

/// The API version pi asks the SDK for.
const API_VERSION: &str = "v1";

/// The header that carries an API key.
const API_KEY_HEADER: &str = "x-goog-api-key";

/// The header naming the project billed for quota.
const USER_PROJECT_HEADER: &str = "x-goog-user-project";

const NO_PROJECT: &str = "Vertex AI needs a Google Cloud project: set GOOGLE_CLOUD_PROJECT (or GCLOUD_PROJECT)";
const NO_LOCATION: &str =
    "Vertex AI needs a location: set GOOGLE_CLOUD_LOCATION (a region such as us-central1, or global)";

type SharedEnv = Arc<dyn Fn(&str) -> Option<String> + Send + Sync>;

/// Streams Gemini responses from Vertex AI (or a server at the model's base URL).
#[derive(Clone)]
pub struct GoogleVertexProvider {
    max_retries: u32,
    env: SharedEnv,
}

impl std::fmt::Debug for GoogleVertexProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GoogleVertexProvider").field("max_retries", &self.max_retries).finish_non_exhaustive()
    }
}

impl Default for GoogleVertexProvider {
    fn default() -> Self {
        Self::new()
    }
}

impl GoogleVertexProvider {
    /// A provider reading the process environment that, like the genai SDK under pi, does not retry.
    pub fn new() -> Self {
        Self { max_retries: 0, env: Arc::new(|name| std::env::var(name).ok()) }
    }

    /// Retries a retryable failure (408, 409, 429, 5xx, no connection) this often before failing.
    pub fn with_max_retries(mut self, max_retries: u32) -> Self {
        self.max_retries = max_retries;
        self
    }

    /// Reads `GOOGLE_*` settings (and `HOME`, `CLOUDSDK_CONFIG`) through `env` instead of the process
    /// environment.
    pub fn with_env(mut self, env: impl Fn(&str) -> Option<String> + Send + Sync + 'static) -> Self {
        self.env = Arc::new(env);
        self
    }
}

/// How a request is authorized and which project path it takes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// Vertex AI express mode: an API key, no project in the path.
    ApiKey(String),
    /// Application Default Credentials for `project` in `location`.
    Project { project: String, location: String },
}

impl ApiProvider for GoogleVertexProvider {
    fn api(&self) -> &str {
        API
    }

    fn stream(&self, model: &Model, context: &LlmContext, options: StreamOptions) -> AssistantMessageStream {
        let env = self.env.as_ref();
        let (target, credentials) = match resolve_target(&options, env) {
            Ok(resolved) => resolved,
            Err(message) => return error_stream(model, message),
        };
        let request = build_request(model, context, &options, &target, self.max_retries, env);
        let decoder = decoder_for(model, options.pi_compat);
        let Some(credentials) = credentials else {
            return spawn_sse_call(model, request, decoder, options.cancel, options.on_payload);
        };
        let quota_project = credentials::quota_project(env, &credentials);
        let timeout = options.retry.timeout.or(options.idle_timeout).unwrap_or(DEFAULT_IDLE_TIMEOUT);
        let auth = async move { bearer_headers(&credentials, quota_project, timeout).await };
        spawn_authorized_sse_call(model, request, auth, decoder, options.cancel, options.on_payload)
    }
}

/// pi's choice: the call's key (or `GOOGLE_CLOUD_API_KEY`) unless it is the credentials marker or a
/// `<placeholder>`; otherwise Application Default Credentials, which need a project and a location.
fn resolve_target(options: &StreamOptions, env: EnvLookup<'_>) -> Result<(Target, Option<Credentials>), String> {
    if let Some(key) = api_key(options.api_key.as_deref(), env) {
        return Ok((Target::ApiKey(key), None));
    }
    let loaded = credentials::load(env);
    let project = credentials::env_project(env)
        .or_else(|| loaded.as_ref().ok().and_then(|found| found.project_id().map(str::to_owned)));
    let project = project.ok_or_else(|| NO_PROJECT.to_owned())?;
    let location = credentials::env_location(env).ok_or_else(|| NO_LOCATION.to_owned())?;
    let credentials = loaded.map_err(|error| error.to_string())?;
    Ok((Target::Project { project, location }, Some(credentials)))
}

/// The API key to send, if any (pi's `resolveApiKey`).
pub fn api_key(given: Option<&str>, env: EnvLookup<'_>) -> Option<String> {
    let given = given.map(str::trim).filter(|key| !key.is_empty()).map(str::to_owned);
    let key = given.or_else(|| env("GOOGLE_CLOUD_API_KEY").map(|key| key.trim().to_owned()));
    key.filter(|key| !key.is_empty() && key != CREDENTIALS_MARKER && !is_placeholder(key))
}

/// `<anything without a closing bracket>`, as pi's `/^<[^>]+>$/`.
fn is_placeholder(key: &str) -> bool {
    key.strip_prefix('<')
        .and_then(|rest| rest.strip_suffix('>'))
        .is_some_and(|inner| !inner.is_empty() && !inner.contains('>'))
}

/// The streaming URL, as the SDK builds it: a models.json base URL is the collection root (no project
/// path; `v1` added unless it already names a version); otherwise `GOOGLE_VERTEX_BASE_URL` or Google's
/// host for the location, with `projects/{p}/locations/{l}/` for credentials (not for an API key).
pub fn request_url(model: &Model, target: &Target, env: EnvLookup<'_>) -> Result<String, String> {
    let resource = model_resource(&model.id)?;
    let custom = model.base_url.trim();
    let custom = (!custom.is_empty() && !custom.contains("{location}")).then_some(custom);
    let (base, version, prefix) = match custom {
        Some(base) => {
            let version = if names_api_version(base) { "" } else { API_VERSION };
            (base.to_owned(), version, String::new())
        }
        None => {
            let base = env("GOOGLE_VERTEX_BASE_URL")
                .map(|url| url.trim().to_owned())
                .filter(|url| !url.is_empty())
                .unwrap_or_else(|| default_host(target));
            let prefix = match target {
                Target::ApiKey(_) => String::new(),
                Target::Project { project, location } => format!("projects/{project}/locations/{location}/"),
            };
            (base, API_VERSION, prefix)
        }
    };
    let base = base.trim_end_matches('/');
    let version = if version.is_empty() { String::new() } else { format!("/{version}") };
    Ok(format!("{base}{version}/{prefix}{resource}:streamGenerateContent?alt=sse"))
}

/// Google's host for a target: the global one for API keys and `global`, the multi-region ones for `us`
/// and `eu`, else `{location}-aiplatform`.
fn default_host(target: &Target) -> String {
    match target {
        Target::ApiKey(_) => "https://aiplatform.googleapis.com/".to_owned(),
        Target::Project { location, .. } => match location.as_str() {
            "global" => "https://aiplatform.googleapis.com/".to_owned(),
            "us" | "eu" => format!("https://aiplatform.{location}.rep.googleapis.com/"),
            _ => format!("https://{location}-aiplatform.googleapis.com/"),
        },
    }
}

/// Whether a base URL's path already names an API version (`v1`, `v1beta1`, ...).
fn names_api_version(base: &str) -> bool {
    let is_version = |segment: &str| {
        let Some(rest) = segment.strip_prefix('v') else { return false };
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let tail = &rest[digits..];
        digits > 0
            && (tail.is_empty() || tail.strip_prefix("beta").is_some_and(|n| n.bytes().all(|b| b.is_ascii_digit())))
    };
    match reqwest::Url::parse(base) {
        Ok(url) => url.path().split('/').any(is_version),
        Err(_) => base.split('/').any(is_version),
    }
}

/// The model's resource path as the SDK writes it: `publishers/google/models/{id}`, `publishers/{a}/models/{b}`
/// for `a/b`, or the id itself when it already is a resource path.
fn model_resource(id: &str) -> Result<String, String> {
    if id.is_empty() || id.contains("..") || id.contains('?') || id.contains('&') {
        return Err(format!("the model id \"{id}\" cannot be used in a request path"));
    }
    if ["publishers/", "projects/", "models/"].iter().any(|prefix| id.starts_with(prefix)) {
        return Ok(id.to_owned());
    }
    let mut parts = id.split('/');
    match (parts.next(), parts.next()) {
        (Some(publisher), Some(name)) => Ok(format!("publishers/{publisher}/models/{name}")),
        _ => Ok(format!("publishers/google/models/{id}")),
    }
}

fn build_request(
    model: &Model,
    context: &LlmContext,
    options: &StreamOptions,
    target: &Target,
    max_retries: u32,
    env: EnvLookup<'_>,
) -> Result<HttpRequest, String> {
    let body = build_body_for(Dialect::Vertex, model, context, options)?;
    // As for the Gemini API: pi hands `retry.provider` to the OpenAI and Anthropic SDKs only.
    let sdk_options = StreamOptions { retry: Default::default(), ..options.clone() };
    let url = request_url(model, target, env)?;
    HttpRequest::json(url, request_headers(model, options, target)?, &body, max_retries, &sdk_options)
}

/// Content type, our `user-agent` (pi 1.5's at that level), the model's and the call's headers, then the
/// API key unless those already carry one. Tokens are added once fetched ([`bearer_headers`]).
fn request_headers(model: &Model, options: &StreamOptions, target: &Target) -> Result<HeaderMap, String> {
    let mut headers = HeaderMap::new();
    headers.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    headers.insert(USER_AGENT, HeaderValue::from_static(concat!("pi-runtime/", env!("CARGO_PKG_VERSION"))));
    apply_user_agent(&mut headers, options)?;
    apply_headers(&mut headers, model.headers.iter().chain(&options.headers))?;
    if let Target::ApiKey(key) = target {
        let name = HeaderName::from_static(API_KEY_HEADER);
        if !headers.contains_key(&name) {
            headers.insert(name, secret_header(key)?);
        }
    }
    Ok(headers)
}

/// `Authorization: Bearer <token>` (and the quota project, when set) for credentials.
async fn bearer_headers(
    credentials: &Credentials,
    quota_project: Option<String>,
    timeout: std::time::Duration,
) -> Result<AuthHeaders, DecodeError> {
    let token = token::access_token(credentials, timeout)
        .await
        .map_err(|error| DecodeError { message: error.to_string(), kind: Some(error.kind()) })?;
    let mut bearer = HeaderValue::from_str(&format!("Bearer {token}")).map_err(|_| {
        DecodeError::from("the Google Cloud token endpoint sent a token that is not a valid header value")
    })?;
    bearer.set_sensitive(true);
    let mut headers = vec![(AUTHORIZATION, bearer)];
    if let Some(project) = quota_project {
        let value = HeaderValue::from_str(&project)
            .map_err(|_| DecodeError::from(format!("the quota project \"{project}\" is not a valid header value")))?;
        headers.push((HeaderName::from_static(USER_PROJECT_HEADER), value));
    }
    Ok(headers)
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
