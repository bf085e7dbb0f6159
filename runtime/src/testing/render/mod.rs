//! Renders a scripted completion in the wire format of the API a request asked for, chosen by the
//! request path: openai-completions, anthropic-messages, openai-responses (Azure's and Codex's too),
//! google-generative-ai (Vertex AI's too) or bedrock-converse-stream (binary event-stream frames);
//! mistral-conversations shares the chat-completions path and asks for an event stream.

mod anthropic_messages;
pub(crate) mod bedrock_converse;
mod google_generative_ai;
mod mistral_conversations;
mod openai_completions;
mod openai_responses;

use serde_json::{Value, json};

use super::script::MockCompletion;

/// The wire protocol a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum MockApi {
    /// `POST {base}/chat/completions`
    OpenAiCompletions,
    /// `POST {base}/v1/messages`
    AnthropicMessages,
    /// `POST {base}/responses` (Azure's and ChatGPT Codex's `{base}/codex/responses` too)
    OpenAiResponses,
    /// `POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`; Vertex AI's
    /// `{base}/v1/[projects/{p}/locations/{l}/]publishers/google/models/{model}:streamGenerateContent` too.
    GoogleGenerativeAi,
    /// `POST {base}/v1/chat/completions` with `Accept: text/event-stream` (the Mistral SDK's request)
    MistralConversations,
    /// `POST {base}/model/{model}/converse-stream`, answered with AWS event-stream frames.
    BedrockConverseStream,
}

impl MockApi {
    /// The API a request path asks for (query string already removed).
    pub fn for_route(route: &str) -> Option<Self> {
        let route = route.trim_end_matches('/');
        if route.ends_with("/chat/completions") {
            Some(Self::OpenAiCompletions)
        } else if route.ends_with("/messages") {
            Some(Self::AnthropicMessages)
        } else if route.ends_with("/responses") {
            Some(Self::OpenAiResponses)
        } else if route.contains("/models/") && route.ends_with(":streamGenerateContent") {
            Some(Self::GoogleGenerativeAi)
        } else if route.contains("/model/") && route.ends_with("/converse-stream") {
            Some(Self::BedrockConverseStream)
        } else {
            None
        }
    }

    /// The API a request asks for: by path, and by the `Accept` header where two APIs share a path.
    pub fn for_request(route: &str, headers: &[(String, String)]) -> Option<Self> {
        let api = Self::for_route(route)?;
        let accept = headers.iter().find(|(name, _)| name.eq_ignore_ascii_case("accept")).map(|(_, v)| v.as_str());
        if api == Self::OpenAiCompletions && accept == Some("text/event-stream") {
            return Some(Self::MistralConversations);
        }
        Some(api)
    }

    /// The model a request names: in the body, or (Google) in the path.
    pub fn model_name(self, route: &str, body: &Value) -> String {
        if self == Self::GoogleGenerativeAi {
            let after = route.rsplit("/models/").next().unwrap_or_default();
            return after.split(':').next().unwrap_or("mock-model").to_owned();
        }
        if self == Self::BedrockConverseStream {
            let after = route.rsplit_once("/model/").map_or("", |(_, after)| after);
            return after.trim_end_matches("/converse-stream").replace("%3A", ":").replace("%3a", ":");
        }
        body.get("model").and_then(Value::as_str).unwrap_or("mock-model").to_owned()
    }
}

/// The SSE frames of one streamed answer, each terminated by a blank line. `number` counts answers
/// served (it makes response ids); `request_bytes` sizes estimated usage.
pub(crate) fn frames(
    api: MockApi,
    completion: &MockCompletion,
    number: usize,
    model: &str,
    request_bytes: usize,
) -> Vec<String> {
    match api {
        MockApi::OpenAiCompletions => openai_completions::frames(completion, number, model, request_bytes),
        MockApi::AnthropicMessages => anthropic_messages::frames(completion, number, model, request_bytes),
        MockApi::OpenAiResponses => openai_responses::frames(completion, number, model, request_bytes),
        MockApi::GoogleGenerativeAi => google_generative_ai::frames(completion, number, model, request_bytes),
        MockApi::MistralConversations => mistral_conversations::frames(completion, number, model, request_bytes),
        // The answer is binary (the server sends `bedrock_converse::binary_frames`); this is its transcript.
        MockApi::BedrockConverseStream => bedrock_converse::text_frames(completion, number, request_bytes),
    }
}

/// The whole response body the mock would stream for `completion` (for recorded-stream tests and
/// decoding benchmarks).
pub fn rendered_body(api: MockApi, completion: &MockCompletion) -> String {
    frames(api, completion, 1, "mock-model", 1000).concat()
}

/// An error response body in the API's own shape.
pub(crate) fn error_body(api: MockApi, status: u16, message: &str) -> String {
    match api {
        MockApi::AnthropicMessages => anthropic_messages::error_body(status, message),
        MockApi::GoogleGenerativeAi => google_generative_ai::error_body(status, message),
        MockApi::MistralConversations => mistral_conversations::error_body(status, message),
        MockApi::BedrockConverseStream => bedrock_converse::error_body(message),
        MockApi::OpenAiCompletions | MockApi::OpenAiResponses => {
            json!({"error": {"message": message, "type": "mock_script_exhausted", "code": status}}).to_string()
        }
    }
}

