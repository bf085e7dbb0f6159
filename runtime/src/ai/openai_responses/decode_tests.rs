//! Event-decoding tests: item order and content indexes, signatures, partial tool arguments, usage
//! and service tiers, statuses, failure events, and the SDK's HTTP error wording.

use serde_json::{Value, json};

use super::*;
use crate::ai::{ModelCost, empty_assistant_message};

fn model() -> Model {
    let mut model = Model::new("mock", "m", "openai-responses", "http://127.0.0.1:9/v1");
    model.cost = ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 0.0 };
    model
}

fn state() -> ResponsesState {
    ResponsesState::new(empty_assistant_message(&model()))
}

/// Feeds the events; returns every produced event (as `type:index` tags) and the final state.
fn feed(events: &[Value]) -> (Vec<String>, ResponsesState) {
    let mut state = state();
    let mut produced = Vec::new();
    for event in events {
        match state.apply_event(event, &model()) {
            Ok(update) => produced.extend(update),
            Err(error) => panic!("event failed: {error}"),
        }
    }
    (produced.iter().map(tag).collect(), state)
}

fn failure(events: &[Value]) -> String {
    let mut state = state();
    for event in events {
        if let Err(error) = state.apply_event(event, &model()) {
            return error;
        }
    }
    panic!("no failure")
}

fn tag(event: &AssistantMessageEvent) -> String {
    let value = serde_json::to_value(event).unwrap_or_default();
    format!("{}:{}", value["type"].as_str().unwrap_or("?"), value["contentIndex"])
}

fn ev(kind: &str, fields: Value) -> Value {
    let mut event = json!({"type": kind});
    if let (Some(event), Value::Object(fields)) = (event.as_object_mut(), fields) {
        event.extend(fields);
    }
    event
}

fn completed(status: &str, usage: Value) -> Value {
    ev("response.completed", json!({"response": {"id": "resp_9", "status": status, "usage": usage}}))
}

fn reasoning_events() -> Vec<Value> {
    let done_item = json!({"id": "rs_1", "type": "reasoning", "encrypted_content": "ENC", "summary": [
        {"type": "summary_text", "text": "First."}, {"type": "summary_text", "text": "Second."}]});
    vec![
        ev(
            "response.output_item.added",
            json!({"output_index": 0, "item": {"id": "rs_1", "type": "reasoning", "summary": []}}),
        ),
        ev("response.reasoning_summary_text.delta", json!({"delta": "ignored: no part yet"})),
        ev("response.reasoning_summary_part.added", json!({"part": {"type": "summary_text", "text": ""}})),
        ev("response.reasoning_summary_text.delta", json!({"delta": "First."})),
        ev("response.reasoning_summary_part.done", json!({"part": {"type": "summary_text", "text": "First."}})),
        ev("response.reasoning_summary_part.added", json!({"part": {"type": "summary_text", "text": ""}})),
        ev("response.reasoning_summary_text.delta", json!({"delta": "Second."})),
        ev("response.output_item.done", json!({"output_index": 0, "item": done_item})),
    ]
}

fn message_events(id: &str, text: &str) -> Vec<Value> {
    let part = |text: &str| json!({"type": "output_text", "annotations": [], "text": text});
    vec![
        ev(
            "response.output_item.added",
            json!({"item": {"id": id, "type": "message", "content": [], "role": "assistant"}}),
        ),
        ev("response.output_text.delta", json!({"delta": "dropped: no part yet"})),
        ev("response.content_part.added", json!({"part": part("")})),
        ev("response.output_text.delta", json!({"delta": text})),
        ev(
            "response.output_item.done",
            json!({"item": {"id": id, "type": "message", "status": "completed", "content": [part(text)], "phase": "final_answer"}}),
        ),
    ]
}

fn call_events(call_id: &str, item_id: &str, pieces: &[&str], done: &str) -> Vec<Value> {
    let item = |arguments: &str| json!({"id": item_id, "type": "function_call", "arguments": arguments, "call_id": call_id, "name": "read"});
    let mut events = vec![ev("response.output_item.added", json!({"item": item("")}))];
    events.extend(pieces.iter().map(|p| ev("response.function_call_arguments.delta", json!({"delta": p}))));
    events.push(ev("response.function_call_arguments.done", json!({"arguments": done})));
    events.push(ev("response.output_item.done", json!({"item": item(done)})));
    events
}

