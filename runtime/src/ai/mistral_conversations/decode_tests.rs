//! Unit tests of the Mistral chunk decoder: block order, tool-call keys, usage, stop reasons and the
//! SDK's schema checks.

use serde_json::{Value, json};

use super::*;
use crate::ai::provider::empty_assistant_message;

fn model() -> Model {
    let mut model = Model::new("mistral", "m", "mistral-conversations", "http://x");
    model.cost.input = 2.0;
    model.cost.output = 6.0;
    model
}

fn chunk(delta: Value, finish: Option<&str>) -> String {
    json!({"id": "c1", "model": "m", "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}).to_string()
}

/// Feeds `datas`, finishes, and returns the event types and the message.
fn decode(datas: &[String]) -> (Vec<String>, AssistantMessage) {
    let model = model();
    let mut state = MistralState::new(empty_assistant_message(&model));
    let mut events = Vec::new();
    for data in datas {
        if let Err(error) = state.apply_data(data, &model, &mut events) {
            panic!("{data}: {error}");
        }
    }
    state.finish(&mut events);
    let types = events
        .iter()
        .map(|e| serde_json::to_value(e).ok().and_then(|v| v["type"].as_str().map(str::to_owned)).unwrap_or_default())
        .collect();
    (types, state.take_message())
}

#[test]
fn an_empty_first_delta_opens_a_text_block_and_thinking_parts_alternate_with_it() {
    let (types, message) = decode(&[
        chunk(json!({"role": "assistant", "content": ""}), None),
        chunk(
            json!({"content": [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me "}, {"type": "reference", "reference_ids": [1]}, {"type": "text", "text": "see."}]}]}),
            None,
        ),
        chunk(
            json!({"content": [{"type": "thinking", "thinking": [{"type": "reference", "reference_ids": [2]}]}]}),
            None,
        ),
        chunk(json!({"content": "Hello"}), None),
        chunk(json!({"content": [{"type": "text", "text": " world"}]}), Some("stop")),
    ]);
    assert_eq!(
        types,
        [
            "text_start",
            "text_delta",
            "text_end",
            "thinking_start",
            "thinking_delta",
            "thinking_end",
            "text_start",
            "text_delta",
            "text_delta",
            "text_end"
        ]
    );
    let blocks: Vec<Value> = message.content.iter().filter_map(|b| serde_json::to_value(b).ok()).collect();
    assert_eq!(
        blocks,
        [
            json!({"type": "text", "text": ""}),
            json!({"type": "thinking", "thinking": "Let me see."}),
            json!({"type": "text", "text": "Hello world"})
        ]
    );
    assert_eq!((message.stop_reason, message.response_id.as_deref()), (StopReason::Stop, Some("c1")));
}

#[test]
fn tool_calls_are_keyed_by_id_and_index_and_close_at_the_end() {
    let call = |id: Value, index: u64, arguments: Value| json!({"tool_calls": [{"id": id, "function": {"name": "read", "arguments": arguments}, "index": index}]});
    let (types, message) = decode(&[
        chunk(json!({"content": "Reading."}), None),
        chunk(call(json!("abcDEF123"), 0, json!("{\"path\":")), None),
        chunk(call(json!("abcDEF123"), 0, json!("\"a.txt\"}")), None),
        chunk(call(json!("null"), 1, json!({"path": "b.txt"})), None),
        chunk(json!({"content": "More."}), Some("tool_calls")),
    ]);
    assert_eq!(
        types,
        [
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_start",
            "toolcall_delta",
            "toolcall_delta",
            "toolcall_start",
            "toolcall_delta",
            "text_start",
            "text_delta",
            "text_end",
            "toolcall_end",
            "toolcall_end"
        ]
    );
    let calls: Vec<(String, Value)> = message.tool_calls().map(|c| (c.id.clone(), c.arguments.clone())).collect();
    assert_eq!(
        calls,
        [("abcDEF123".to_owned(), json!({"path": "a.txt"})), ("toolcall1".to_owned(), json!({"path": "b.txt"}))]
    );
    assert_eq!(message.stop_reason, StopReason::ToolUse);
}

#[test]
fn usage_brings_the_cost_and_finish_reasons_map_as_pi_maps_them() {
    let usage = json!({"id": "c1", "model": "m", "usage": {"prompt_tokens": 1000, "completion_tokens": 500, "total_tokens": 0},
        "choices": [{"index": 0, "delta": {}, "finish_reason": "model_length"}]});
    let (_, message) = decode(&[usage.to_string()]);
    let usage = message.usage;
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.total_tokens), (1000, 500, 0, 1500));
    assert!((usage.cost.total - (1000.0 * 2.0 + 500.0 * 6.0) / 1e6).abs() < 1e-12);
    assert_eq!(message.stop_reason, StopReason::Length);
    for (reason, stop) in
        [("error", StopReason::Error), ("content_filter", StopReason::Stop), ("length", StopReason::Length)]
    {
        let (_, message) = decode(&[chunk(json!({}), Some(reason))]);
        assert_eq!(message.stop_reason, stop, "{reason}");
    }
    let (_, empty) = decode(&[json!({"id": "", "model": "m", "choices": []}).to_string()]);
    assert_eq!((empty.response_id.as_deref(), empty.content.len()), (Some(""), 0));
}

#[test]
fn chunks_the_sdk_rejects_fail_with_zod_issues() {
    let model = model();
    let mut state = MistralState::new(empty_assistant_message(&model));
    let mut events = Vec::new();
    let error = state.apply_data(r#"{"object":"error","message":"boom","type":"server_error"}"#, &model, &mut events);
    let expected = r#"[
  {
    "expected": "string",
    "code": "invalid_type",
    "path": [
      "data",
      "id"
    ],
    "message": "Invalid input: expected string, received undefined"
  },
  {
    "expected": "string",
    "code": "invalid_type",
    "path": [
      "data",
      "model"
    ],
    "message": "Invalid input: expected string, received undefined"
  },
  {
    "expected": "array",
    "code": "invalid_type",
    "path": [
      "data",
      "choices"
    ],
    "message": "Invalid input: expected array, received undefined"
  }
]"#;
    assert_eq!(error.err().as_deref(), Some(expected));
    let bad_choice = r#"{"id":"c","model":"m","usage":null,"choices":[{"index":0.5,"delta":{}}]}"#;
    let error = state.apply_data(bad_choice, &model, &mut events).err().unwrap_or_default();
    assert!(
        error.contains(r#""usage""#) && error.contains(r#""index""#) && error.contains(r#""finish_reason""#),
        "{error}"
    );
    let error = state.apply_data("not json", &model, &mut events).err().unwrap_or_default();
    assert!(error.contains("\"code\": \"custom\"") && error.contains("malformed json: SyntaxError:"), "{error}");
    assert!(events.is_empty());
}
