//! Chunk-decoding tests: block switching, whole function calls and their ids, signatures, finish
//! reasons, usage, error chunks, and whole recorded bodies through the decoder.

use regex::Regex;
use serde_json::{Value, json};

use super::*;
use crate::ai::transport::decode_recorded;
use crate::ai::{ModelCost, empty_assistant_message};
use crate::protocol::{TextContent, ThinkingContent};

fn model() -> Model {
    let mut model = Model::new("google", "gemini-2.5-flash", "google-generative-ai", "http://127.0.0.1:9/v1beta");
    model.cost = ModelCost { input: 1.0, output: 10.0, cache_read: 0.1, cache_write: 0.0 };
    model
}

fn parts(parts: Value) -> Value {
    json!({"candidates": [{"content": {"parts": parts, "role": "model"}, "index": 0}], "responseId": "resp-1"})
}

fn with_finish(mut chunk: Value, reason: &str) -> Value {
    chunk["candidates"][0]["finishReason"] = json!(reason);
    chunk
}

/// Feeds the chunks, then closes the stream; returns the events as `type:index` tags and the state.
fn feed(chunks: &[Value]) -> (Vec<String>, Vec<AssistantMessageEvent>, StreamState) {
    let model = model();
    let mut state = StreamState::new(empty_assistant_message(&model));
    let mut events = Vec::new();
    for chunk in chunks {
        if let Err(error) = state.apply_chunk(chunk, &model, &mut events) {
            panic!("chunk failed: {error}");
        }
    }
    state.finish(&mut events);
    (events.iter().map(tag).collect(), events, state)
}

fn tag(event: &AssistantMessageEvent) -> String {
    let value = serde_json::to_value(event).unwrap_or_default();
    format!("{}:{}", value["type"].as_str().unwrap_or("?"), value["contentIndex"])
}

#[test]
fn thought_and_text_parts_switch_blocks_and_keep_signatures() {
    let chunks = [
        parts(json!([{"text": "Plan ", "thought": true, "thoughtSignature": "c2ln"}])),
        parts(json!([{"text": "more", "thought": true}])),
        parts(json!([{"text": "Answer"}, {"text": " here", "thoughtSignature": "dGV4dA=="}])),
        with_finish(parts(json!([{"text": "Again", "thought": true}])), "STOP"),
    ];
    let (tags, events, state) = feed(&chunks);
    assert_eq!(
        tags,
        [
            "thinking_start:0",
            "thinking_delta:0",
            "thinking_delta:0",
            "thinking_end:0",
            "text_start:1",
            "text_delta:1",
            "text_delta:1",
            "text_end:1",
            "thinking_start:2",
            "thinking_delta:2",
            "thinking_end:2",
        ]
    );
    let message = state.message();
    assert_eq!(
        message.content[0],
        AssistantContent::Thinking(ThinkingContent {
            thinking: "Plan more".into(),
            thinking_signature: Some("c2ln".into()),
            redacted: None,
        }),
        "a later part without a signature keeps the earlier one"
    );
    assert_eq!(
        message.content[1],
        AssistantContent::Text(TextContent { text: "Answer here".into(), text_signature: Some("dGV4dA==".into()) })
    );
    assert_eq!(message.stop_reason, StopReason::Stop);
    assert_eq!(message.response_id.as_deref(), Some("resp-1"));
    let Some(AssistantMessageEvent::TextEnd { content, .. }) = events.get(7) else { panic!("{events:?}") };
    assert_eq!(content, "Answer here");
}

