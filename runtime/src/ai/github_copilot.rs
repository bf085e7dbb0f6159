//! GitHub Copilot's side of the wire (its login lives elsewhere): the headers pi adds to every Copilot request
//! from the conversation (`X-Initiator`, `Openai-Intent`, `Copilot-Vision-Request`), whichever of the three
//! APIs the model speaks, and the API base URL a Copilot token names (`proxy-ep=proxy.X` → `https://api.X`).

use crate::protocol::{Message, MessageContent, UserContent};

/// The provider pi ships Copilot models under.
pub const PROVIDER: &str = "github-copilot";
/// Where Copilot requests go when neither the token nor an enterprise domain says otherwise.
pub const DEFAULT_BASE_URL: &str = "https://api.individual.githubcopilot.com";
/// The token field naming the proxy host.
const PROXY_ENDPOINT_FIELD: &str = "proxy-ep=";

/// The API base URL for a Copilot access token: the token's `proxy-ep` host with `proxy.` turned into `api.`,
/// else `https://copilot-api.{enterprise_domain}` for a GitHub Enterprise login, else the individual plan's.
pub fn copilot_base_url(token: &str, enterprise_domain: Option<&str>) -> String {
    if let Some(host) = proxy_endpoint(token) {
        let api_host = host.strip_prefix("proxy.").map_or_else(|| host.to_owned(), |rest| format!("api.{rest}"));
        return format!("https://{api_host}");
    }
    match enterprise_domain.filter(|domain| !domain.is_empty()) {
        Some(domain) => format!("https://copilot-api.{domain}"),
        None => DEFAULT_BASE_URL.to_owned(),
    }
}

/// The value of the first `proxy-ep=` field of a token (`tid=…;exp=…;proxy-ep=…;…`), when not empty.
fn proxy_endpoint(token: &str) -> Option<&str> {
    let start = token.find(PROXY_ENDPOINT_FIELD)? + PROXY_ENDPOINT_FIELD.len();
    let value = token[start..].split(';').next().unwrap_or_default();
    (!value.is_empty()).then_some(value)
}

/// The headers pi derives from the conversation for a Copilot model (none for other providers): who started
/// the request (`user` when the last message is the user's, else `agent`), the intent, and whether images
/// are sent.
pub fn dynamic_headers(provider: &str, messages: &[Message]) -> Vec<(String, String)> {
    if provider != PROVIDER {
        return Vec::new();
    }
    let initiator = match messages.last() {
        Some(Message::User(_)) | None => "user",
        Some(_) => "agent",
    };
    let mut headers = vec![
        ("X-Initiator".to_owned(), initiator.to_owned()),
        ("Openai-Intent".to_owned(), "conversation-edits".to_owned()),
    ];
    if has_images(messages) {
        headers.push(("Copilot-Vision-Request".to_owned(), "true".to_owned()));
    }
    headers
}

/// Whether a user message or a tool result carries an image.
fn has_images(messages: &[Message]) -> bool {
    let is_image = |content: &UserContent| matches!(content, UserContent::Image(_));
    messages.iter().any(|message| match message {
        Message::User(user) => match &user.content {
            MessageContent::Blocks(blocks) => blocks.iter().any(is_image),
            MessageContent::Text(_) => false,
        },
        Message::ToolResult(result) => result.content.iter().any(is_image),
        Message::Assistant(_) => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AssistantMessage, ImageContent, UserMessage};

    #[test]
    fn the_token_names_the_api_host() {
        let token = "tid=abc;exp=1700000000;sku=x;proxy-ep=proxy.individual.githubcopilot.com;st=dotcom";
        assert_eq!(copilot_base_url(token, None), "https://api.individual.githubcopilot.com");
        let business = "tid=1;proxy-ep=proxy.business.githubcopilot.com";
        assert_eq!(copilot_base_url(business, Some("ghe.example.com")), "https://api.business.githubcopilot.com");
        assert_eq!(copilot_base_url("tid=1;proxy-ep=copilot.internal:8443;", None), "https://copilot.internal:8443");
    }

    #[test]
    fn without_a_proxy_endpoint_the_enterprise_domain_or_the_individual_plan_decides() {
        assert_eq!(copilot_base_url("tid=1;exp=2", Some("ghe.example.com")), "https://copilot-api.ghe.example.com");
        assert_eq!(copilot_base_url("tid=1;proxy-ep=;", None), DEFAULT_BASE_URL);
        assert_eq!(copilot_base_url("", None), DEFAULT_BASE_URL);
    }

    fn user(content: MessageContent) -> Message {
        Message::User(UserMessage { content, timestamp: 1 })
    }

    #[test]
    fn headers_follow_the_conversation() {
        let image = UserContent::Image(ImageContent { data: "AAAA".into(), mime_type: "image/png".into() });
        let first = [user(MessageContent::Text("hi".into()))];
        let get = |headers: &[(String, String)], name: &str| {
            headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.clone())
        };
        let headers = dynamic_headers(PROVIDER, &first);
        assert_eq!(get(&headers, "X-Initiator").as_deref(), Some("user"));
        assert_eq!(get(&headers, "Openai-Intent").as_deref(), Some("conversation-edits"));
        assert_eq!(get(&headers, "Copilot-Vision-Request"), None);
        let follow_up = [user(MessageContent::Blocks(vec![image])), Message::Assistant(AssistantMessage::default())];
        let headers = dynamic_headers(PROVIDER, &follow_up);
        assert_eq!(get(&headers, "X-Initiator").as_deref(), Some("agent"));
        assert_eq!(get(&headers, "Copilot-Vision-Request").as_deref(), Some("true"));
        assert!(dynamic_headers("openai", &first).is_empty());
    }
}
