//! Property tests of the four SSE decoders (anthropic-messages, openai-completions, openai-responses,
//! google-generative-ai) on the mock server's rendering of random completions: any split of the body
//! (inside UTF-8 characters, inside `\r\n`, CRLF line ends) decodes to the same events and message as one
//! chunk; truncated, mutated and garbage bodies end in a message or an error, never a panic or a hang.
//! Needs the `testing` feature (on in `cargo test --workspace`). Bounded for CI; `scripts/fuzz` runs more.

mod fuzz_support;

use fuzz_support::{
    awkward_offsets, byte_mutation, config, json_object, json_value, split_at_offsets, tricky_text, within,
};
use pi_runtime::ai::Model;
use pi_runtime::ai::transport::{DecodeError, decode_recorded};
use pi_runtime::protocol::{AssistantContent, AssistantMessage};
use pi_runtime::testing::{MockApi, MockCompletion, MockToolCall, rendered_body};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::Value;

const APIS: [MockApi; 4] =
    [MockApi::AnthropicMessages, MockApi::OpenAiCompletions, MockApi::OpenAiResponses, MockApi::GoogleGenerativeAi];

/// What a decode produced, made comparable: events and message as JSON with clock-dependent values
/// (timestamps, Google's time-stamped tool-call ids) blanked, and the error as is.
#[derive(Debug, Clone, PartialEq)]
struct Decoded {
    events: Vec<Value>,
    message: Result<Value, DecodeError>,
    raw: Result<AssistantMessage, DecodeError>,
}

fn model(api: MockApi) -> Model {
    let name = match api {
        MockApi::AnthropicMessages => "anthropic-messages",
        MockApi::OpenAiCompletions => "openai-completions",
        MockApi::OpenAiResponses => "openai-responses",
        _ => "google-generative-ai",
    };
    Model::new("fuzz", "mock-model", name, "http://127.0.0.1:9")
}

/// Decodes `chunks` with `api`'s decoder on a guarded thread.
fn decode(api: MockApi, chunks: Vec<Vec<u8>>) -> Decoded {
    let shown = chunks.clone();
    let (events, message) = within(
        move || format!("{api:?} chunks: {:?}", shown.iter().map(|c| String::from_utf8_lossy(c)).collect::<Vec<_>>()),
        move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            let model = model(api);
            runtime.block_on(async move {
                match api {
                    MockApi::AnthropicMessages => {
                        decode_recorded(pi_runtime::ai::anthropic_messages::decoder(&model), chunks).await
                    }
                    MockApi::OpenAiCompletions => {
                        decode_recorded(pi_runtime::ai::openai_completions::decoder(&model), chunks).await
                    }
                    MockApi::OpenAiResponses => {
                        decode_recorded(pi_runtime::ai::openai_responses::decoder(&model), chunks).await
                    }
                    _ => decode_recorded(pi_runtime::ai::google_generative_ai::decoder(&model), chunks).await,
                }
            })
        },
    );
    let events =
        events.iter().map(|event| normalized(serde_json::to_value(event).expect("events serialize"))).collect();
    let normalized_message = message
        .as_ref()
        .map(|message| normalized(serde_json::to_value(message).expect("messages serialize")))
        .map_err(Clone::clone);
    Decoded { events, message: normalized_message, raw: message }
}

/// Blanks `timestamp` values and the varying part of Google's generated tool-call ids (`name_<ms>_<n>`, `n`
/// counting ids process-wide).
fn normalized(mut value: Value) -> Value {
    fn walk(value: &mut Value) {
        match value {
            Value::Object(map) => {
                for (key, item) in map.iter_mut() {
                    if key == "timestamp" {
                        *item = Value::Null;
                    } else if key == "id"
                        && let Value::String(id) = item
                    {
                        *id = without_clock(id);
                    } else {
                        walk(item);
                    }
                }
            }
            Value::Array(items) => items.iter_mut().for_each(walk),
            _ => {}
        }
    }
    walk(&mut value);
    value
}

fn without_clock(id: &str) -> String {
    let parts: Vec<&str> = id.rsplitn(3, '_').collect();
    match parts.as_slice() {
        [n, ms, name]
            if ms.len() >= 12 && ms.bytes().all(|b| b.is_ascii_digit()) && n.bytes().all(|b| b.is_ascii_digit()) =>
        {
            format!("{name}_<generated>")
        }
        _ => id.to_owned(),
    }
}

/// A decode must end in a message or in an error that says something.
fn assert_settled(decoded: &Decoded) -> Result<(), TestCaseError> {
    if let Err(error) = &decoded.message {
        prop_assert!(!error.message.is_empty(), "an empty error: {error:?}");
    }
    Ok(())
}

