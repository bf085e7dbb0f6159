//! Codex stream tests: event names ignored, `[DONE]` skipped, Codex's failure events, the final event under
//! any of its three names (reading stops there), unknown statuses dropped, usage and cost.

use serde_json::json;

use super::*;
use crate::ai::ModelCost;
use crate::ai::transport::decode_recorded;
use crate::protocol::StopReason;

fn model() -> Model {
    let mut model = Model::new("openai-codex", "gpt-5.5", "openai-codex-responses", "http://127.0.0.1:9");
    model.cost = ModelCost { input: 5.0, output: 30.0, cache_read: 0.5, cache_write: 0.0 };
    model
}

fn frame(event: &serde_json::Value) -> String {
    format!("event: ignored\ndata: {event}\n\n")
}

fn text_events() -> Vec<serde_json::Value> {
    vec![
        json!({"type": "response.created", "response": {"id": "resp_1"}}),
        json!({"type": "response.output_item.added", "item": {"type": "message", "id": "msg_1", "content": []}}),
        json!({"type": "response.content_part.added", "part": {"type": "output_text", "text": ""}}),
        json!({"type": "response.output_text.delta", "delta": "Hel"}),
        json!({"type": "response.output_text.delta", "delta": "lo"}),
        json!({"type": "response.output_item.done", "item": {"type": "message", "id": "msg_1",
            "content": [{"type": "output_text", "text": "Hello"}]}}),
    ]
}

async fn decode(frames: Vec<String>) -> Result<crate::protocol::AssistantMessage, String> {
    let chunks = frames.into_iter().map(String::into_bytes).collect();
    decode_recorded(CodexDecoder::new(&model()), chunks).await.1.map_err(|error| error.message)
}

#[tokio::test]
async fn any_final_event_completes_the_response_and_ends_the_reading() {
    for final_kind in ["response.done", "response.completed", "response.incomplete"] {
        let mut frames: Vec<String> = text_events().iter().map(frame).collect();
        frames.push("data: [DONE]\n\n".to_owned());
        let usage = json!({"input_tokens": 1000, "input_tokens_details": {"cached_tokens": 200},
            "output_tokens": 100, "total_tokens": 1100});
        let done = json!({"type": final_kind, "response": {"id": "resp_1", "status": "completed", "usage": usage}});
        frames.push(frame(&done));
        frames.push(frame(&json!({"type": "error", "message": "after the end"})));
        let message = decode(frames).await;
        let Ok(message) = message else { panic!("{final_kind}: {message:?}") };
        assert_eq!(message.text(), "Hello", "{final_kind}");
        assert_eq!(message.stop_reason, StopReason::Stop);
        assert_eq!((message.usage.input, message.usage.cache_read, message.usage.output), (800, 200, 100));
        assert!((message.usage.cost.total - (800.0 * 5.0 + 200.0 * 0.5 + 100.0 * 30.0) / 1e6).abs() < 1e-12);
        assert_eq!(message.response_id.as_deref(), Some("resp_1"));
    }
}

#[tokio::test]
async fn statuses_map_as_in_pi_and_unknown_ones_end_as_stop() {
    let ending = |status: &str| {
        let mut frames: Vec<String> = text_events().iter().map(frame).collect();
        frames.push(frame(&json!({"type": "response.done", "response": {"status": status}})));
        frames
    };
    let incomplete = decode(ending("incomplete")).await.map(|m| m.stop_reason);
    assert_eq!(incomplete, Ok(StopReason::Length));
    let odd = decode(ending("something_new")).await.map(|m| m.stop_reason);
    assert_eq!(odd, Ok(StopReason::Stop), "pi drops a status it does not know");
    let cut_short = decode(text_events().iter().map(frame).collect()).await.map(|m| m.stop_reason);
    assert_eq!(cut_short, Ok(StopReason::Stop), "a stream without a final event ends the message as it is");
}

#[tokio::test]
async fn codex_failures_end_the_call_with_their_own_message() {
    let error = decode(vec![frame(&json!({"type": "error", "code": "context_length_exceeded", "message": ""}))]).await;
    assert_eq!(error.err().as_deref(), Some("Codex reported an error: context_length_exceeded"));
    let bare = decode(vec![frame(&json!({"type": "error"}))]).await;
    assert_eq!(bare.err().as_deref(), Some(r#"Codex reported an error: {"type":"error"}"#));
    let failed = json!({"type": "response.failed", "response": {"error": {"code": "server_error", "message": "boom"}}});
    assert_eq!(decode(vec![frame(&failed)]).await.err().as_deref(), Some("boom"));
    let silent = json!({"type": "response.failed", "response": {}});
    assert_eq!(decode(vec![frame(&silent)]).await.err().as_deref(), Some(RESPONSE_FAILED));
    let garbage = decode(vec!["data: {not json\n\n".to_owned()]).await;
    assert!(garbage.is_err_and(|message| message.contains("not JSON")));
}

#[tokio::test]
async fn events_carrying_an_error_field_are_not_failures() {
    // The OpenAI SDK fails such events; pi's Codex reader does not use the SDK.
    let mut frames: Vec<String> = text_events().iter().map(frame).collect();
    frames.insert(1, frame(&json!({"type": "response.in_progress", "response": {}, "error": {"message": "x"}})));
    frames.push(frame(&json!({"type": "response.completed", "response": {"status": "completed"}})));
    assert_eq!(decode(frames).await.map(|m| m.text()), Ok("Hello".to_owned()));
}
