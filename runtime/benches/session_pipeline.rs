//! The whole prompt pipeline of an `AgentSession` (input, before_agent_start, context, tool_call,
//! tool_result and every loop event forwarded to extensions, persistence into an in-memory session), for a
//! prompt of two turns (one tool call, then the answer) against the in-process scripted provider: with no
//! extensions, and with ten extensions that implement nothing (so every event reaches all ten).
//!
//! Run: `cargo bench -p pi-runtime --bench session_pipeline`

use std::sync::Arc;

use divan::Bencher;
use pi_runtime::agent::{Agent, AgentOptions};
use pi_runtime::agent_session::{AgentSession, SessionEventSink, SessionExtras, SessionSettings};
use pi_runtime::ai::{Model, ProviderRegistry, ScriptedProvider, ScriptedResponse};
use pi_runtime::extension::{Extension, ExtensionContext, ExtensionRunner, Extensions};
use pi_runtime::protocol::SessionOnlyEvent;
use pi_runtime::session::SessionManager;
use serde_json::json;

#[path = "common/instant_tool.rs"]
mod instant_tool;
use instant_tool::InstantTool;

fn main() {
    divan::main();
}

/// Handles every event and does nothing.
struct Noop(String);

impl Extension for Noop {
    fn name(&self) -> &str {
        &self.0
    }
}

fn session(extension_count: usize) -> AgentSession {
    let provider = ScriptedProvider::new([
        ScriptedResponse::tool_call("read", json!({"path": "hello.txt"})),
        ScriptedResponse::text("The file says hello from the fixture."),
    ]);
    let mut registry = ProviderRegistry::new();
    registry.register(Arc::new(provider));
    let registry = Arc::new(registry);
    let schema = json!({"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}});
    let agent = Agent::new(AgentOptions {
        model: Some(Model::new("bench", "bench-model", "scripted", "http://127.0.0.1:9")),
        system_prompt: "You are a benchmark.".into(),
        tools: vec![Arc::new(InstantTool { schema })],
        api_key: Some("key".into()),
        ..AgentOptions::new(registry.clone())
    });
    let cwd = std::env::temp_dir();
    let mut extensions = Extensions::new();
    for index in 0..extension_count {
        extensions.push(Noop(format!("noop-{index}")));
    }
    let runner = Arc::new(ExtensionRunner::new(extensions, ExtensionContext::detached(&cwd)));
    let extras = SessionExtras { runner, ..SessionExtras::none(&cwd) };
    let emit: SessionEventSink = Arc::new(|_: &SessionOnlyEvent| {});
    let manager = SessionManager::in_memory(&cwd);
    match AgentSession::with_extras(agent, manager, SessionSettings::default(), registry, None, emit, extras) {
        Ok(session) => session,
        Err(error) => panic!("session: {error}"),
    }
}

/// One prompt (two turns) through the pipeline with `extension_count` no-op extensions.
#[divan::bench(args = [0, 10])]
fn prompt_with_one_tool_call(bencher: Bencher, extension_count: usize) {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    bencher
        .with_inputs(|| session(extension_count))
        .bench_local_values(|session| runtime.block_on(session.prompt("What does hello.txt say?".into())));
}