/// Splits `text` into at most `parts` non-empty pieces of about equal length, on character boundaries.
pub(crate) fn split(text: &str, parts: usize) -> impl Iterator<Item = &str> {
    let chars: Vec<usize> = text.char_indices().map(|(i, _)| i).collect();
    let count = parts.min(chars.len()).max(1);
    let bounds: Vec<usize> = (0..=count)
        .map(|k| if k == count { text.len() } else { chars.get(k * chars.len() / count).copied().unwrap_or(0) })
        .collect();
    (0..count).filter_map(move |k| text.get(bounds[k]..bounds[k + 1])).filter(|piece| !piece.is_empty())
}

/// The pieces text or thinking streams in: `completion.delta_chars` characters each when set, else
/// about `parts` pieces.
pub(crate) fn pieces<'a>(completion: &MockCompletion, text: &'a str, parts: usize) -> Vec<&'a str> {
    match completion.delta_chars {
        Some(size) => {
            let starts: Vec<usize> = text.char_indices().map(|(i, _)| i).step_by(size.max(1)).collect();
            let mut out = Vec::with_capacity(starts.len());
            for (k, start) in starts.iter().enumerate() {
                let end = starts.get(k + 1).copied().unwrap_or(text.len());
                out.push(&text[*start..end]);
            }
            out
        }
        None => split(text, parts).collect(),
    }
}

/// One `data:` frame (with an optional `event:` name).
pub(crate) fn sse_frame(event: Option<&str>, data: &Value) -> String {
    match event {
        Some(name) => format!("event: {name}\ndata: {data}\n\n"),
        None => format!("data: {data}\n\n"),
    }
}

/// `(input, output, cache_read)` tokens: the scripted counts, or an estimate of about four bytes per token.
pub(crate) fn usage_counts(completion: &MockCompletion, request_bytes: usize) -> (u64, u64, u64) {
    match completion.usage {
        Some(u) => (u.input, u.output, u.cache_read),
        None => {
            let produced = [completion.thinking.as_deref(), completion.text.as_deref()]
                .iter()
                .flatten()
                .map(|s| s.len())
                .sum::<usize>()
                + completion.tool_calls.iter().map(|c| c.name.len() + c.arguments_text().len()).sum::<usize>();
            (request_bytes.div_ceil(4) as u64, produced.div_ceil(4) as u64, 0)
        }
    }
}

/// The signature the mock attaches to reasoning.
pub(crate) fn thinking_signature(completion: &MockCompletion, number: usize) -> String {
    completion.thinking_signature.clone().unwrap_or_else(|| format!("mocksig-{number}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_pick_the_api() {
        assert_eq!(MockApi::for_route("/v1/chat/completions"), Some(MockApi::OpenAiCompletions));
        assert_eq!(MockApi::for_route("/chat/completions"), Some(MockApi::OpenAiCompletions));
        assert_eq!(MockApi::for_route("/v1/messages"), Some(MockApi::AnthropicMessages));
        assert_eq!(MockApi::for_route("/v1/responses"), Some(MockApi::OpenAiResponses));
        let google = "/v1beta/models/gemini-2.5-flash:streamGenerateContent";
        assert_eq!(MockApi::for_route(google), Some(MockApi::GoogleGenerativeAi));
        assert_eq!(MockApi::GoogleGenerativeAi.model_name(google, &Value::Null), "gemini-2.5-flash");
        let vertex =
            "/v1/projects/p/locations/us-central1/publishers/google/models/gemini-2.5-pro:streamGenerateContent";
        assert_eq!(MockApi::for_route(vertex), Some(MockApi::GoogleGenerativeAi));
        assert_eq!(MockApi::GoogleGenerativeAi.model_name(vertex, &Value::Null), "gemini-2.5-pro");
        assert_eq!(MockApi::for_route("/v1/embeddings"), None);
        assert_eq!(MockApi::for_route("/openai/v1/responses"), Some(MockApi::OpenAiResponses), "Azure");
        assert_eq!(MockApi::for_route("/openai/deployments/d/responses"), Some(MockApi::OpenAiResponses));
        assert_eq!(MockApi::for_route("/codex/responses"), Some(MockApi::OpenAiResponses), "ChatGPT's Codex");
        assert_eq!(MockApi::for_route("/backend-api/codex/responses"), Some(MockApi::OpenAiResponses));
        let accept = |value: &str| vec![("accept".to_owned(), value.to_owned())];
        let chat = "/v1/chat/completions";
        assert_eq!(MockApi::for_request(chat, &accept("text/event-stream")), Some(MockApi::MistralConversations));
        assert_eq!(MockApi::for_request(chat, &accept("application/json")), Some(MockApi::OpenAiCompletions));
        assert_eq!(
            MockApi::for_request("/v1/messages", &accept("text/event-stream")),
            Some(MockApi::AnthropicMessages)
        );
        let bedrock = "/model/us.anthropic.claude-v1%3A0/converse-stream";
        assert_eq!(MockApi::for_route(bedrock), Some(MockApi::BedrockConverseStream));
        assert_eq!(MockApi::BedrockConverseStream.model_name(bedrock, &Value::Null), "us.anthropic.claude-v1:0");
        assert_eq!(split("Hello world", 3).collect::<Vec<_>>(), ["Hel", "lo w", "orld"]);
        assert_eq!(split("héé", 3).collect::<Vec<_>>(), ["h", "é", "é"]);
        assert_eq!(split("ab", 3).collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(split("", 3).count(), 0);
    }
}