fn api() -> impl Strategy<Value = MockApi> {
    prop::sample::select(APIS.to_vec())
}

fn tool_call() -> impl Strategy<Value = MockToolCall> {
    (proptest::option::of("[a-zA-Z0-9_]{1,12}"), "[a-z_][a-z0-9_]{0,10}", json_object())
        .prop_map(|(id, name, arguments)| MockToolCall { id, name, arguments })
}

/// A random completion: thinking, text (unicode, line breaks, SSE look-alikes) and tool calls.
fn completion() -> impl Strategy<Value = MockCompletion> {
    (
        proptest::option::of(tricky_text(12)),
        proptest::option::of("[A-Za-z0-9+/=]{1,16}"),
        proptest::option::of(tricky_text(24)),
        prop::collection::vec(tool_call(), 0..3),
        proptest::option::of(1usize..6),
    )
        .prop_map(|(thinking, thinking_signature, text, tool_calls, delta_chars)| MockCompletion {
            thinking,
            thinking_signature,
            text,
            tool_calls,
            delta_chars,
            ..MockCompletion::default()
        })
}

/// A random completion that may also end in a mid-stream error or an unusual finish reason.
fn completion_with_ending() -> impl Strategy<Value = MockCompletion> {
    let finish = prop::sample::select(vec!["stop", "length", "tool_calls", "content_filter", "MAX_TOKENS", "weird"]);
    (completion(), proptest::option::of(tricky_text(4)), proptest::option::of(finish)).prop_map(
        |(completion, stream_error, finish_reason)| MockCompletion {
            stream_error,
            finish_reason: finish_reason.map(str::to_owned),
            ..completion
        },
    )
}

/// Cut offsets: anywhere, plus some inside multi-byte characters and between `\r` and `\n`.
fn cuts(body: &[u8], anywhere: &[Index], awkward: &[Index]) -> Vec<usize> {
    let awkward_at = awkward_offsets(body);
    let mut offsets: Vec<usize> = anywhere.iter().map(|index| index.index(body.len() + 1)).collect();
    if !awkward_at.is_empty() {
        offsets.extend(awkward.iter().map(|index| awkward_at[index.index(awkward_at.len())]));
    }
    offsets
}

fn thinking_of(message: &AssistantMessage) -> String {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantContent::Thinking(thinking) => Some(thinking.thinking.as_str()),
            _ => None,
        })
        .collect()
}

fn tool_calls_of(message: &AssistantMessage) -> Vec<(String, Value)> {
    message
        .content
        .iter()
        .filter_map(|block| match block {
            AssistantContent::ToolCall(call) => Some((call.name.clone(), call.arguments.clone())),
            _ => None,
        })
        .collect()
}