#[test]
fn a_full_response_builds_signed_blocks() {
    let mut events = vec![ev("response.created", json!({"response": {"id": "resp_1", "status": "in_progress"}}))];
    events.extend(reasoning_events());
    events.extend(message_events("msg_1", "Hello."));
    events.extend(call_events("call_1", "fc_1", &["{\"path\":", "\"a.txt\"}"], "{\"path\":\"a.txt\"}"));
    events.push(completed(
        "completed",
        json!({"input_tokens": 120, "input_tokens_details": {"cached_tokens": 20}, "output_tokens": 30, "total_tokens": 150}),
    ));
    let (tags, state) = feed(&events);
    assert_eq!(
        tags,
        [
            "thinking_start:0",
            "thinking_delta:0",
            "thinking_delta:0",
            "thinking_delta:0",
            "thinking_end:0",
            "text_start:1",
            "text_delta:1",
            "text_end:1",
            "toolcall_start:2",
            "toolcall_delta:2",
            "toolcall_delta:2",
            "toolcall_end:2",
        ]
    );
    let message = state.message();
    let AssistantContent::Thinking(thinking) = &message.content[0] else { panic!("{:?}", message.content) };
    assert_eq!(thinking.thinking, "First.\n\nSecond.", "the final summary parts replace the streamed text");
    assert_eq!(
        thinking.thinking_signature.as_deref(),
        Some(
            r#"{"id":"rs_1","type":"reasoning","encrypted_content":"ENC","summary":[{"type":"summary_text","text":"First."},{"type":"summary_text","text":"Second."}]}"#
        )
    );
    let AssistantContent::Text(text) = &message.content[1] else { panic!("{:?}", message.content) };
    assert_eq!(text.text, "Hello.");
    assert_eq!(text.text_signature.as_deref(), Some(r#"{"v":1,"id":"msg_1","phase":"final_answer"}"#));
    let AssistantContent::ToolCall(call) = &message.content[2] else { panic!("{:?}", message.content) };
    assert_eq!((call.id.as_str(), call.name.as_str()), ("call_1|fc_1", "read"));
    assert_eq!(call.arguments, json!({"path": "a.txt"}));
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(message.response_id.as_deref(), Some("resp_9"));
    let usage = message.usage;
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.total_tokens), (100, 30, 20, 150));
    assert!((usage.cost.input - 100.0 * 3.0 / 1e6).abs() < 1e-12);
    assert!((usage.cost.cache_read - 20.0 * 0.3 / 1e6).abs() < 1e-12);
}

#[test]
fn thinking_streams_the_part_separator_as_a_delta() {
    let (_, state) = feed(&reasoning_events()[..6]);
    let AssistantContent::Thinking(thinking) = &state.message().content[0] else { panic!("not thinking") };
    assert_eq!(thinking.thinking, "First.\n\n");
    assert!(thinking.thinking_signature.is_none(), "signed only when the item is done");
}

#[test]
fn partial_arguments_parse_as_they_grow_and_done_fills_the_rest() {
    let events = call_events("call_1", "fc_1", &["{\"path\": \"some/l"], "{\"path\": \"some/longer.txt\"}");
    let mut state = state();
    let mut deltas = Vec::new();
    for event in &events {
        for produced in state.apply_event(event, &model()).unwrap_or_default() {
            if let AssistantMessageEvent::ToolcallDelta { delta, partial, .. } = produced {
                let AssistantContent::ToolCall(call) = &partial.content[0] else { continue };
                deltas.push((delta.into_string(), call.arguments.clone()));
            }
        }
    }
    assert_eq!(
        deltas,
        [
            ("{\"path\": \"some/l".to_owned(), json!({"path": "some/l"})),
            ("onger.txt\"}".to_owned(), json!({"path": "some/longer.txt"})),
        ]
    );
}

