//! Chunk-parsing tests: block order and indexes, partial tool arguments, usage, finish reasons, errors.

use serde_json::{Value, json};

use super::*;
use crate::ai::openai_sdk_errors::http_error_message;
use crate::ai::{ModelCost, empty_assistant_message};

fn model() -> Model {
    let mut model = Model::new("mock", "mock-model", "openai-completions", "http://127.0.0.1:9/v1");
    model.cost = ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 0.0 };
    model
}

fn delta(delta: Value) -> Value {
    json!({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": delta, "finish_reason": null}]})
}

/// Feeds the chunks, then closes the stream; returns every event (as `type:index` tags) and the final state.
fn feed(chunks: &[Value]) -> (Vec<String>, StreamState) {
    let model = model();
    let mut state = StreamState::new(empty_assistant_message(&model));
    let mut events = Vec::new();
    for chunk in chunks {
        match state.apply_chunk(chunk, &model) {
            Ok(update) => events.extend(update),
            Err(error) => panic!("chunk failed: {error}"),
        }
    }
    events.extend(state.finish());
    (events.iter().map(tag).collect(), state)
}

fn tag(event: &AssistantMessageEvent) -> String {
    let value = serde_json::to_value(event).unwrap_or_default();
    format!("{}:{}", value["type"].as_str().unwrap_or("?"), value["contentIndex"])
}

#[test]
fn text_then_tool_calls_closes_everything_at_the_end() {
    let chunks = [
        delta(json!({"role": "assistant", "content": ""})),
        delta(json!({"content": "Let me "})),
        delta(json!({"content": "look."})),
        delta(
            json!({"tool_calls": [{"index": 0, "id": "call_1", "type": "function", "function": {"name": "read", "arguments": ""}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"path\": \"a"}}]})),
        delta(
            json!({"tool_calls": [{"index": 1, "id": "call_2", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}),
        ),
        delta(json!({"tool_calls": [{"index": 0, "function": {"arguments": ".txt\"}"}}]})),
        json!({"id": "chatcmpl-1", "choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}),
    ];
    let (events, state) = feed(&chunks);
    assert_eq!(
        events,
        [
            "text_start:0",
            "text_delta:0",
            "text_delta:0",
            "toolcall_start:1",
            "toolcall_delta:1",
            "toolcall_delta:1",
            "toolcall_start:2",
            "toolcall_delta:2",
            "toolcall_delta:1",
            "text_end:0",
            "toolcall_end:1",
            "toolcall_end:2",
        ]
    );
    let message = state.message();
    assert_eq!(message.stop_reason, StopReason::ToolUse);
    assert_eq!(message.response_id.as_deref(), Some("chatcmpl-1"));
    assert_eq!(message.content[0], AssistantContent::text("Let me look."));
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    assert_eq!(
        (calls[0].id.as_str(), calls[0].name.as_str(), &calls[0].arguments),
        ("call_1", "read", &json!({"path": "a.txt"}))
    );
    assert_eq!((calls[1].id.as_str(), &calls[1].arguments), ("call_2", &json!({})));
}

#[test]
fn partial_arguments_are_visible_while_streaming() {
    let model = model();
    let mut state = StreamState::new(empty_assistant_message(&model));
    let open = delta(
        json!({"tool_calls": [{"index": 0, "id": "c", "function": {"name": "write", "arguments": "{\"path\":\"x\",\"content\":\"hel"}}]}),
    );
    let events = state.apply_chunk(&open, &model).unwrap_or_default();
    let Some(AssistantMessageEvent::ToolcallDelta { partial, delta, .. }) = events.last() else {
        panic!("no delta: {events:?}")
    };
    assert_eq!(delta, "{\"path\":\"x\",\"content\":\"hel");
    let Some(AssistantContent::ToolCall(call)) = partial.content.first() else { panic!("no tool call") };
    assert_eq!(call.arguments, json!({"path": "x", "content": "hel"}));
}

#[test]
fn thinking_text_alternation_and_signature() {
    let chunks = [
        delta(json!({"reasoning_content": "Hmm. "})),
        delta(json!({"reasoning_content": "Ok."})),
        delta(json!({"content": "Hi"})),
        delta(json!({"reasoning": "more"})),
    ];
    let (events, state) = feed(&chunks);
    assert_eq!(
        events,
        [
            "thinking_start:0",
            "thinking_delta:0",
            "thinking_delta:0",
            "thinking_end:0",
            "text_start:1",
            "text_delta:1",
            "text_end:1",
            "thinking_start:2",
            "thinking_delta:2",
            "thinking_end:2",
        ]
    );
    let AssistantContent::Thinking(first) = &state.message().content[0] else { panic!("expected thinking") };
    assert_eq!((first.thinking.as_str(), first.thinking_signature.as_deref()), ("Hmm. Ok.", Some("reasoning_content")));
    let AssistantContent::Thinking(last) = &state.message().content[2] else { panic!("expected thinking") };
    assert_eq!(last.thinking_signature.as_deref(), Some("reasoning"));
}

#[test]
fn text_after_tool_calls_opens_a_new_block() {
    let chunks = [
        delta(json!({"content": "a"})),
        delta(json!({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "ls", "arguments": "{}"}}]})),
        delta(json!({"content": "b"})),
    ];
    let (events, state) = feed(&chunks);
    assert_eq!(
        events,
        [
            "text_start:0",
            "text_delta:0",
            "toolcall_start:1",
            "toolcall_delta:1",
            "toolcall_end:1",
            "text_end:0",
            "text_start:2",
            "text_delta:2",
            "text_end:2"
        ]
    );
    assert_eq!(state.message().content.len(), 3);
}

#[test]
fn a_new_id_on_a_reused_index_starts_a_new_call() {
    let chunks = [
        delta(json!({"tool_calls": [{"index": 0, "id": "a", "function": {"name": "ls", "arguments": "{}"}}]})),
        delta(json!({"tool_calls": [{"index": 0, "id": "b", "function": {"name": "ls", "arguments": "{}"}}]})),
        delta(json!({"tool_calls": [{"function": {"arguments": ""}}]})),
    ];
    let (events, state) = feed(&chunks);
    assert_eq!(
        events,
        [
            "toolcall_start:0",
            "toolcall_delta:0",
            "toolcall_end:0",
            "toolcall_start:1",
            "toolcall_delta:1",
            "toolcall_delta:1",
            "toolcall_end:1"
        ]
    );
    let ids: Vec<&str> = state.message().tool_calls().map(|c| c.id.as_str()).collect();
    assert_eq!(ids, ["a", "b"]);
}

#[test]
fn usage_counts_like_pi_with_cost() {
    let chunk = json!({"id": "x", "choices": [], "usage": {
        "prompt_tokens": 1000, "completion_tokens": 200, "total_tokens": 1200,
        "prompt_tokens_details": {"cached_tokens": 400},
        "completion_tokens_details": {"reasoning_tokens": 50}
    }});
    let (_, state) = feed(&[chunk]);
    let usage = state.message().usage;
    assert_eq!(
        (usage.input, usage.output, usage.cache_read, usage.cache_write, usage.total_tokens),
        (600, 250, 400, 0, 1250)
    );
    let close = |a: f64, b: f64| (a - b).abs() < 1e-12;
    assert!(close(usage.cost.input, 600.0 * 3.0 / 1e6), "{:?}", usage.cost);
    assert!(close(usage.cost.output, 250.0 * 15.0 / 1e6));
    assert!(close(usage.cost.cache_read, 400.0 * 0.3 / 1e6));
    assert!(close(usage.cost.total, usage.cost.input + usage.cost.output + usage.cost.cache_read));

    // llama.cpp-style usage inside the choice counts too.
    let in_choice =
        json!({"choices": [{"index": 0, "delta": {}, "usage": {"prompt_tokens": 7, "completion_tokens": 3}}]});
    let (_, state) = feed(&[in_choice]);
    assert_eq!((state.message().usage.input, state.message().usage.total_tokens), (7, 10));
}

#[test]
fn finish_reasons_map_like_pi() {
    let finish = |reason: &str| json!({"choices": [{"index": 0, "delta": {}, "finish_reason": reason}]});
    for (reason, expected) in [
        ("stop", StopReason::Stop),
        ("end", StopReason::Stop),
        ("length", StopReason::Length),
        ("tool_calls", StopReason::ToolUse),
        ("function_call", StopReason::ToolUse),
        ("content_filter", StopReason::Error),
    ] {
        assert_eq!(feed(&[finish(reason)]).1.message().stop_reason, expected, "{reason}");
    }
    let model = model();
    let mut state = StreamState::new(empty_assistant_message(&model));
    assert_eq!(state.apply_chunk(&finish("weird"), &model).err().as_deref(), Some("Unhandled stop reason: weird"));
}

#[test]
fn error_chunks_fail_with_the_sdk_wording() {
    let model = model();
    let mut state = StreamState::new(empty_assistant_message(&model));
    let chunk = json!({"error": {"code": 500, "message": "Failed to parse input", "type": "server_error"}});
    assert_eq!(state.apply_chunk(&chunk, &model).err().as_deref(), Some("Failed to parse input"));
    let chunk = json!({"error": {"code": 500}});
    assert_eq!(state.apply_chunk(&chunk, &model).err().as_deref(), Some("{\"code\":500}"));
}

#[test]
fn http_errors_read_like_the_openai_sdk() {
    assert_eq!(http_error_message(500, "boom"), "500 boom");
    assert_eq!(http_error_message(400, ""), "400 status code (no body)");
    assert_eq!(
        http_error_message(429, r#"{"error":{"message":"Rate limit reached","type":"rate_limit"}}"#),
        "429 Rate limit reached"
    );
    assert_eq!(http_error_message(401, r#"{"error":"bad key"}"#), "401 \"bad key\"");
    assert_eq!(http_error_message(404, r#"{"detail":"Not Found"}"#), "404 {\"detail\":\"Not Found\"}");
    assert_eq!(
        http_error_message(
            502,
            r#"{"error":{"message":"Provider returned error","metadata":{"raw":"upstream down"}}}"#
        ),
        "502 Provider returned error\nupstream down"
    );
}

#[test]
fn level_1_5_usage_reports_reasoning_and_cache_writes_apart() {
    let model = Model::new("mock", "m", "openai-completions", "http://127.0.0.1:9/v1");
    let usage_of = |usage: Value| {
        let mut state = StreamState::new(AssistantMessage::default()).with_compat(crate::protocol::PiCompat::V1_5);
        let result = state.apply_chunk(&json!({"id": "x", "choices": [], "usage": usage}), &model);
        assert!(result.is_ok(), "{result:?}");
        state.message().usage
    };
    // Observed from pi 1.5.2: output as reported (reasoning included), reasoning apart.
    let usage = usage_of(json!({"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150,
        "prompt_tokens_details": {"cached_tokens": 20}, "completion_tokens_details": {"reasoning_tokens": 30}}));
    assert_eq!(
        (usage.input, usage.output, usage.cache_read, usage.reasoning, usage.total_tokens),
        (80, 50, 20, Some(30), 150)
    );
    assert_eq!(usage.cost.total_from_provider, Some(false));
    // Cache writes come out of the input, cache reads stay whole (pi 0.73 took the writes out of the reads).
    let usage = usage_of(json!({"prompt_tokens": 100, "completion_tokens": 20,
        "prompt_tokens_details": {"cached_tokens": 30, "cache_write_tokens": 10}}));
    assert_eq!(
        (usage.input, usage.cache_read, usage.cache_write, usage.reasoning, usage.total_tokens),
        (60, 30, 10, Some(0), 120)
    );
    let usage = usage_of(json!({"prompt_tokens": 100, "completion_tokens": 20, "prompt_cache_hit_tokens": 25}));
    assert_eq!((usage.input, usage.cache_read, usage.total_tokens), (75, 25, 120));
}

#[test]
fn level_1_5_keeps_the_finish_reason_and_fails_unknown_ones_only_at_the_end() {
    let model = Model::new("mock", "m", "openai-completions", "http://127.0.0.1:9/v1");
    let mut state = StreamState::new(AssistantMessage::default()).with_compat(crate::protocol::PiCompat::V1_5);
    let finish = json!({"id": "x", "choices": [{"index": 0, "delta": {}, "finish_reason": "weird"}]});
    assert!(state.apply_chunk(&finish, &model).is_ok(), "not at once, as pi 0.73 did");
    let message = state.message();
    assert_eq!((message.stop_reason, message.raw_stop_reason.as_deref()), (StopReason::Error, Some("weird")));
    assert_eq!(message.error_message.as_deref(), Some("Provider finish_reason: weird"));
}
