//! Where an Azure OpenAI request goes and under which name: the base URL (from `AZURE_OPENAI_BASE_URL`, else
//! `AZURE_OPENAI_RESOURCE_NAME`, else the model's `baseUrl`), put into the `/openai/v1` form for Azure hosts;
//! the `api-version` query (`AZURE_OPENAI_API_VERSION`, default `v1`); and the deployment a model id maps
//! to (`AZURE_OPENAI_DEPLOYMENT_NAME_MAP`, `model=deployment,…`).

/// Looks an environment variable up (the process environment, or a map in tests).
pub type EnvLookup = dyn Fn(&str) -> Option<String> + Send + Sync;

/// The key variable pi falls back to whatever the provider is called.
pub const API_KEY_ENV: &str = "AZURE_OPENAI_API_KEY";
pub const BASE_URL_ENV: &str = "AZURE_OPENAI_BASE_URL";
pub const RESOURCE_NAME_ENV: &str = "AZURE_OPENAI_RESOURCE_NAME";
pub const API_VERSION_ENV: &str = "AZURE_OPENAI_API_VERSION";
pub const DEPLOYMENT_MAP_ENV: &str = "AZURE_OPENAI_DEPLOYMENT_NAME_MAP";

/// The `api-version` sent when `AZURE_OPENAI_API_VERSION` is unset or empty.
pub const DEFAULT_API_VERSION: &str = "v1";

/// pi's error when no base URL can be found.
pub(crate) const MISSING_BASE_URL: &str = "Azure OpenAI base URL is required. Set AZURE_OPENAI_BASE_URL or \
     AZURE_OPENAI_RESOURCE_NAME, or pass azureBaseUrl, azureResourceName, or model.baseUrl.";
/// pi's error when no key is given and `AZURE_OPENAI_API_KEY` is unset.
pub(crate) const MISSING_API_KEY: &str =
    "Azure OpenAI API key is required. Set AZURE_OPENAI_API_KEY environment variable or pass it as an argument.";

/// Host suffixes that get the `/openai/v1` path when the URL names none.
const AZURE_HOST_SUFFIXES: [&str; 2] = [".openai.azure.com", ".cognitiveservices.azure.com"];

/// A variable's value when it is set and not empty.
fn non_empty(env: &EnvLookup, name: &str) -> Option<String> {
    env(name).filter(|value| !value.is_empty())
}

/// The resolved endpoint of one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AzureEndpoint {
    /// Normalised, without a trailing slash (`https://name.openai.azure.com/openai/v1`).
    pub base_url: String,
    pub api_version: String,
}

impl AzureEndpoint {
    /// The endpoint for a model whose own base URL is `model_base_url` (empty when it has none).
    pub fn resolve(model_base_url: &str, env: &EnvLookup) -> Result<Self, String> {
        let api_version = non_empty(env, API_VERSION_ENV).unwrap_or_else(|| DEFAULT_API_VERSION.to_owned());
        let base = env(BASE_URL_ENV)
            .map(|url| url.trim().to_owned())
            .filter(|url| !url.is_empty())
            .or_else(|| {
                non_empty(env, RESOURCE_NAME_ENV).map(|name| format!("https://{name}.openai.azure.com/openai/v1"))
            })
            .or_else(|| Some(model_base_url.to_owned()).filter(|url| !url.is_empty()))
            .ok_or_else(|| MISSING_BASE_URL.to_owned())?;
        Ok(Self { base_url: normalize_base_url(&base)?, api_version })
    }

    /// `{base}/responses?api-version=…`, as the SDK builds it: any query the base URL had is replaced.
    pub fn responses_url(&self) -> Result<String, String> {
        let mut url = reqwest::Url::parse(&format!("{}/responses", self.base_url))
            .map_err(|_| format!("Invalid Azure OpenAI base URL: {}", self.base_url))?;
        url.set_query(Some(&format!("api-version={}", encode_query_value(&self.api_version))));
        Ok(url.to_string())
    }
}

/// Trims the URL and its trailing slashes; an Azure host with no path (or just `/openai`) gets `/openai/v1`
/// and loses its query.
pub fn normalize_base_url(base_url: &str) -> Result<String, String> {
    let trimmed = base_url.trim().trim_end_matches('/');
    let mut url = reqwest::Url::parse(trimmed).map_err(|_| format!("Invalid Azure OpenAI base URL: {base_url}"))?;
    let host = url.host_str().unwrap_or_default().to_ascii_lowercase();
    let azure_host = AZURE_HOST_SUFFIXES.iter().any(|suffix| host.ends_with(suffix));
    let path = url.path().trim_end_matches('/').to_owned();
    if azure_host && matches!(path.as_str(), "" | "/openai") {
        url.set_path("/openai/v1");
        url.set_query(None);
    }
    Ok(url.to_string().trim_end_matches('/').to_owned())
}

/// The deployment `model_id` is served by: its entry in `AZURE_OPENAI_DEPLOYMENT_NAME_MAP` (the last one
/// wins), else the id itself.
pub fn deployment_name(model_id: &str, env: &EnvLookup) -> String {
    let map = env(DEPLOYMENT_MAP_ENV).unwrap_or_default();
    let mut found = None;
    for entry in map.split(',').map(str::trim).filter(|entry| !entry.is_empty()) {
        // Like JavaScript's `split("=", 2)`: a third part is dropped, not kept with the second.
        let mut parts = entry.split('=');
        let (Some(id), Some(deployment)) = (parts.next(), parts.next()) else { continue };
        if id.is_empty() || deployment.is_empty() {
            continue;
        }
        if id.trim() == model_id {
            found = Some(deployment.trim().to_owned());
        }
    }
    found.filter(|deployment| !deployment.is_empty()).unwrap_or_else(|| model_id.to_owned())
}