proptest! {
    #![proptest_config(config(64))]

    /// Any split of the body, and the same body with CRLF line ends, decode exactly like one chunk; the
    /// message holds the completion's text, thinking and tool calls.
    #[test]
    fn any_split_decodes_like_one_chunk(
        api in api(),
        completion in completion(),
        anywhere in prop::collection::vec(any::<Index>(), 0..12),
        awkward in prop::collection::vec(any::<Index>(), 0..6),
    ) {
        let body = rendered_body(api, &completion).into_bytes();
        let whole = decode(api, vec![body.clone()]);
        let split = decode(api, split_at_offsets(&body, &cuts(&body, &anywhere, &awkward)));
        prop_assert_eq!(&split.events, &whole.events);
        prop_assert_eq!(&split.message, &whole.message);

        let crlf = String::from_utf8(body).expect("rendered bodies are text").replace('\n', "\r\n").into_bytes();
        let crlf_split = decode(api, split_at_offsets(&crlf, &cuts(&crlf, &anywhere, &awkward)));
        prop_assert_eq!(&crlf_split.events, &whole.events);
        prop_assert_eq!(&crlf_split.message, &whole.message);

        let message = whole.raw.as_ref().map_err(|error| TestCaseError::fail(format!("{error:?}")))?;
        prop_assert_eq!(message.text(), completion.text.clone().unwrap_or_default());
        // Empty thinking may leave the API's part separator behind (openai-responses: "\n\n", as pi does).
        if let Some(thinking) = completion.thinking.as_ref().filter(|thinking| !thinking.is_empty()) {
            prop_assert_eq!(&thinking_of(message), thinking);
        }
        let expected: Vec<(String, Value)> =
            completion.tool_calls.iter().map(|call| (call.name.clone(), call.arguments.clone())).collect();
        prop_assert_eq!(tool_calls_of(message), expected);
    }

    /// A body cut off anywhere (a dropped connection) ends in a message or an error.
    #[test]
    fn a_truncated_body_ends_in_a_message_or_an_error(
        api in api(),
        completion in completion_with_ending(),
        end in any::<Index>(),
        anywhere in prop::collection::vec(any::<Index>(), 0..6),
    ) {
        let body = rendered_body(api, &completion).into_bytes();
        let body = &body[..end.index(body.len() + 1)];
        assert_settled(&decode(api, split_at_offsets(body, &cuts(body, &anywhere, &[]))))?;
    }

    /// Bytes flipped, inserted, deleted or repeated anywhere in a valid body.
    #[test]
    fn a_mutated_body_ends_in_a_message_or_an_error(
        api in api(),
        completion in completion_with_ending(),
        mutations in prop::collection::vec(byte_mutation(), 1..8),
        anywhere in prop::collection::vec(any::<Index>(), 0..6),
    ) {
        let mut body = rendered_body(api, &completion).into_bytes();
        for mutation in &mutations {
            mutation.apply(&mut body);
        }
        assert_settled(&decode(api, split_at_offsets(&body, &cuts(&body, &anywhere, &[]))))?;
    }

    /// Events of the right names whose JSON has values replaced by random ones of any type (indexes out of
    /// range, strings for objects, missing fields).
    #[test]
    fn events_with_wrong_json_end_in_a_message_or_an_error(
        api in api(),
        completion in completion_with_ending(),
        mutations in prop::collection::vec((any::<Index>(), any::<Index>(), json_value()), 1..6),
    ) {
        let body = rendered_body(api, &completion);
        let body = mutate_event_json(&body, &mutations);
        assert_settled(&decode(api, vec![body.into_bytes()]))?;
    }

    /// Random bytes, and random lines that look like SSE.
    #[test]
    fn garbage_ends_in_a_message_or_an_error(
        api in api(),
        bytes in prop::collection::vec(any::<u8>(), 0..600),
        sse in sse_like_garbage(),
        anywhere in prop::collection::vec(any::<Index>(), 0..6),
    ) {
        assert_settled(&decode(api, split_at_offsets(&bytes, &cuts(&bytes, &anywhere, &[]))))?;
        let sse = sse.into_bytes();
        assert_settled(&decode(api, split_at_offsets(&sse, &cuts(&sse, &anywhere, &[]))))?;
    }
}

/// `body` with, in the JSON of some `data:` lines, the value at some path replaced by `value`.
fn mutate_event_json(body: &str, mutations: &[(Index, Index, Value)]) -> String {
    let mut lines: Vec<String> = body.split('\n').map(str::to_owned).collect();
    let data_lines: Vec<usize> =
        lines.iter().enumerate().filter(|(_, line)| line.starts_with("data: {")).map(|(i, _)| i).collect();
    if data_lines.is_empty() {
        return body.to_owned();
    }
    for (line, path, value) in mutations {
        let at = data_lines[line.index(data_lines.len())];
        let Ok(mut json) = serde_json::from_str::<Value>(&lines[at]["data: ".len()..]) else { continue };
        let mut paths = Vec::new();
        collect_paths(&json, &mut Vec::new(), &mut paths);
        let chosen = &paths[path.index(paths.len())];
        if let Some(slot) = pointer_mut(&mut json, chosen) {
            *slot = value.clone();
        }
        lines[at] = format!("data: {json}");
    }
    lines.join("\n")
}

/// Every path in `value` (the root included), as object keys and array indexes.
fn collect_paths(value: &Value, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
    out.push(prefix.clone());
    match value {
        Value::Object(map) => {
            for (key, item) in map {
                prefix.push(key.clone());
                collect_paths(item, prefix, out);
                prefix.pop();
            }
        }
        Value::Array(items) => {
            for (index, item) in items.iter().enumerate() {
                prefix.push(index.to_string());
                collect_paths(item, prefix, out);
                prefix.pop();
            }
        }
        _ => {}
    }
}

fn pointer_mut<'a>(value: &'a mut Value, path: &[String]) -> Option<&'a mut Value> {
    path.iter().try_fold(value, |node, segment| match node {
        Value::Object(map) => map.get_mut(segment),
        Value::Array(items) => segment.parse::<usize>().ok().and_then(|index| items.get_mut(index)),
        _ => None,
    })
}

