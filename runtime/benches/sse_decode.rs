//! SSE decoding throughput: a recorded response stream of each API (a long answer streamed in
//! token-sized deltas, as real servers send it), fed to its decoder in 16 KiB chunks (as a socket
//! delivers it), reported in bytes of SSE per second.
//!
//! Run: `cargo bench -p pi-runtime --features testing --bench sse_decode`

use divan::Bencher;
use divan::counter::BytesCount;
use pi_runtime::ai::Model;
use pi_runtime::ai::transport::decode_recorded;
use pi_runtime::testing::{MockApi, MockCompletion, MockToolCall, rendered_body};
use serde_json::json;

fn main() {
    divan::main();
}

/// A long answer (about 2,000 tokens): thinking, 8 KB of text in 4-character deltas, two tool calls.
fn recorded(api: MockApi) -> Vec<Vec<u8>> {
    let sentence = "The quick brown fox jumps over the lazy dog; ünïcödé — 日本語. ";
    let completion = MockCompletion {
        thinking: Some(sentence.repeat(20)),
        text: Some(sentence.repeat(120)),
        delta_chars: Some(4),
        tool_calls: vec![
            MockToolCall { id: Some("call_1".into()), name: "read".into(), arguments: json!({"path": "src/main.rs"}) },
            MockToolCall { id: Some("call_2".into()), name: "bash".into(), arguments: json!({"command": "ls -la"}) },
        ],
        ..MockCompletion::default()
    };
    let body = rendered_body(api, &completion).into_bytes();
    body.chunks(16 * 1024).map(<[u8]>::to_vec).collect()
}

fn bench_decoder<D: pi_runtime::ai::transport::StreamDecoder>(
    bencher: Bencher,
    api: MockApi,
    decoder: impl Fn() -> D + Sync,
) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let chunks = recorded(api);
    let bytes: usize = chunks.iter().map(Vec::len).sum();
    bencher.counter(BytesCount::new(bytes)).with_inputs(|| chunks.clone()).bench_local_values(|chunks| {
        let (events, message) = runtime.block_on(decode_recorded(decoder(), chunks));
        assert!(message.is_ok(), "{api:?} decoding failed: {message:?}");
        events.len()
    });
}

fn model(api: &str) -> Model {
    Model::new("bench", "mock-model", api, "http://127.0.0.1:9")
}

#[divan::bench(sample_count = 20)]
fn openai_completions(bencher: Bencher) {
    let model = model("openai-completions");
    bench_decoder(bencher, MockApi::OpenAiCompletions, || pi_runtime::ai::openai_completions::decoder(&model));
}

#[divan::bench(sample_count = 20)]
fn anthropic_messages(bencher: Bencher) {
    let model = model("anthropic-messages");
    bench_decoder(bencher, MockApi::AnthropicMessages, || pi_runtime::ai::anthropic_messages::decoder(&model));
}

#[divan::bench(sample_count = 20)]
fn openai_responses(bencher: Bencher) {
    let model = model("openai-responses");
    bench_decoder(bencher, MockApi::OpenAiResponses, || pi_runtime::ai::openai_responses::decoder(&model));
}

#[divan::bench(sample_count = 20)]
fn google_generative_ai(bencher: Bencher) {
    let model = model("google-generative-ai");
    bench_decoder(bencher, MockApi::GoogleGenerativeAi, || pi_runtime::ai::google_generative_ai::decoder(&model));
}