#[test]
fn function_calls_arrive_whole_with_ids_made_up_when_missing() {
    let chunks = [
        parts(json!([{"text": "Reading."}])),
        with_finish(
            parts(json!([
                {"functionCall": {"name": "read", "args": {"path": "a.txt"}}, "thoughtSignature": "Y2FsbA=="},
                {"functionCall": {"id": "given", "name": "ls"}},
                {"functionCall": {"id": "given", "name": "ls", "args": {"dir": "."}}},
            ])),
            "STOP",
        ),
    ];
    let (tags, events, state) = feed(&chunks);
    assert_eq!(
        tags,
        [
            "text_start:0",
            "text_delta:0",
            "text_end:0",
            "toolcall_start:1",
            "toolcall_delta:1",
            "toolcall_end:1",
            "toolcall_start:2",
            "toolcall_delta:2",
            "toolcall_end:2",
            "toolcall_start:3",
            "toolcall_delta:3",
            "toolcall_end:3",
        ]
    );
    let message = state.message();
    assert_eq!(message.stop_reason, StopReason::ToolUse, "STOP with calls is toolUse");
    let calls: Vec<&ToolCall> = message.tool_calls().collect();
    let made_up = Regex::new(r"^read_\d{13}_\d+$").ok();
    assert!(made_up.is_some_and(|re| re.is_match(&calls[0].id)), "generated id: {}", calls[0].id);
    assert_eq!(calls[0].thought_signature.as_deref(), Some("Y2FsbA=="));
    assert_eq!(calls[0].arguments, json!({"path": "a.txt"}));
    assert_eq!((calls[1].id.as_str(), &calls[1].arguments), ("given", &json!({})), "missing args are {{}}");
    assert!(calls[2].id.starts_with("ls_"), "a repeated id is replaced: {}", calls[2].id);
    let Some(AssistantMessageEvent::ToolcallDelta { delta, .. }) = events.get(4) else { panic!("{events:?}") };
    assert_eq!(delta, r#"{"path":"a.txt"}"#);
    let Some(AssistantMessageEvent::ToolcallEnd { tool_call, partial, .. }) = events.get(5) else {
        panic!("{events:?}")
    };
    assert_eq!(tool_call, calls[0]);
    assert_eq!(partial.content.len(), 2);
}

#[test]
fn usage_counts_cached_tokens_apart_and_thoughts_as_output() {
    let mut chunk = with_finish(parts(json!([{"text": "x"}])), "MAX_TOKENS");
    chunk["usageMetadata"] = json!({
        "promptTokenCount": 1000,
        "candidatesTokenCount": 150,
        "thoughtsTokenCount": 50,
        "cachedContentTokenCount": 400,
        "totalTokenCount": 1200,
    });
    let (_, _, state) = feed(&[chunk]);
    let message = state.message();
    assert_eq!(message.stop_reason, StopReason::Length);
    let usage = message.usage;
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.total_tokens), (600, 200, 400, 1200));
    assert!((usage.cost.input - 600.0 / 1e6).abs() < 1e-12);
    assert!((usage.cost.output - 2000.0 / 1e6).abs() < 1e-12);
    assert!((usage.cost.cache_read - 40.0 / 1e6).abs() < 1e-12);
    assert!((usage.cost.total - 2640.0 / 1e6).abs() < 1e-12);
}

#[test]
fn finish_reasons_map_like_pi() {
    for (reason, expected) in
        [("STOP", StopReason::Stop), ("MAX_TOKENS", StopReason::Length), ("SAFETY", StopReason::Error)]
    {
        assert_eq!(map_finish_reason(reason), Ok(expected), "{reason}");
    }
    assert_eq!(map_finish_reason("MALFORMED_FUNCTION_CALL"), Ok(StopReason::Error));
    assert_eq!(map_finish_reason("SOMETHING_NEW"), Err("Unhandled stop reason: SOMETHING_NEW".to_owned()));
    let model = model();
    let mut state = StreamState::new(empty_assistant_message(&model));
    let mut events = Vec::new();
    let empty = json!({"candidates": [{"content": {"role": "model"}, "finishReason": ""}]});
    assert_eq!(state.apply_chunk(&empty, &model, &mut events), Ok(()));
    assert_eq!((state.message().stop_reason, events.len()), (StopReason::Stop, 0), "an empty reason is no reason");
}

