//! End-to-end tests of level 1.5 for openai-responses against the mock server: pending partials, the status
//! as the raw stop reason, pi 1.5.2's endings (`response.incomplete`, a stream without a terminal event),
//! reasoning tokens, and the request it sends (no `strict`, the `session-id` header).

use serde_json::{Value, json};

use super::provider_tests_v1_5::{collect, context, final_message, only_request, options, raw_server, sse, summary};
use crate::ai::{Model, OpenAiResponsesProvider};
use crate::protocol::PiCompat;

type Frame = (Option<&'static str>, Value);

fn event(kind: &'static str, data: Value) -> Frame {
    let mut data = data;
    data["type"] = json!(kind);
    (Some(kind), data)
}

/// A message item streaming `hi`, without an ending.
fn message_frames() -> Vec<Frame> {
    let item = json!({"id": "msg_1", "type": "message", "role": "assistant", "status": "in_progress", "content": []});
    let done = json!({"id": "msg_1", "type": "message", "role": "assistant", "status": "completed",
        "content": [{"type": "output_text", "text": "hi", "annotations": []}]});
    vec![
        event("response.created", json!({"response": {"id": "resp_1", "status": "in_progress", "output": []}})),
        event("response.output_item.added", json!({"output_index": 0, "item": item})),
        event(
            "response.content_part.added",
            json!({"item_id": "msg_1", "output_index": 0, "content_index": 0,
                "part": {"type": "output_text", "text": "", "annotations": []}}),
        ),
        event(
            "response.output_text.delta",
            json!({"item_id": "msg_1", "output_index": 0, "content_index": 0, "delta": "hi"}),
        ),
        event("response.output_item.done", json!({"output_index": 0, "item": done})),
    ]
}

fn usage() -> Value {
    json!({"input_tokens": 100, "input_tokens_details": {"cached_tokens": 30}, "output_tokens": 50,
        "output_tokens_details": {"reasoning_tokens": 20}, "total_tokens": 150})
}

/// The message frames, then `kind` carrying a response with `fields`.
fn ending(kind: &'static str, fields: Value) -> String {
    let mut response = json!({"id": "resp_1", "output": [], "usage": usage()});
    if let (Some(response), Value::Object(fields)) = (response.as_object_mut(), fields) {
        response.extend(fields);
    }
    let mut frames = message_frames();
    frames.push(event(kind, json!({"response": response})));
    sse(&frames)
}

fn model(base_url: String) -> Model {
    let mut model = Model::new("mock", "mock-model", "openai-responses", base_url);
    model.max_tokens = 65_536;
    model
}

#[tokio::test]
async fn responses_pend_until_the_response_completes() {
    let completed = ending("response.completed", json!({"status": "completed"}));
    let server = raw_server(vec![completed.clone(), completed]).await;
    let provider = OpenAiResponsesProvider::new();
    let events = collect(&provider, &model(server.base_url()), &context(), options(PiCompat::V1_5)).await;
    assert_eq!(
        summary(&events),
        [
            "start pending raw=- reasoning=- fromProvider=-",
            "text_start pending raw=- reasoning=- fromProvider=-",
            "text_delta pending raw=- reasoning=- fromProvider=-",
            "text_end pending raw=- reasoning=- fromProvider=-",
            "done stop raw=completed reasoning=20 fromProvider=false",
        ]
    );
    let usage = final_message(&events).usage;
    assert_eq!((usage.input, usage.output, usage.cache_read, usage.total_tokens), (70, 50, 30, 150));

    let events = collect(&provider, &model(server.base_url()), &context(), options(PiCompat::V0_73)).await;
    assert_eq!(summary(&events)[0], "start stop raw=- reasoning=- fromProvider=-");
    assert_eq!(summary(&events)[4], "done stop raw=- reasoning=- fromProvider=-");
    server.shutdown().await;
}

#[tokio::test]
async fn responses_endings_follow_pi_1_5() {
    let failed = json!({"status": "failed", "error": {"code": "server_error", "message": "bad"}});
    let mut named_error = message_frames();
    named_error.push((Some("error"), json!({"type": "error", "code": "x"})));
    let cases: Vec<(String, &str, Option<&str>, Option<&str>)> = vec![
        (
            ending(
                "response.incomplete",
                json!({"status": "incomplete",
            "incomplete_details": {"reason": "max_output_tokens"}}),
            ),
            "length",
            Some("incomplete.max_output_tokens"),
            None,
        ),
        (
            ending(
                "response.completed",
                json!({"status": "incomplete",
            "incomplete_details": {"reason": "content_filter"}}),
            ),
            "error",
            Some("incomplete.content_filter"),
            Some("Response incomplete: content_filter"),
        ),
        (
            ending("response.completed", json!({"status": "incomplete"})),
            "error",
            Some("incomplete"),
            Some("Response incomplete without a provider reason"),
        ),
        (
            ending("response.completed", json!({"status": "cancelled"})),
            "error",
            Some("cancelled"),
            Some("An unknown error occurred"),
        ),
        (
            ending("response.completed", json!({"status": "weird"})),
            "error",
            Some("weird"),
            Some("Unhandled stop reason: weird"),
        ),
        (
            ending("response.done", json!({"status": "completed"})),
            "error",
            None,
            Some("OpenAI Responses stream ended before a terminal response event"),
        ),
        (ending("response.failed", failed), "error", Some("failed"), Some("server_error: bad")),
        (
            ending("response.failed", json!({"status": "failed"})),
            "error",
            Some("failed"),
            Some("Unknown error (no error details in response)"),
        ),
        (sse(&named_error), "error", None, Some(r#"{"type":"error","code":"x"}"#)),
    ];
    let server = raw_server(cases.iter().map(|(body, ..)| body.clone()).collect()).await;
    for (body, stop, raw, error) in &cases {
        let events =
            collect(&OpenAiResponsesProvider::new(), &model(server.base_url()), &context(), options(PiCompat::V1_5))
                .await;
        let message = final_message(&events);
        assert_eq!(serde_json::to_value(message).unwrap_or_default()["stopReason"], *stop, "{body}");
        assert_eq!((message.raw_stop_reason.as_deref(), message.error_message.as_deref()), (*raw, *error), "{body}");
    }
    server.shutdown().await;
}

#[tokio::test]
async fn responses_without_usage_still_mark_the_cost_as_computed() {
    let server = raw_server(vec![ending("response.completed", json!({"status": "completed", "usage": null}))]).await;
    let events =
        collect(&OpenAiResponsesProvider::new(), &model(server.base_url()), &context(), options(PiCompat::V1_5)).await;
    assert_eq!(
        summary(&events).last().map(String::as_str),
        Some("done stop raw=completed reasoning=- fromProvider=false")
    );
    assert_eq!(final_message(&events).usage.total_tokens, 0);
    server.shutdown().await;
}

#[tokio::test]
async fn responses_requests_follow_pi_1_5() {
    let completed = ending("response.completed", json!({"status": "completed"}));
    for compat in PiCompat::ALL {
        let server = raw_server(vec![completed.clone()]).await;
        let mut model = model(server.base_url());
        // pi 1.5.2 sends `session-id` even when the compat turns the session header off.
        model.compat = Some(json!({"sendSessionIdHeader": compat.is_v1_5()}));
        let options = crate::ai::StreamOptions { session_id: Some("sess-1".into()), ..options(compat) };
        collect(&OpenAiResponsesProvider::new(), &model, &context(), options).await;
        let request = only_request(&server);
        assert_eq!(request.path, "/v1/responses");
        assert_eq!(request.header("x-client-request-id"), Some("sess-1"));
        if compat.is_v1_5() {
            // The body pi 1.5.2 sent for this context: the model's whole limit, no `strict`.
            let expected = json!({
                "model": "mock-model",
                "input": [{"role": "system", "content": "sys"}, {"role": "user", "content": [{"type": "input_text", "text": "hi"}]}],
                "stream": true,
                "prompt_cache_key": "sess-1",
                "store": false,
                "max_output_tokens": 65536,
                "tools": [{"type": "function", "name": "bash", "description": "run", "parameters": {"type": "object",
                    "properties": {"command": {"type": "string"}}, "required": ["command"], "additionalProperties": false}}]
            });
            assert_eq!(request.body.to_string(), expected.to_string());
            assert_eq!((request.header("session-id"), request.header("session_id")), (Some("sess-1"), None));
            assert_eq!(request.header("user-agent"), Some("pi/1.5.2 (linux; node/v24.21.0; x64)"));
        } else {
            assert_eq!(
                (request.body["max_output_tokens"].clone(), request.body["tools"][0]["strict"].clone()),
                (json!(32000), json!(false))
            );
            assert_eq!((request.header("session-id"), request.header("session_id")), (None, None), "compat: off");
        }
        server.shutdown().await;
    }
}
