//! What the runtime adds to a turn on top of the LLM: a prompt that makes one tool call and then
//! answers, run through the stateful agent against the in-process scripted provider (no network), plus
//! the per-call and per-event pieces (argument validation, json-mode serialization).
//!
//! Run: `cargo bench -p pi-runtime --bench agent_turn`

use std::sync::Arc;

use divan::Bencher;
use pi_runtime::agent::{Agent, AgentOptions, validate_tool_arguments};
use pi_runtime::ai::{Model, ScriptedProvider, ScriptedResponse};
use pi_runtime::protocol::{AgentEvent, AgentMessage, UserMessage};
use serde_json::{Value, json};

#[path = "common/instant_tool.rs"]
mod instant_tool;
use instant_tool::InstantTool;

fn main() {
    divan::main();
}

fn read_schema() -> Value {
    json!({"type": "object", "required": ["path"], "properties": {
        "path": {"type": "string"}, "offset": {"type": "number"}, "limit": {"type": "number"}}})
}

fn agent(provider: &ScriptedProvider) -> Agent {
    Agent::new(AgentOptions {
        model: Some(Model::new("bench", "bench-model", "scripted", "http://127.0.0.1:9")),
        system_prompt: "You are a benchmark.".into(),
        tools: vec![Arc::new(InstantTool { schema: read_schema() })],
        api_key: Some("key".into()),
        ..AgentOptions::new(Arc::new(provider.clone()))
    })
}

/// Two LLM calls, one tool call, 20+ events with listeners attached: one full prompt.
#[divan::bench]
fn prompt_with_one_tool_call(bencher: Bencher) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    bencher
        .with_inputs(|| {
            let provider = ScriptedProvider::new([
                ScriptedResponse::tool_call("read", json!({"path": "hello.txt", "limit": "10"})),
                ScriptedResponse::text("The file says hello from the fixture."),
            ]);
            let agent = agent(&provider);
            agent
                .subscribe(|event| {
                    divan::black_box(event);
                })
                .detach();
            agent
        })
        .bench_local_values(|agent| runtime.block_on(agent.prompt("What does hello.txt say?")));
}

#[divan::bench]
fn validate_read_arguments(bencher: Bencher) {
    let schema = read_schema();
    bencher.bench(|| validate_tool_arguments(&schema, "read", json!({"path": "src/main.rs", "offset": "10"})));
}

/// One json-mode line carrying a 2 KB message (pi prints such a line per event).
#[divan::bench]
fn serialize_json_mode_message_line(bencher: Bencher) {
    let message = AgentMessage::User(UserMessage::text("x".repeat(2000)));
    let event = AgentEvent::MessageEnd { message };
    bencher.bench(|| serde_json::to_string(&event).map(|line| line.len()));
}
