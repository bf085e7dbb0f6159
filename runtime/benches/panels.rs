//! The panels context strategy's work per request: 50 panels (1 to 8 KB each) and a 500-message conversation
//! with tool calls, assembled into the request's messages, with the cache accounting; and detachment over
//! the same conversation. Goal: under 1 ms per request.
//!
//! Run: `cargo bench -p pi-runtime --bench panels`

use divan::Bencher;
use pi_runtime::panels::{
    BuiltinPanel, CachePrices, CacheTracker, ContextItem, DetachLimits, OpenFile, PanelRequest, PanelState, PanelTexts,
    PanelsCore, PanelsDefinition, RequestInput, assemble_request, detach_point,
};
use pi_runtime::protocol::{
    AgentMessage, AssistantContent, AssistantMessage, Message, MessageContent, ToolCall, ToolResultMessage,
    UserContent, UserMessage,
};
use pi_runtime::tools::ToolEnvironment;
use serde_json::json;

fn main() {
    divan::main();
}

fn panels() -> Vec<ContextItem> {
    (0..50)
        .map(|index| ContextItem {
            id: format!("P{}", index + 1),
            header: format!("File: src/module_{index}.rs"),
            content: "fn main() { println!(\"hello\"); }\n".repeat(32 * (1 + index % 8)),
            last_refresh_ms: 1_795_464_630_000 + (index as i64 * 7919) % 50_000,
        })
        .collect()
}

/// 500 messages: user, assistant with a tool call, its result, assistant text; repeated.
fn conversation() -> Vec<AgentMessage> {
    (0..125)
        .flat_map(|turn| {
            let id = format!("call_{turn}");
            [
                AgentMessage::User(UserMessage {
                    content: MessageContent::Blocks(vec![UserContent::text(format!("Please fix module {turn}."))]),
                    timestamp: turn,
                }),
                AgentMessage::Assistant(AssistantMessage {
                    content: vec![
                        AssistantContent::text("Reading it first."),
                        AssistantContent::ToolCall(ToolCall {
                            id: id.clone(),
                            name: "read".into(),
                            arguments: json!({"path": format!("src/module_{turn}.rs")}),
                            thought_signature: None,
                        }),
                    ],
                    timestamp: turn,
                    ..AssistantMessage::default()
                }),
                AgentMessage::ToolResult(ToolResultMessage {
                    tool_call_id: id,
                    tool_name: "read".into(),
                    content: vec![UserContent::text("fn main() {}\n".repeat(20))],
                    details: None,
                    is_error: false,
                    timestamp: turn,
                    duration_ms: None,
                }),
                AgentMessage::Assistant(AssistantMessage {
                    content: vec![AssistantContent::text("Fixed: the index was off by one.")],
                    timestamp: turn,
                    ..AssistantMessage::default()
                }),
            ]
        })
        .collect()
}

fn llm_messages(messages: &[AgentMessage]) -> Vec<Message> {
    messages
        .iter()
        .filter_map(|message| match message {
            AgentMessage::User(user) => Some(Message::User(user.clone())),
            AgentMessage::Assistant(answer) => Some(Message::Assistant(answer.clone())),
            AgentMessage::ToolResult(result) => Some(Message::ToolResult(result.clone())),
            _ => None,
        })
        .collect()
}

/// One request: the messages and the cache accounting (the tracker has seen the same panels before).
#[divan::bench(sample_count = 50)]
fn assemble_50_panels_500_messages(bencher: Bencher) {
    let items = panels();
    let conversation = llm_messages(&conversation());
    let texts = PanelTexts::default();
    let prices = CachePrices { hit: 0.3, miss: 3.75 };
    let mut tracker = CacheTracker::new();
    tracker.track(&items, prices);
    bencher.bench_local(|| {
        let request = PanelRequest {
            items: divan::black_box(&items),
            conversation: &conversation,
            numbers: &[],
            system_prompt: "You are a careful coding agent.",
            reinject_system_prompt: true,
            now_ms: 1_795_464_700_000,
            join_texts: false,
            texts: &texts,
        };
        let messages = assemble_request(&request);
        let costs = tracker.track(&items, prices);
        (messages.len(), costs.len())
    });
}

/// Finding where to detach the oldest turns of the 500 messages.
#[divan::bench(sample_count = 50)]
fn detach_point_500_messages(bencher: Bencher) {
    let messages = conversation();
    let limits = DetachLimits::default();
    bencher.bench(|| detach_point(divan::black_box(&messages), &limits));
}

/// The whole per-request pipeline of the panels strategy (`PanelsCore::prepare`): 41 open files (each one
/// stat'ed), the state-derived panels, the 500 messages numbered, detached into history chunks and cleaned,
/// the items stamped, sorted and cache-accounted, and the request assembled. The files and chunks were
/// loaded by an earlier request, as in a running session.
#[divan::bench(sample_count = 50)]
fn prepare_request_with_41_files_and_500_messages(bencher: Bencher) {
    let dir = tempfile::tempdir().expect("tempdir");
    let definition = PanelsDefinition {
        builtin: vec![
            BuiltinPanel::Todo,
            BuiltinPanel::Library,
            BuiltinPanel::Statistics,
            BuiltinPanel::Tools,
            BuiltinPanel::Memories,
            BuiltinPanel::Spine,
            BuiltinPanel::Logs,
            BuiltinPanel::Scratchpad,
        ],
        ..PanelsDefinition::default()
    };
    let mut state = PanelState::default();
    for index in 0..41 {
        let name = format!("module_{index}.rs");
        let path = dir.path().join(&name);
        std::fs::write(&path, "fn main() { println!(\"hello\"); }\n".repeat(32 * (1 + index % 8))).expect("write");
        // Written a minute ago: a file changed within the last second is read again on every request.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(60);
        std::fs::File::options().write(true).open(&path).and_then(|file| file.set_modified(old)).expect("mtime");
        let panel_id = state.allocate_panel();
        state.open_files.push(OpenFile { panel_id, path: name, skill: None });
    }
    let mut core = PanelsCore::new(definition, Vec::new(), ToolEnvironment::new(dir.path()));
    core.reset_state(state);
    let messages = conversation();
    let model = pi_runtime::ai::Model::new("mock", "m", "anthropic-messages", "http://127.0.0.1:1");
    let tools: Vec<(String, String)> =
        ["read", "bash", "edit", "write"].iter().map(|name| ((*name).to_owned(), "A tool.".to_owned())).collect();
    let active: Vec<String> = tools.iter().map(|(name, _)| name.clone()).collect();
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let input = RequestInput {
        messages: &messages,
        system_prompt: "You are a careful coding agent.",
        model: Some(&model),
        all_tools: &tools,
        active_tools: &active,
        now_ms: 1_795_464_700_000,
    };
    runtime.block_on(core.prepare(&input));
    bencher.bench_local(|| runtime.block_on(core.prepare(divan::black_box(&input))).0.len());
}
