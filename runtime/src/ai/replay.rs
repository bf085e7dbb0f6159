//! The replay transform every provider applies before serializing history (pi 0.73's
//! `transformMessages`): images become a note for models that cannot see them, another model's
//! thinking becomes text and its signatures go, foreign tool-call ids are normalised (with their
//! results), failed assistant turns are dropped, and tool calls left without a result get one.

use std::collections::{HashMap, HashSet};

use crate::ai::Model;
use crate::protocol::{
    AssistantContent, AssistantMessage, Message, MessageContent, StopReason, TextContent, ToolCall, ToolResultMessage,
    UserContent, UserMessage, now_ms,
};

/// The text of the synthetic result given to a tool call that never got one.
pub const NO_RESULT_TEXT: &str = "No result provided";
/// Stands in for the images of a user message when the model takes text only.
pub const USER_IMAGE_PLACEHOLDER: &str = "(image not sent: this model accepts text only)";
/// Stands in for the images of a tool result when the model takes text only.
pub const TOOL_IMAGE_PLACEHOLDER: &str = "(tool result image not sent: this model accepts text only)";

/// Prepares `messages` for `model`. `normalize_id` rewrites tool-call ids coming from other models
/// (and the matching tool results) into a form the target API accepts.
pub fn transform_messages(messages: &[Message], model: &Model, normalize_id: impl Fn(&str) -> String) -> Vec<Message> {
    let text_only = !model.supports_images();
    let mut renamed: HashMap<String, String> = HashMap::new();
    let converted: Vec<Message> = messages
        .iter()
        .map(|message| match message {
            Message::User(UserMessage { content: MessageContent::Blocks(blocks), timestamp }) if text_only => {
                let content = MessageContent::Blocks(replace_images(blocks, USER_IMAGE_PLACEHOLDER));
                Message::User(UserMessage { content, timestamp: *timestamp })
            }
            Message::User(_) => message.clone(),
            Message::Assistant(assistant) => Message::Assistant(replay_assistant(
                assistant,
                is_same_model(assistant, model),
                &normalize_id,
                &mut renamed,
            )),
            Message::ToolResult(result) => {
                let mut result = result.clone();
                if let Some(new_id) = renamed.get(&result.tool_call_id) {
                    result.tool_call_id = new_id.clone();
                }
                if text_only {
                    result.content = replace_images(&result.content, TOOL_IMAGE_PLACEHOLDER);
                }
                Message::ToolResult(result)
            }
        })
        .collect();

    let mut out = Vec::with_capacity(converted.len());
    let mut pending: Vec<ToolCall> = Vec::new();
    let mut answered: HashSet<String> = HashSet::new();
    for message in converted {
        match &message {
            Message::Assistant(assistant) => {
                answer_orphans(&mut out, &mut pending, &answered);
                if matches!(assistant.stop_reason, StopReason::Error | StopReason::Aborted) {
                    continue;
                }
                let calls: Vec<ToolCall> = assistant.tool_calls().cloned().collect();
                if !calls.is_empty() {
                    pending = calls;
                    answered.clear();
                }
            }
            Message::ToolResult(result) => {
                answered.insert(result.tool_call_id.clone());
            }
            _ => answer_orphans(&mut out, &mut pending, &answered),
        }
        out.push(message);
    }
    // A conversation that ends on unanswered calls gets their results too.
    answer_orphans(&mut out, &mut pending, &answered);
    out
}

fn is_same_model(message: &AssistantMessage, model: &Model) -> bool {
    message.provider == model.provider && message.api == model.api && message.model == model.id
}