/// Lines of SSE with the event names and JSON fields the four APIs use, in random order and shape.
fn sse_like_garbage() -> impl Strategy<Value = String> {
    let name = prop::sample::select(vec![
        "message_start",
        "content_block_start",
        "content_block_delta",
        "content_block_stop",
        "message_delta",
        "message_stop",
        "error",
        "ping",
        "response.created",
        "response.output_item.added",
        "response.output_text.delta",
        "response.reasoning_summary_text.delta",
        "response.function_call_arguments.delta",
        "response.output_item.done",
        "response.completed",
        "response.failed",
        "message",
    ]);
    let field = prop::sample::select(vec![
        "type",
        "index",
        "delta",
        "content_block",
        "text",
        "thinking",
        "partial_json",
        "id",
        "name",
        "input",
        "choices",
        "finish_reason",
        "tool_calls",
        "arguments",
        "function",
        "usage",
        "candidates",
        "content",
        "parts",
        "functionCall",
        "args",
        "thought",
        "output_index",
        "item",
        "response",
        "status",
        "error",
        "message",
        "stop_reason",
        "output",
    ]);
    let data = prop_oneof![
        prop::collection::vec((field, json_value()), 0..5).prop_map(|pairs| {
            Value::Object(pairs.into_iter().map(|(key, value)| (key.to_owned(), value)).collect()).to_string()
        }),
        json_value().prop_map(|value| value.to_string()),
        Just("[DONE]".to_owned()),
        Just(String::new()),
        tricky_text(6),
    ];
    let event = (proptest::option::of(name), data, prop::sample::select(vec!["\n", "\r\n", "\r"])).prop_map(
        |(name, data, end)| {
            let data: String = if data.is_empty() {
                format!("data: {end}")
            } else {
                data.lines().map(|line| format!("data: {line}{end}")).collect()
            };
            match name {
                Some(name) => format!("event: {name}{end}{data}{end}"),
                None => format!("{data}{end}"),
            }
        },
    );
    prop::collection::vec(event, 0..8).prop_map(|events| events.concat())
}

/// A body that starts with a byte-order mark (which SSE allows and clients must skip; eventsource-stream
/// 0.2.3, used before sse-parse, stripped it one byte into the three-byte character and panicked).
#[test]
fn a_body_starting_with_a_byte_order_mark_decodes_like_one_without() {
    let completion = MockCompletion { text: Some("hello".into()), ..MockCompletion::default() };
    for api in APIS {
        let body = rendered_body(api, &completion);
        let plain = decode(api, vec![body.clone().into_bytes()]);
        let marked = decode(api, vec![format!("\u{feff}{body}").into_bytes()]);
        assert_eq!(marked.message, plain.message, "{api:?}");
        assert_eq!(marked.events, plain.events, "{api:?}");
    }
}

/// `event: error` with an empty `data:` line fails the call with words, not an empty error message.
#[test]
fn an_anthropic_error_event_without_data_is_a_clear_error() {
    let decoded = decode(MockApi::AnthropicMessages, vec![b"event: error\ndata: \n\n".to_vec()]);
    let error = decoded.message.expect_err("an error event fails the call");
    assert!(!error.message.trim().is_empty(), "{error:?}");
}

/// The same body over real HTTP: the stream ends with the `done` or `error` event every stream must end with
/// (a panic in the parser would end the provider's task without either).
#[tokio::test]
async fn a_live_stream_starting_with_a_byte_order_mark_ends_with_done_or_error() {
    use pi_runtime::ai::{ApiProvider, LlmContext, OpenAiCompletionsProvider, StreamOptions};
    use pi_runtime::protocol::{Message, UserMessage};
    use pi_runtime::testing::{MockLlmServer, MockScript};

    let completion = MockCompletion { text: Some("hello".into()), ..MockCompletion::default() };
    let body = format!("\u{feff}{}", rendered_body(MockApi::OpenAiCompletions, &completion));
    let script = MockScript::from_json_str(&serde_json::json!([{ "raw": body }]).to_string()).expect("script");
    let server = MockLlmServer::start(script).await.expect("mock server");
    let model = Model::new("mock", "mock-model", "openai-completions", server.base_url());
    let context = LlmContext {
        system_prompt: String::new(),
        messages: vec![Message::User(UserMessage::text("hi"))],
        tools: Vec::new(),
    };
    let options = StreamOptions { api_key: Some("mock-key".into()), ..StreamOptions::default() };
    let mut stream = OpenAiCompletionsProvider::new().with_max_retries(0).stream(&model, &context, options);
    let mut last = None;
    let read = async {
        while let Some(event) = stream.next().await {
            last = Some(event);
        }
    };
    tokio::time::timeout(std::time::Duration::from_secs(20), read).await.expect("the stream ends");
    assert!(last.as_ref().is_some_and(|event| event.is_terminal()), "the stream ended with {last:?}");
}
