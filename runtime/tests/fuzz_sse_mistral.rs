//! Property tests of the mistral-conversations decoder on the mock server's rendering of random completions,
//! as fuzz_sse.rs does for the other APIs: any split of the body (inside UTF-8 characters, CRLF line ends)
//! decodes like one chunk and keeps the completion's text, thinking and tool calls; truncated and mutated
//! bodies end in a message or an error, never a panic or a hang. Needs the `testing` feature.
#![cfg(feature = "testing")]

mod fuzz_support;

use fuzz_support::{awkward_offsets, byte_mutation, config, json_object, split_at_offsets, tricky_text, within};
use pi_runtime::ai::Model;
use pi_runtime::ai::transport::{DecodeError, decode_recorded};
use pi_runtime::protocol::{AssistantContent, AssistantMessage};
use pi_runtime::testing::{MockApi, MockCompletion, MockToolCall, rendered_body};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

/// Events and message as JSON with timestamps blanked, and the raw outcome.
fn decode(chunks: Vec<Vec<u8>>) -> (Vec<Value>, Result<Value, DecodeError>, Result<AssistantMessage, DecodeError>) {
    let shown = chunks.clone();
    let (events, message) = within(
        move || format!("chunks: {:?}", shown.iter().map(|c| String::from_utf8_lossy(c)).collect::<Vec<_>>()),
        move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            let model = Model::new("fuzz", "mock-model", "mistral-conversations", "http://127.0.0.1:9");
            runtime.block_on(decode_recorded(pi_runtime::ai::mistral_conversations::decoder(&model), chunks))
        },
    );
    let blank = |value: Value| blank_timestamps(value);
    let events = events.iter().map(|event| blank(serde_json::to_value(event).expect("events serialize"))).collect();
    let shown = message.as_ref().map(|m| blank(serde_json::to_value(m).expect("serializes"))).map_err(Clone::clone);
    (events, shown, message)
}

fn blank_timestamps(mut value: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => map.iter_mut().for_each(|(key, item)| {
                if key == "timestamp" {
                    *item = Value::Null;
                } else {
                    walk(item);
                }
            }),
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut value);
    value
}

fn completion() -> impl Strategy<Value = MockCompletion> {
    let call = (proptest::option::of("[a-zA-Z0-9]{9}"), "[a-z_][a-z0-9_]{0,10}", json_object())
        .prop_map(|(id, name, arguments)| MockToolCall { id, name, arguments });
    let finish = prop::sample::select(vec!["stop", "length", "model_length", "tool_calls", "error", "weird"]);
    (
        proptest::option::of(tricky_text(12)),
        proptest::option::of(tricky_text(24)),
        prop::collection::vec(call, 0..3),
        proptest::option::of(1usize..6),
        proptest::option::of(tricky_text(4)),
        proptest::option::of(finish),
    )
        .prop_map(|(thinking, text, tool_calls, delta_chars, stream_error, finish)| MockCompletion {
            thinking,
            text,
            tool_calls,
            delta_chars,
            stream_error,
            finish_reason: finish.map(str::to_owned),
            ..MockCompletion::default()
        })
}

fn cuts(body: &[u8], anywhere: &[Index], awkward: &[Index]) -> Vec<usize> {
    let awkward_at = awkward_offsets(body);
    let mut offsets: Vec<usize> = anywhere.iter().map(|index| index.index(body.len() + 1)).collect();
    if !awkward_at.is_empty() {
        offsets.extend(awkward.iter().map(|index| awkward_at[index.index(awkward_at.len())]));
    }
    offsets
}

fn thinking_of(message: &AssistantMessage) -> String {
    let thinking = message.content.iter().filter_map(|block| match block {
        AssistantContent::Thinking(thinking) => Some(thinking.thinking.as_str()),
        _ => None,
    });
    thinking.collect()
}

proptest! {
    #![proptest_config(config(64))]

    /// Any split, and CRLF line ends, decode like one chunk; a clean ending keeps everything that was sent.
    #[test]
    fn any_split_decodes_like_one_chunk(
        completion in completion(),
        anywhere in prop::collection::vec(any::<Index>(), 0..12),
        awkward in prop::collection::vec(any::<Index>(), 0..6),
    ) {
        let body = rendered_body(MockApi::MistralConversations, &completion).into_bytes();
        let (events, message, raw) = decode(vec![body.clone()]);
        let (split_events, split_message, _) = decode(split_at_offsets(&body, &cuts(&body, &anywhere, &awkward)));
        prop_assert_eq!(&split_events, &events);
        prop_assert_eq!(&split_message, &message);
        let crlf = String::from_utf8(body).expect("rendered bodies are text").replace('\n', "\r\n").into_bytes();
        let (crlf_events, crlf_message, _) = decode(split_at_offsets(&crlf, &cuts(&crlf, &anywhere, &awkward)));
        prop_assert_eq!(&crlf_events, &events);
        prop_assert_eq!(&crlf_message, &message);

        let clean = completion.stream_error.is_none() && completion.finish_reason.as_deref() != Some("error");
        if clean {
            let message = raw.map_err(|error| TestCaseError::fail(format!("{error:?}")))?;
            prop_assert_eq!(message.text(), completion.text.clone().unwrap_or_default());
            prop_assert_eq!(thinking_of(&message), completion.thinking.clone().unwrap_or_default());
            let calls: Vec<(String, Value)> =
                message.tool_calls().map(|call| (call.name.clone(), call.arguments.clone())).collect();
            let expected: Vec<(String, Value)> =
                completion.tool_calls.iter().map(|call| (call.name.clone(), call.arguments.clone())).collect();
            prop_assert_eq!(calls, expected);
        } else {
            prop_assert!(raw.is_err_and(|error| !error.message.is_empty()));
        }
    }

    /// A body cut off anywhere or with bytes flipped, inserted, deleted or repeated ends in a message or an
    /// error that says something.
    #[test]
    fn a_damaged_body_ends_in_a_message_or_an_error(
        completion in completion(),
        end in any::<Index>(),
        mutations in prop::collection::vec(byte_mutation(), 0..8),
        anywhere in prop::collection::vec(any::<Index>(), 0..6),
    ) {
        let mut body = rendered_body(MockApi::MistralConversations, &completion).into_bytes();
        body.truncate(end.index(body.len() + 1));
        for mutation in &mutations {
            mutation.apply(&mut body);
        }
        let (_, message, _) = decode(split_at_offsets(&body, &cuts(&body, &anywhere, &[])));
        if let Err(error) = message {
            prop_assert!(!error.message.is_empty(), "an empty error");
        }
    }
}
