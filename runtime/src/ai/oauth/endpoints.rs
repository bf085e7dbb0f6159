//! Where each provider's OAuth endpoints are (pi-ai's client ids, URLs, scopes and callback ports), and the
//! variable that sends every OAuth request to one other server instead (a test server or a proxy).

/// Names an origin (`http://127.0.0.1:8080`) that replaces the scheme and host of every OAuth URL.
pub const OAUTH_SERVER_VARIABLE: &str = "PI_GEN_OAUTH_SERVER";
/// pi's variable for the address the login callback server listens on.
pub(crate) const CALLBACK_HOST_VARIABLE: &str = "PI_OAUTH_CALLBACK_HOST";

pub(crate) const ANTHROPIC_CLIENT_ID: &str = "9d1c250a-e61b-44d9-88ed-5944d1962f5e";
pub(crate) const ANTHROPIC_AUTHORIZE_URL: &str = "https://claude.ai/oauth/authorize";
pub(crate) const ANTHROPIC_TOKEN_URL: &str = "https://platform.claude.com/v1/oauth/token";
pub(crate) const ANTHROPIC_CALLBACK_PORT: u16 = 53692;
pub(crate) const ANTHROPIC_CALLBACK_PATH: &str = "/callback";
pub(crate) const ANTHROPIC_SCOPES: &str =
    "org:create_api_key user:profile user:inference user:sessions:claude_code user:mcp_servers user:file_upload";

pub(crate) const CODEX_CLIENT_ID: &str = "app_EMoamEEZ73f0CkXaXp7hrann";
pub(crate) const CODEX_AUTHORIZE_URL: &str = "https://auth.openai.com/oauth/authorize";
pub(crate) const CODEX_TOKEN_URL: &str = "https://auth.openai.com/oauth/token";
pub(crate) const CODEX_CALLBACK_PORT: u16 = 1455;
pub(crate) const CODEX_CALLBACK_PATH: &str = "/auth/callback";
pub(crate) const CODEX_SCOPE: &str = "openid profile email offline_access";

pub(crate) const COPILOT_CLIENT_ID: &str = "Iv1.b507a08c87ecfe98";
/// The headers GitHub's Copilot token endpoint expects (those of VS Code's Copilot Chat, as pi sends them).
pub(crate) const COPILOT_HEADERS: [(&str, &str); 4] = [
    ("User-Agent", "GitHubCopilotChat/0.35.0"),
    ("Editor-Version", "vscode/1.107.0"),
    ("Editor-Plugin-Version", "copilot-chat/0.35.0"),
    ("Copilot-Integration-Id", "vscode-chat"),
];

/// The redirect URI a provider registered for its callback port and path.
pub(crate) fn redirect_uri(port: u16, path: &str) -> String {
    format!("http://localhost:{port}{path}")
}

/// GitHub's device-flow and Copilot token URLs for `domain` (`github.com` or an Enterprise host).
pub(crate) struct GitHubUrls {
    pub device_code: String,
    pub access_token: String,
    pub copilot_token: String,
}

impl GitHubUrls {
    pub(crate) fn for_domain(domain: &str) -> GitHubUrls {
        GitHubUrls {
            device_code: format!("https://{domain}/login/device/code"),
            access_token: format!("https://{domain}/login/oauth/access_token"),
            copilot_token: format!("https://api.{domain}/copilot_internal/v2/token"),
        }
    }
}

/// Where OAuth requests go: the providers' own servers, or one origin standing in for all of them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthServer {
    origin: Option<String>,
}

impl OAuthServer {
    /// The providers' own servers unless [`OAUTH_SERVER_VARIABLE`] names another origin.
    pub fn from_env(env: &dyn Fn(&str) -> Option<String>) -> OAuthServer {
        let origin = env(OAUTH_SERVER_VARIABLE).map(|origin| origin.trim().trim_end_matches('/').to_owned());
        OAuthServer { origin: origin.filter(|origin| !origin.is_empty()) }
    }

    /// Every OAuth request to `origin`.
    pub fn at(origin: &str) -> OAuthServer {
        OAuthServer { origin: Some(origin.trim_end_matches('/').to_owned()) }
    }

    /// `url`, with its scheme and host replaced by the override's origin when there is one.
    pub(crate) fn url(&self, url: &str) -> String {
        let Some(origin) = &self.origin else { return url.to_owned() };
        let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
        let path = after_scheme.find('/').map_or("", |start| &after_scheme[start..]);
        format!("{origin}{path}")
    }
}