#[test]
fn refusals_are_text() {
    let events = [
        ev("response.output_item.added", json!({"item": {"id": "msg_r", "type": "message", "content": []}})),
        ev("response.content_part.added", json!({"part": {"type": "refusal", "refusal": ""}})),
        ev("response.output_text.delta", json!({"delta": "not a text part"})),
        ev("response.refusal.delta", json!({"delta": "I can't."})),
        ev(
            "response.output_item.done",
            json!({"item": {"id": "msg_r", "type": "message", "content": [{"type": "refusal", "refusal": "I can't."}]}}),
        ),
        completed("completed", Value::Null),
    ];
    let (tags, state) = feed(&events);
    assert_eq!(tags, ["text_start:0", "text_delta:0", "text_end:0"]);
    assert_eq!(state.message().text(), "I can't.");
    assert_eq!(state.message().stop_reason, StopReason::Stop);
    assert_eq!(state.message().usage.total_tokens, 0, "a null usage leaves the zeros");
}

#[test]
fn a_call_finished_without_being_opened_is_reported_but_not_kept() {
    let item =
        json!({"id": "fc_9", "type": "function_call", "arguments": "{\"a\":1}", "call_id": "call_9", "name": "ls"});
    let mut state = state();
    let events = state.apply_event(&ev("response.output_item.done", json!({"item": item})), &model());
    let events = events.unwrap_or_default();
    let Some(AssistantMessageEvent::ToolcallEnd { content_index: 0, tool_call, partial }) = events.first() else {
        panic!("{events:?}")
    };
    assert_eq!((tool_call.id.as_str(), &tool_call.arguments), ("call_9|fc_9", &json!({"a": 1})));
    assert!(partial.content.is_empty());
}

#[test]
fn statuses_map_to_stop_reasons() {
    let reason = |status: &str, with_call: bool| {
        let mut events = if with_call { call_events("c", "fc", &["{}"], "{}") } else { message_events("msg", "hi") };
        events.push(completed(status, Value::Null));
        feed(&events).1.message().stop_reason
    };
    assert_eq!(reason("completed", false), StopReason::Stop);
    assert_eq!(reason("completed", true), StopReason::ToolUse);
    assert_eq!(reason("incomplete", true), StopReason::Length);
    assert_eq!(reason("failed", false), StopReason::Error);
    assert_eq!(reason("cancelled", false), StopReason::Error);
    assert_eq!(reason("queued", false), StopReason::Stop);
    assert_eq!(failure(&[completed("weird", Value::Null)]), "Unhandled stop reason: weird");
}

#[test]
fn failure_events_end_the_stream_with_their_message() {
    let error = ev("error", json!({"code": "rate_limit_exceeded", "message": "Slow down", "param": null}));
    assert_eq!(failure(&[error]), "Error Code rate_limit_exceeded: Slow down");
    let failed = ev("response.failed", json!({"response": {"error": {"code": "server_error", "message": "boom"}}}));
    assert_eq!(
        failure(&message_events("msg", "hi").into_iter().chain([failed]).collect::<Vec<_>>()),
        "server_error: boom"
    );
}

#[test]
fn service_tiers_scale_the_cost() {
    let usage = json!({"input_tokens": 1000, "output_tokens": 100, "total_tokens": 1100});
    let cost = |tier: Option<&str>, model_id: &str| {
        let mut model = model();
        model.id = model_id.into();
        let mut state = ResponsesState::new(empty_assistant_message(&model));
        let response = json!({"status": "completed", "usage": usage, "service_tier": tier});
        let applied = state.apply_event(&ev("response.completed", json!({"response": response})), &model);
        assert!(applied.is_ok());
        state.message().usage.cost.total
    };
    let base = cost(None, "m");
    assert!((base - (1000.0 * 3.0 + 100.0 * 15.0) / 1e6).abs() < 1e-12);
    assert!((cost(Some("default"), "m") - base).abs() < 1e-12);
    assert!((cost(Some("flex"), "m") - base * 0.5).abs() < 1e-12);
    assert!((cost(Some("priority"), "m") - base * 2.0).abs() < 1e-12);
    assert!((cost(Some("priority"), "gpt-5.5") - base * 2.5).abs() < 1e-12);
}
