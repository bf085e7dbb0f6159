//! Token estimates (`ceil(chars / 4)` per message, chars counted in UTF-16 units as JavaScript does),
//! the context size estimate built on the last real usage report, and the auto-compaction trigger.

use serde::{Deserialize, Serialize};

use crate::protocol::{AgentMessage, AssistantContent, MessageContent, StopReason, Usage, UserContent};

/// What an image counts as, in characters.
pub const IMAGE_CHARS: u64 = 4800;

/// The `compaction` object of settings.json.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct CompactionSettings {
    pub enabled: bool,
    /// Tokens left free for the summary and the next reply; compaction triggers once the context
    /// grows past `context_window - reserve_tokens`.
    pub reserve_tokens: u64,
    /// Roughly how many tokens of recent conversation survive a compaction verbatim.
    pub keep_recent_tokens: u64,
}

impl Default for CompactionSettings {
    fn default() -> Self {
        Self { enabled: true, reserve_tokens: 16_384, keep_recent_tokens: 20_000 }
    }
}

impl CompactionSettings {
    /// These settings with each well-formed field of a settings.json `compaction` object applied over them
    /// (fields of the wrong type are ignored).
    pub fn with_settings(self, value: Option<&serde_json::Value>) -> Self {
        let Some(serde_json::Value::Object(object)) = value else { return self };
        let number = |key: &str| object.get(key).and_then(serde_json::Value::as_u64);
        Self {
            enabled: object.get("enabled").and_then(serde_json::Value::as_bool).unwrap_or(self.enabled),
            reserve_tokens: number("reserveTokens").unwrap_or(self.reserve_tokens),
            keep_recent_tokens: number("keepRecentTokens").unwrap_or(self.keep_recent_tokens),
        }
    }
}

/// The context size of a message list: the last usage report plus estimates of what came after it.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ContextTokenEstimate {
    /// `usage_tokens + trailing_tokens`.
    pub tokens: u64,
    /// From the last valid assistant usage (0 when there is none).
    pub usage_tokens: u64,
    /// Estimated tokens of the messages after that assistant (all messages when there is none).
    pub trailing_tokens: u64,
    /// Index of the assistant message whose usage was used.
    pub last_usage_index: Option<usize>,
}

/// Length of `text` in UTF-16 code units (JavaScript's `length`).
pub(crate) fn js_len(text: &str) -> u64 {
    text.encode_utf16().count() as u64
}

fn blocks_chars(blocks: &[UserContent], count_images: bool) -> u64 {
    blocks
        .iter()
        .map(|block| match block {
            UserContent::Text(text) => js_len(&text.text),
            UserContent::Image(_) if count_images => IMAGE_CHARS,
            _ => 0,
        })
        .sum()
}

fn content_chars(content: &MessageContent, count_images: bool) -> u64 {
    match content {
        MessageContent::Text(text) => js_len(text),
        MessageContent::Blocks(blocks) => blocks_chars(blocks, count_images),
    }
}

/// Characters of a message as pi counts them for its estimate.
fn message_chars(message: &AgentMessage) -> u64 {
    match message {
        AgentMessage::User(user) => content_chars(&user.content, false),
        AgentMessage::Assistant(assistant) => assistant
            .content
            .iter()
            .map(|block| match block {
                AssistantContent::Text(text) => js_len(&text.text),
                AssistantContent::Thinking(thinking) => js_len(&thinking.thinking),
                AssistantContent::ToolCall(call) => {
                    let args = serde_json::to_string(&call.arguments).unwrap_or_default();
                    js_len(&call.name) + js_len(&args)
                }
            })
            .sum(),
        AgentMessage::ToolResult(result) => blocks_chars(&result.content, true),
        AgentMessage::Custom(custom) => content_chars(&custom.content, true),
        AgentMessage::BashExecution(bash) => js_len(&bash.command) + js_len(&bash.output),
        AgentMessage::BranchSummary(summary) => js_len(&summary.summary),
        AgentMessage::CompactionSummary(summary) => js_len(&summary.summary),
        AgentMessage::System(system) => {
            let sections: u64 =
                system.sections.iter().flatten().filter_map(|(_, text)| text.as_str()).map(js_len).sum();
            let tools = system
                .tools_added
                .as_ref()
                .map_or(0, |tools| js_len(&serde_json::to_string(tools).unwrap_or_default()));
            js_len(&system.content) + sections + tools
        }
    }
}

/// `ceil(chars / 4)` of one message.
pub fn estimate_tokens(message: &AgentMessage) -> u64 {
    message_chars(message).div_ceil(4)
}

/// The tokens a usage report stands for: `totalTokens`, or the sum of its parts when that is 0.
pub fn usage_context_tokens(usage: &Usage) -> u64 {
    if usage.total_tokens > 0 {
        usage.total_tokens
    } else {
        usage.input + usage.output + usage.cache_read + usage.cache_write
    }
}

/// The usage of an assistant message that completed (not aborted, not an error).
fn valid_usage(message: &AgentMessage) -> Option<&Usage> {
    let assistant = message.as_assistant()?;
    match assistant.stop_reason {
        StopReason::Aborted | StopReason::Error => None,
        _ => Some(&assistant.usage),
    }
}

/// The context size of `messages`: the last valid assistant usage plus estimates of later messages,
/// or the sum of all estimates when no assistant reported usage.
pub fn estimate_context_tokens(messages: &[AgentMessage]) -> ContextTokenEstimate {
    let last = messages.iter().enumerate().rev().find_map(|(index, m)| valid_usage(m).map(|u| (index, u)));
    match last {
        Some((index, usage)) => {
            let usage_tokens = usage_context_tokens(usage);
            let trailing_tokens: u64 = messages[index + 1..].iter().map(estimate_tokens).sum();
            ContextTokenEstimate {
                tokens: usage_tokens + trailing_tokens,
                usage_tokens,
                trailing_tokens,
                last_usage_index: Some(index),
            }
        }
        None => {
            let trailing_tokens: u64 = messages.iter().map(estimate_tokens).sum();
            ContextTokenEstimate { tokens: trailing_tokens, usage_tokens: 0, trailing_tokens, last_usage_index: None }
        }
    }
}

/// True when compaction is enabled and `context_tokens` exceeds `context_window - reserve_tokens`.
pub fn should_compact(context_tokens: u64, context_window: u64, settings: &CompactionSettings) -> bool {
    settings.enabled && i128::from(context_tokens) > i128::from(context_window) - i128::from(settings.reserve_tokens)
}