#[test]
fn error_chunks_fail_with_the_sdk_wording() {
    let model = model();
    let mut state = StreamState::new(empty_assistant_message(&model));
    let chunk = json!({"error": {"code": 500, "message": "boom", "status": "INTERNAL"}});
    assert_eq!(
        state.apply_chunk(&chunk, &model, &mut Vec::new()),
        Err(r#"got status: INTERNAL. {"error":{"code":500,"message":"boom","status":"INTERNAL"}}"#.to_owned())
    );
    let no_status = json!({"error": {"code": 503}});
    assert_eq!(
        state.apply_chunk(&no_status, &model, &mut Vec::new()),
        Err(r#"got status: undefined. {"error":{"code":503}}"#.to_owned())
    );
}

fn sse(chunks: &[Value]) -> Vec<u8> {
    chunks.iter().map(|c| format!("data: {c}\r\n\r\n")).collect::<String>().into_bytes()
}

#[tokio::test]
async fn recorded_bodies_decode_in_any_split() {
    let mut last = with_finish(parts(json!([{"functionCall": {"name": "read", "args": {"path": "ü.txt"}}}])), "STOP");
    last["usageMetadata"] = json!({"promptTokenCount": 10, "candidatesTokenCount": 5, "totalTokenCount": 15});
    let body = sse(&[parts(json!([{"text": "Ünï", "thought": true}])), parts(json!([{"text": "cödé ✓"}])), last]);
    let whole = decode_recorded(super::super::decoder(&model()), vec![body.clone()]).await;
    let bytes = decode_recorded(super::super::decoder(&model()), body.iter().map(|b| vec![*b]).collect()).await;
    let (Ok(whole_message), Ok(byte_message)) = (&whole.1, &bytes.1) else { panic!("{whole:?} {bytes:?}") };
    assert_eq!(whole_message.stop_reason, StopReason::ToolUse);
    assert_eq!(whole_message.text(), "cödé ✓");
    assert_eq!(whole_message.usage.total_tokens, 15);
    assert_eq!(byte_message.text(), whole_message.text());
    assert_eq!(byte_message.content.len(), whole_message.content.len());
    assert_eq!(whole.0.len(), bytes.0.len(), "the same events whatever the split");
}

#[tokio::test]
async fn recorded_failures_become_errors() {
    let decode = |body: &str| decode_recorded(super::super::decoder(&model()), vec![body.as_bytes().to_vec()]);
    let (events, result) = decode(
        "data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"no\"}]},\"finishReason\":\"SAFETY\"}]}\n\n",
    )
    .await;
    assert_eq!(result.map_err(|e| e.message), Err("An unknown error occurred".to_owned()));
    assert_eq!(events.iter().map(tag).collect::<Vec<_>>(), ["text_start:0", "text_delta:0", "text_end:0"]);
    let (_, result) = decode("data: {not json}\n\n").await;
    assert!(result.is_err_and(|e| e.message.starts_with("could not parse stream chunk as JSON")));
    let (events, result) =
        decode("data: {\"candidates\":[{\"content\":{\"parts\":[{\"text\":\"x\"}]},\"finishReason\":\"ODD\"}]}\n\n")
            .await;
    assert_eq!(result.map_err(|e| e.message), Err("Unhandled stop reason: ODD".to_owned()));
    assert_eq!(events.len(), 2, "as in pi, the block is not closed when a chunk fails");
    let (events, result) = decode(": keep-alive\n\nevent: ping\ndata: \n\n").await;
    assert!(events.is_empty());
    assert!(result.is_ok_and(|m| m.content.is_empty() && m.stop_reason == StopReason::Stop));
}

/// The chunks Gemini sends most (parts with the usage so far) read without a JSON tree give exactly the
/// events and message the general reading gives, whatever comes between them.
#[test]
fn typical_chunks_read_the_same_as_the_general_way() {
    let usage =
        |output: u64| json!({"promptTokenCount": 10, "candidatesTokenCount": output, "totalTokenCount": 10 + output});
    let with_usage = |mut chunk: Value, output: u64| {
        chunk["usageMetadata"] = usage(output);
        chunk
    };
    let chunks = [
        with_usage(parts(json!([{"text": "Plan ", "thought": true, "thoughtSignature": "c2ln"}])), 1),
        with_usage(parts(json!([{"text": "more", "thought": true}])), 2),
        with_usage(parts(json!([{"text": "Answer"}, {"text": " here", "thoughtSignature": "dGV4dA=="}])), 3),
        parts(json!([{"functionCall": {"id": "call_1", "name": "read", "args": {"path": "a"}}}])),
        with_usage(parts(json!([{"text": "After the call, \"quoted\" \u{e9}"}])), 5),
        with_finish(with_usage(parts(json!([{"text": "!"}])), 6), "STOP"),
    ];
    let model = model();
    let start = empty_assistant_message(&model);
    let read_all = |typical_path: bool| {
        let mut state = StreamState::new(start.clone());
        let mut events = Vec::new();
        let mut typical = 0;
        for chunk in &chunks {
            if typical_path && state.apply_typical_chunk(&chunk.to_string(), &model, &mut events) {
                typical += 1;
            } else if let Err(error) = state.apply_chunk(chunk, &model, &mut events) {
                panic!("chunk failed: {error}");
            }
        }
        state.finish(&mut events);
        (serde_json::to_value(&events).unwrap(), serde_json::to_value(state.message()).unwrap(), typical)
    };
    let (events, message, typical) = read_all(true);
    let (general_events, general_message, _) = read_all(false);
    assert_eq!(typical, 4, "the text chunks take the typical path, the call and the finish do not");
    assert_eq!(events, general_events);
    assert_eq!(message, general_message);
    assert_eq!(message["usage"]["output"], 6);
}
