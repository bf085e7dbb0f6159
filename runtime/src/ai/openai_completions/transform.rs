//! The replay transform pi applies before serializing history: drop failed assistant turns, turn another
//! model's thinking into text, normalise foreign tool-call ids, and answer orphaned tool calls.

use std::collections::{HashMap, HashSet};

use crate::ai::Model;
use crate::protocol::{
    AssistantContent, AssistantMessage, Message, StopReason, TextContent, ToolCall, ToolResultMessage, UserContent,
    now_ms,
};

/// The text of the synthetic result given to a tool call that never got one.
pub const NO_RESULT_TEXT: &str = "No result provided";

/// Prepares `messages` for `model`. `normalize_id` rewrites tool-call ids coming from other models
/// (and the matching tool results) into a form the target API accepts.
pub fn transform_messages(messages: &[Message], model: &Model, normalize_id: impl Fn(&str) -> String) -> Vec<Message> {
    let mut renamed: HashMap<String, String> = HashMap::new();
    let converted: Vec<Message> = messages
        .iter()
        .map(|message| match message {
            Message::Assistant(assistant) if !is_same_model(assistant, model) => {
                Message::Assistant(foreign_assistant(assistant, &normalize_id, &mut renamed))
            }
            Message::ToolResult(result) => match renamed.get(&result.tool_call_id) {
                Some(new_id) => {
                    Message::ToolResult(ToolResultMessage { tool_call_id: new_id.clone(), ..result.clone() })
                }
                None => message.clone(),
            },
            other => other.clone(),
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
                pending = assistant.tool_calls().cloned().collect();
                answered.clear();
            }
            Message::ToolResult(result) => {
                answered.insert(result.tool_call_id.clone());
            }
            _ => answer_orphans(&mut out, &mut pending, &answered),
        }
        out.push(message);
    }
    out
}

fn is_same_model(message: &AssistantMessage, model: &Model) -> bool {
    message.provider == model.provider && message.api == model.api && message.model == model.id
}

/// Another model's turn: thinking becomes text (empty and redacted thinking are dropped), signatures go.
fn foreign_assistant(
    message: &AssistantMessage,
    normalize_id: &impl Fn(&str) -> String,
    renamed: &mut HashMap<String, String>,
) -> AssistantMessage {
    let content = message
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantContent::Thinking(thinking) => {
                let keep = thinking.redacted != Some(true) && !thinking.thinking.trim().is_empty();
                keep.then(|| AssistantContent::Text(TextContent::new(thinking.thinking.clone())))
            }
            AssistantContent::Text(text) => Some(AssistantContent::Text(TextContent::new(text.text.clone()))),
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
}
