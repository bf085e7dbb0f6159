//! The output-token limit pi 1.5 asks for: the caller's or the model's whole `maxTokens` (no 32000 cap),
//! fitted into the context window next to a rough estimate of the input (3.5 characters a token, or the
//! last answer's reported usage plus what came after it), with a safety margin.

use serde_json::{Value, json};

use super::provider::{LlmContext, StreamOptions};
use super::{Model, ToolSpec};
use crate::protocol::{AssistantContent, Message, MessageContent, StopReason, UserContent};

/// Tokens always kept free next to the estimated input.
const CONTEXT_SAFETY_TOKENS: u64 = 4096;
/// The larger margin, a share of the input, kept while it leaves at least [`MIN_OUTPUT_WITH_RATIO_MARGIN`].
const CONTEXT_SAFETY_RATIO: f64 = 0.15;
const MIN_OUTPUT_WITH_RATIO_MARGIN: i64 = 32_768;
/// The smallest limit ever asked for.
const MIN_MAX_TOKENS: i64 = 1;
/// Characters per estimated token.
const CHARS_PER_TOKEN: f64 = 3.5;
/// Characters an image counts as.
const IMAGE_CHARS: usize = 4800;

/// pi 1.5's limit for a call: `options.max_tokens`, else the model's `max_tokens`, fitted to the context.
pub(crate) fn requested_output_tokens(model: &Model, context: &LlmContext, options: &StreamOptions) -> u64 {
    fit_to_context(model, context, options.max_tokens.unwrap_or(model.max_tokens))
}

/// `max_tokens` lowered so that it fits into the model's context window next to the estimated input.
pub(crate) fn fit_to_context(model: &Model, context: &LlmContext, max_tokens: u64) -> u64 {
    let wanted = i64::try_from(max_tokens).unwrap_or(i64::MAX);
    let window = i64::try_from(model.context_window).unwrap_or(i64::MAX);
    if window <= 0 {
        return wanted.max(MIN_MAX_TOKENS) as u64;
    }
    let input = i64::try_from(estimate_input_tokens(context)).unwrap_or(i64::MAX);
    let safety = CONTEXT_SAFETY_TOKENS as i64;
    let margin = safety.max((input as f64 * CONTEXT_SAFETY_RATIO).ceil() as i64);
    let mut room = window.saturating_sub(input).saturating_sub(margin);
    if room < MIN_OUTPUT_WITH_RATIO_MARGIN {
        room = MIN_OUTPUT_WITH_RATIO_MARGIN.min(window.saturating_sub(input).saturating_sub(safety));
    }
    wanted.min(room.max(MIN_MAX_TOKENS)).max(0) as u64
}

/// The input pi 1.5 estimates for a call: the last usable answer's reported total plus estimates of the
/// messages after it, else estimates of the system prompt, the tool definitions and every message.
pub(crate) fn estimate_input_tokens(context: &LlmContext) -> u64 {
    let messages = &context.messages;
    if let Some((index, reported)) = last_reported_usage(messages) {
        return reported + messages[index + 1..].iter().map(estimate_message_tokens).sum::<u64>();
    }
    let mut tokens = text_tokens(utf16_len(&context.system_prompt));
    if !context.tools.is_empty() {
        tokens += text_tokens(utf16_len(&tools_json(&context.tools)));
    }
    tokens + messages.iter().map(estimate_message_tokens).sum::<u64>()
}

/// The tool definitions as pi 1.5 keeps them on its system message (its built-in tools carry a
/// `constrainedSampling` preference), serialized compactly.
fn tools_json(tools: &[ToolSpec]) -> String {
    let tools: Vec<Value> = tools
        .iter()
        .map(|tool| {
            json!({
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                "constrainedSampling": {"type": "json_schema", "strict": "prefer"},
            })
        })
        .collect();
    Value::Array(tools).to_string()
}

/// The index and reported context size of the last answer whose usage describes the conversation before it:
/// not failed or aborted, with tokens, and not older than a message before it.
fn last_reported_usage(messages: &[Message]) -> Option<(usize, u64)> {
    let mut latest_before = i64::MIN;
    let mut found = None;
    for (index, message) in messages.iter().enumerate() {
        let timestamp = match message {
            Message::User(user) => user.timestamp,
            Message::ToolResult(result) => result.timestamp,
            Message::Assistant(assistant) => {
                let usage = &assistant.usage;
                let reported = if usage.total_tokens > 0 {
                    usage.total_tokens
                } else {
                    usage.input + usage.output + usage.cache_read + usage.cache_write
                };
                let failed = matches!(assistant.stop_reason, StopReason::Aborted | StopReason::Error);
                if assistant.timestamp >= latest_before && !failed && reported > 0 {
                    found = Some((index, reported));
                }
                assistant.timestamp
            }
        };
        latest_before = latest_before.max(timestamp);
    }
    found
}