/// One assistant turn as `model` should see it. The same model keeps its blocks and signatures
/// (empty unsigned thinking aside); another model gets thinking as text, no signatures, and ids it accepts.
fn replay_assistant(
    message: &AssistantMessage,
    same_model: bool,
    normalize_id: &impl Fn(&str) -> String,
    renamed: &mut HashMap<String, String>,
) -> AssistantMessage {
    let content = message
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantContent::Thinking(thinking) if thinking.redacted == Some(true) => {
                same_model.then(|| block.clone())
            }
            AssistantContent::Thinking(thinking) if same_model && thinking.thinking_signature.is_some() => {
                Some(block.clone())
            }
            AssistantContent::Thinking(thinking) if thinking.thinking.trim().is_empty() => None,
            AssistantContent::Thinking(_) if same_model => Some(block.clone()),
            AssistantContent::Thinking(thinking) => {
                Some(AssistantContent::Text(TextContent::new(thinking.thinking.clone())))
            }
            AssistantContent::Text(_) if same_model => Some(block.clone()),
            AssistantContent::Text(text) => Some(AssistantContent::Text(TextContent::new(text.text.clone()))),
            AssistantContent::ToolCall(_) if same_model => Some(block.clone()),
            AssistantContent::ToolCall(call) => {
                let id = normalize_id(&call.id);
                if id != call.id {
                    renamed.insert(call.id.clone(), id.clone());
                }
                Some(AssistantContent::ToolCall(ToolCall { id, thought_signature: None, ..call.clone() }))
            }
        })
        .collect();
    AssistantMessage { content, ..message.clone() }
}

/// Each run of images becomes one `placeholder` text.
fn replace_images(blocks: &[UserContent], placeholder: &str) -> Vec<UserContent> {
    let mut out = Vec::with_capacity(blocks.len());
    let mut after_placeholder = false;
    for block in blocks {
        match block {
            UserContent::Image(_) => {
                if !after_placeholder {
                    out.push(UserContent::text(placeholder));
                }
                after_placeholder = true;
            }
            other => {
                after_placeholder = other.as_text() == Some(placeholder);
                out.push(other.clone());
            }
        }
    }
    out
}