/// The key to send: the call's, else `AZURE_OPENAI_API_KEY`.
pub fn api_key(given: Option<&str>, env: &EnvLookup) -> Result<String, String> {
    given
        .filter(|key| !key.is_empty())
        .map(str::to_owned)
        .or_else(|| non_empty(env, API_KEY_ENV))
        .ok_or_else(|| MISSING_API_KEY.to_owned())
}

/// A query value encoded as the SDK's query writer does (RFC 3986 unreserved characters kept).
fn encode_query_value(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    for byte in value.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn env(pairs: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> + Send + Sync + use<> {
        let map: HashMap<String, String> = pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect();
        move |name: &str| map.get(name).cloned()
    }

    #[test]
    fn azure_hosts_get_the_v1_path_and_others_stay_as_given() {
        let normalized = |url: &str| normalize_base_url(url).unwrap_or_else(|e| e);
        assert_eq!(normalized("https://res.openai.azure.com"), "https://res.openai.azure.com/openai/v1");
        assert_eq!(normalized(" https://res.openai.azure.com/openai/ "), "https://res.openai.azure.com/openai/v1");
        assert_eq!(normalized("https://res.openai.azure.com/?x=1"), "https://res.openai.azure.com/openai/v1");
        assert_eq!(
            normalized("https://res.cognitiveservices.azure.com/openai"),
            "https://res.cognitiveservices.azure.com/openai/v1"
        );
        assert_eq!(
            normalized("https://res.openai.azure.com/openai/deployments/d"),
            "https://res.openai.azure.com/openai/deployments/d"
        );
        assert_eq!(normalized("http://127.0.0.1:9/openai/v1/"), "http://127.0.0.1:9/openai/v1");
        assert_eq!(normalized("http://127.0.0.1:9"), "http://127.0.0.1:9");
        assert_eq!(normalized("not a url"), "Invalid Azure OpenAI base URL: not a url");
    }

    #[test]
    fn the_base_url_comes_from_the_environment_first() {
        let resolve = |model_url: &str, pairs: &[(&str, &str)]| {
            AzureEndpoint::resolve(model_url, &env(pairs)).map(|e| (e.base_url, e.api_version))
        };
        let from_env = resolve("https://m.openai.azure.com", &[(BASE_URL_ENV, " http://127.0.0.1:5/openai/v1/ ")]);
        assert_eq!(from_env, Ok(("http://127.0.0.1:5/openai/v1".to_owned(), "v1".to_owned())));
        let from_resource = resolve("", &[(RESOURCE_NAME_ENV, "res"), (API_VERSION_ENV, "2025-04-01-preview")]);
        assert_eq!(
            from_resource,
            Ok(("https://res.openai.azure.com/openai/v1".to_owned(), "2025-04-01-preview".to_owned()))
        );
        let from_model = resolve("https://m.openai.azure.com", &[(BASE_URL_ENV, "  "), (API_VERSION_ENV, "")]);
        assert_eq!(from_model, Ok(("https://m.openai.azure.com/openai/v1".to_owned(), "v1".to_owned())));
        assert_eq!(resolve("", &[(RESOURCE_NAME_ENV, "")]), Err(MISSING_BASE_URL.to_owned()));
    }

    #[test]
    fn the_url_carries_the_api_version_in_place_of_any_query() {
        let endpoint = |base: &str, version: &str| AzureEndpoint { base_url: base.into(), api_version: version.into() };
        assert_eq!(
            endpoint("https://r.openai.azure.com/openai/v1", "v1").responses_url().as_deref(),
            Ok("https://r.openai.azure.com/openai/v1/responses?api-version=v1")
        );
        assert_eq!(
            endpoint("http://h/openai/v1?a=b", "2025 04/x").responses_url().as_deref(),
            Ok("http://h/openai/v1?api-version=2025%2004%2Fx")
        );
    }

    #[test]
    fn deployments_map_model_ids() {
        let map = "gpt-5=prod-gpt5, gpt-4.1 = legacy ,bad,=x,y=,gpt-5=second=ignored,, o3=";
        let lookup = env(&[(DEPLOYMENT_MAP_ENV, map)]);
        assert_eq!(deployment_name("gpt-5", &lookup), "second");
        assert_eq!(deployment_name("gpt-4.1", &lookup), "legacy");
        assert_eq!(deployment_name("o3", &lookup), "o3");
        assert_eq!(deployment_name("other", &lookup), "other");
        assert_eq!(deployment_name("gpt-5", &env(&[])), "gpt-5");
    }

    #[test]
    fn the_key_is_the_calls_or_the_environments() {
        let lookup = env(&[(API_KEY_ENV, "from-env")]);
        assert_eq!(api_key(Some("given"), &lookup).as_deref(), Ok("given"));
        assert_eq!(api_key(Some(""), &lookup).as_deref(), Ok("from-env"));
        assert_eq!(api_key(None, &env(&[])), Err(MISSING_API_KEY.to_owned()));
    }
}