fn estimate_message_tokens(message: &Message) -> u64 {
    let chars = match message {
        Message::User(user) => match &user.content {
            MessageContent::Text(text) => utf16_len(text),
            MessageContent::Blocks(blocks) => blocks_chars(blocks),
        },
        Message::ToolResult(result) => blocks_chars(&result.content),
        Message::Assistant(assistant) => assistant
            .content
            .iter()
            .map(|block| match block {
                AssistantContent::Text(text) => utf16_len(&text.text),
                AssistantContent::Thinking(thinking) => utf16_len(&thinking.thinking),
                AssistantContent::ToolCall(call) => utf16_len(&call.name) + utf16_len(&call.arguments.to_string()),
            })
            .sum(),
    };
    text_tokens(chars)
}

fn blocks_chars(blocks: &[UserContent]) -> usize {
    blocks
        .iter()
        .map(|block| match block {
            UserContent::Text(text) => utf16_len(&text.text),
            UserContent::Image(_) => IMAGE_CHARS,
        })
        .sum()
}

/// A JavaScript string's length (UTF-16 code units).
fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

fn text_tokens(chars: usize) -> u64 {
    (chars as f64 / CHARS_PER_TOKEN).ceil() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{AssistantMessage, ToolResultMessage, Usage, UserMessage};

    fn bash_tool() -> ToolSpec {
        ToolSpec {
            name: "bash".into(),
            description: "run".into(),
            parameters: json!({"type": "object", "properties": {"command": {"type": "string"}}, "required": ["command"],
                "additionalProperties": false}),
        }
    }

    fn user(text: &str, timestamp: i64) -> Message {
        Message::User(UserMessage { content: MessageContent::Text(text.into()), timestamp })
    }

    fn model(context_window: u64, max_tokens: u64) -> Model {
        let mut model = Model::new("mock", "m", "openai-completions", "http://127.0.0.1:9/v1");
        (model.context_window, model.max_tokens) = (context_window, max_tokens);
        model
    }

    #[test]
    fn limits_fit_the_window_as_pi_1_5_observed() {
        // The input counts 67 tokens: "sys" 1, the tool definitions 65 (226 characters with pi 1.5's
        // `constrainedSampling`), "hi" 1; the margin is 4096. (pi 1.5.2 sent 14401 for a 20000-token window
        // with its own system prompt and four tools, which this estimate reproduces.)
        let context =
            LlmContext { system_prompt: "sys".into(), messages: vec![user("hi", 1)], tools: vec![bash_tool()] };
        assert_eq!(tools_json(&context.tools).len(), 226);
        assert_eq!(estimate_input_tokens(&context), 67);
        assert_eq!(fit_to_context(&model(20_000, 65_536), &context, 65_536), 20_000 - 67 - 4096);
        assert_eq!(fit_to_context(&model(20_000, 65_536), &context, 1000), 1000, "a smaller request stays");
        // A large window keeps the 15 % margin while it leaves 32768 tokens of output.
        let big = LlmContext { system_prompt: "x".repeat(350_000), ..context.clone() };
        assert_eq!(estimate_input_tokens(&big), 100_000 + 65 + 1);
        assert_eq!(fit_to_context(&model(200_000, 128_000), &big, 128_000), 200_000 - 100_066 - 15_010);
        assert_eq!(fit_to_context(&model(120_000, 128_000), &big, 128_000), 120_000 - 100_066 - 4096);
        assert_eq!(fit_to_context(&model(100_000, 128_000), &big, 128_000), 1, "never below one token");
        assert_eq!(fit_to_context(&model(0, 0), &context, 0), 1, "no window: at least one token");
        let options = StreamOptions::default();
        assert_eq!(requested_output_tokens(&model(400_000, 128_000), &context, &options), 128_000, "no 32000 cap");
        let options = StreamOptions { max_tokens: Some(500), ..options };
        assert_eq!(requested_output_tokens(&model(400_000, 128_000), &context, &options), 500);
    }

    #[test]
    fn reported_usage_replaces_the_estimate_of_what_it_covers() {
        let answered = AssistantMessage {
            usage: Usage { input: 100, output: 20, total_tokens: 120, ..Usage::default() },
            timestamp: 5,
            ..AssistantMessage::default()
        };
        let result = Message::ToolResult(ToolResultMessage {
            tool_call_id: "c".into(),
            tool_name: "bash".into(),
            content: vec![UserContent::text("(no output)")],
            details: None,
            is_error: false,
            timestamp: 6,
            duration_ms: None,
        });
        let messages = vec![user("hi", 1), Message::Assistant(answered.clone()), result];
        let context = LlmContext { system_prompt: "a long system prompt".into(), messages, tools: vec![bash_tool()] };
        // pi 1.5.2 sent 15780 here: 120 reported + 4 for the tool result.
        assert_eq!(estimate_input_tokens(&context), 124);
        assert_eq!(fit_to_context(&model(20_000, 65_536), &context, 65_536), 15_780);

        let failed = AssistantMessage { stop_reason: StopReason::Error, ..answered };
        let context = LlmContext { messages: vec![user("hi", 1), Message::Assistant(failed)], ..context };
        assert_eq!(estimate_input_tokens(&context), 6 + 65 + 1, "a failed answer's usage is not used");
    }
}