/// Appends a synthetic error result for every pending call that has no result yet.
fn answer_orphans(out: &mut Vec<Message>, pending: &mut Vec<ToolCall>, answered: &HashSet<String>) {
    for call in pending.drain(..) {
        if !answered.contains(&call.id) {
            out.push(Message::ToolResult(ToolResultMessage {
                tool_call_id: call.id,
                tool_name: call.name,
                content: vec![UserContent::text(NO_RESULT_TEXT)],
                details: None,
                is_error: true,
                timestamp: now_ms(),
                duration_ms: None,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ThinkingContent, UserMessage};
    use serde_json::json;

    fn model() -> Model {
        Model::new("mock", "mock-model", "openai-completions", "http://127.0.0.1:1/v1")
    }

    fn assistant(model_id: &str, content: Vec<AssistantContent>, stop_reason: StopReason) -> Message {
        Message::Assistant(AssistantMessage {
            content,
            api: "openai-completions".into(),
            provider: "mock".into(),
            model: model_id.into(),
            stop_reason,
            ..AssistantMessage::default()
        })
    }

    fn call(id: &str) -> AssistantContent {
        AssistantContent::ToolCall(ToolCall {
            id: id.into(),
            name: "read".into(),
            arguments: json!({}),
            thought_signature: None,
        })
    }

    fn result(id: &str) -> Message {
        Message::ToolResult(ToolResultMessage {
            tool_call_id: id.into(),
            tool_name: "read".into(),
            content: vec![UserContent::text("ok")],
            details: None,
            is_error: false,
            timestamp: 0,
            duration_ms: None,
        })
    }

    #[test]
    fn failed_turns_are_dropped_and_orphans_answered() {
        let messages = vec![
            Message::User(UserMessage::text("hi")),
            assistant("mock-model", vec![call("a"), call("b")], StopReason::ToolUse),
            result("a"),
            Message::User(UserMessage::text("again")),
            assistant("mock-model", vec![AssistantContent::text("partial")], StopReason::Aborted),
        ];
        let out = transform_messages(&messages, &model(), str::to_owned);
        assert_eq!(out.len(), 5);
        let Message::ToolResult(synthetic) = &out[3] else { panic!("expected a tool result, got {:?}", out[3]) };
        assert_eq!(synthetic.tool_call_id, "b");
        assert!(synthetic.is_error);
        assert_eq!(synthetic.content, vec![UserContent::text(NO_RESULT_TEXT)]);
        assert!(matches!(out[4], Message::User(_)));
    }

    #[test]
    fn foreign_thinking_becomes_text_and_ids_are_normalised() {
        let thinking = |text: &str, redacted| {
            AssistantContent::Thinking(ThinkingContent {
                thinking: text.into(),
                thinking_signature: Some("sig".into()),
                redacted,
            })
        };
        let messages = vec![
            assistant(
                "other-model",
                vec![thinking("plan", None), thinking("  ", None), thinking("secret", Some(true)), call("x|y")],
                StopReason::ToolUse,
            ),
            result("x|y"),
        ];
        let out = transform_messages(&messages, &model(), |id| id.replace('|', "_"));
        let Message::Assistant(a) = &out[0] else { panic!("expected assistant") };
        assert_eq!(a.content.len(), 2);
        assert_eq!(a.content[0], AssistantContent::text("plan"));
        let Message::ToolResult(r) = &out[1] else { panic!("expected tool result") };
        assert_eq!(r.tool_call_id, "x_y");
    }

    #[test]
    fn same_model_keeps_thinking() {
        let block = AssistantContent::Thinking(ThinkingContent {
            thinking: "hmm".into(),
            thinking_signature: Some("reasoning_content".into()),
            redacted: None,
        });
        let messages = vec![assistant("mock-model", vec![block.clone()], StopReason::Stop)];
        let out = transform_messages(&messages, &model(), str::to_owned);
        let Message::Assistant(a) = &out[0] else { panic!("expected assistant") };
        assert_eq!(a.content, vec![block]);
    }

    #[test]
    fn text_only_models_get_a_note_for_each_run_of_images() {
        let image =
            || UserContent::Image(crate::protocol::ImageContent { data: "AA==".into(), mime_type: "image/png".into() });
        let user = Message::User(UserMessage {
            content: MessageContent::Blocks(vec![
                UserContent::text("look"),
                image(),
                image(),
                UserContent::text("and"),
                image(),
            ]),
            timestamp: 1,
        });
        let mut text_only = model();
        text_only.input = vec!["text".into()];
        let out = transform_messages(std::slice::from_ref(&user), &text_only, str::to_owned);
        let Message::User(UserMessage { content: MessageContent::Blocks(blocks), .. }) = &out[0] else { panic!() };
        let texts: Vec<&str> = blocks.iter().filter_map(UserContent::as_text).collect();
        assert_eq!(texts, ["look", USER_IMAGE_PLACEHOLDER, "and", USER_IMAGE_PLACEHOLDER]);
        assert_eq!(blocks.len(), 4);
        let mut seeing = model();
        seeing.input = vec!["text".into(), "image".into()];
        assert_eq!(transform_messages(std::slice::from_ref(&user), &seeing, str::to_owned), vec![user]);
    }

    #[test]
    fn calls_left_open_at_the_end_are_answered_and_same_model_blocks_keep_signatures() {
        let signed_empty = AssistantContent::Thinking(ThinkingContent {
            thinking: Default::default(),
            thinking_signature: Some("{\"id\":\"rs_1\"}".into()),
            redacted: None,
        });
        let unsigned_empty = AssistantContent::Thinking(ThinkingContent {
            thinking: " ".into(),
            thinking_signature: None,
            redacted: None,
        });
        let messages =
            vec![assistant("mock-model", vec![signed_empty.clone(), unsigned_empty, call("z")], StopReason::ToolUse)];
        let out = transform_messages(&messages, &model(), str::to_owned);
        assert_eq!(out.len(), 2, "{out:?}");
        let Message::Assistant(a) = &out[0] else { panic!("expected assistant") };
        assert_eq!(a.content, vec![signed_empty, call("z")]);
        let Message::ToolResult(r) = &out[1] else { panic!("expected the synthetic result") };
        assert_eq!((r.tool_call_id.as_str(), r.is_error), ("z", true));
    }
}
