//! The prompt pipeline with extensions, over the scripted provider: stage order, chaining as the model
//! sees it, per-prompt system prompts, context pruning, tool blocking and rewriting, custom messages,
//! entries, active tools, failing handlers and extension compactions.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::*;
use crate::agent::{Agent, AgentError, AgentOptions};
use crate::ai::{LlmContext, Model, ProviderRegistry, ScriptedProvider, ScriptedResponse};
use crate::extension::*;
use crate::prompt::{SystemPromptBuilder, SystemPromptOptions};
use crate::protocol::{AgentMessage, Message, SessionOnlyEvent, UserContent};
use crate::session::{EntryKind, SessionManager, load_session_file};
use crate::tools::{ToolEnvironment, builtin_tool};

/// A session whose agent has the built-in `read` and `bash` tools working in `dir`.
fn make_session(
    dir: &TempDir,
    responses: Vec<ScriptedResponse>,
    extensions: Extensions,
) -> (AgentSession, ScriptedProvider) {
    let provider = ScriptedProvider::new(responses);
    let mut registry = ProviderRegistry::new();
    registry.register(Arc::new(provider.clone()));
    let registry = Arc::new(registry);
    let env = ToolEnvironment::new(dir.path());
    let tools = vec![builtin_tool("read", &env).unwrap(), builtin_tool("bash", &env).unwrap()];
    let builder = SystemPromptBuilder::new(SystemPromptOptions {
        identity: "You are a test.".into(),
        date: Some("2026-01-02".into()),
        cwd: dir.path().to_path_buf(),
        ..SystemPromptOptions::default()
    });
    let agent = Agent::new(AgentOptions {
        model: Some(Model::new("test", "test-model", "scripted", "http://127.0.0.1:9")),
        system_prompt: builder.build(&tools),
        tools,
        api_key: Some("test-key".into()),
        convert_to_llm: Some(crate::session::coding_agent_convert_to_llm()),
        ..AgentOptions::new(registry.clone())
    });
    let manager = SessionManager::create(&dir.path().join("sessions"), dir.path()).unwrap();
    let emit: SessionEventSink = Arc::new(|_: &SessionOnlyEvent| {});
    let runner = Arc::new(ExtensionRunner::new(extensions, ExtensionContext::detached(dir.path())));
    let expander: PromptExpander = Arc::new(|text: &str| text.replace("/tpl", "expanded template"));
    let extras = SessionExtras {
        runner,
        prompt_builder: Some(builder),
        expander: Some(expander),
        cwd: dir.path().to_path_buf(),
        require_api_key: true,
    };
    let session =
        AgentSession::with_extras(agent, manager, SessionSettings::default(), registry, Some("k".into()), emit, extras)
            .unwrap();
    (session, provider)
}

fn texts(context: &LlmContext) -> Vec<String> {
    context
        .messages
        .iter()
        .map(|message| match message {
            Message::User(user) => format!("user: {}", user.content.text()),
            Message::Assistant(answer) => format!("assistant: {}", answer.text()),
            Message::ToolResult(result) => {
                format!("tool: {}", result.content.iter().filter_map(UserContent::as_text).collect::<Vec<_>>().join(""))
            }
        })
        .collect()
}

/// Records the names of the events it sees, in order.
#[derive(Clone, Default)]
struct Recorder {
    seen: Arc<Mutex<Vec<String>>>,
}

impl Recorder {
    fn seen(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }

    fn note(&self, what: impl Into<String>) {
        self.seen.lock().unwrap().push(what.into());
    }
}

impl Extension for Recorder {
    fn name(&self) -> &str {
        "recorder"
    }

    fn register(&self, registrar: &mut ExtensionRegistrar) {
        let recorder = self.clone();
        registrar.command("hello", "says hello", move |args, ctx| {
            let recorder = recorder.clone();
            async move {
                recorder.note(format!("command hello {args}"));
                ctx.send_message(
                    ExtensionMessage::text("note", "from the command"),
                    SendOptions { deliver_as: Some(Delivery::NextTurn), ..SendOptions::default() },
                );
                Ok(())
            }
        });
    }

    async fn input(&self, event: &InputEvent, _ctx: &ExtensionContext) -> HookResult<InputAction> {
        self.note(format!("input {}", event.text));
        Ok(InputAction::Continue)
    }

    async fn before_agent_start(
        &self,
        event: &BeforeAgentStartEvent,
        _ctx: &ExtensionContext,
    ) -> HookResult<BeforeAgentStartResult> {
        self.note(format!("before_agent_start {}", event.prompt));
        Ok(BeforeAgentStartResult::default())
    }

    async fn agent_start(&self, _event: &AgentStartEvent, _ctx: &ExtensionContext) -> HookResult<()> {
        self.note("agent_start");
        Ok(())
    }

    async fn turn_start(&self, event: &TurnStartEvent, _ctx: &ExtensionContext) -> HookResult<()> {
        self.note(format!("turn_start {}", event.turn_index));
        Ok(())
    }

    async fn context(&self, _event: &ContextEvent, _ctx: &ExtensionContext) -> HookResult<Option<Vec<AgentMessage>>> {
        self.note("context");
        Ok(None)
    }

    async fn tool_call(&self, event: &ToolCallEvent, _ctx: &ExtensionContext) -> HookResult<ToolCallDecision> {
        self.note(format!("tool_call {}", event.tool_name));
        Ok(ToolCallDecision::Allow)
    }

    async fn tool_result(&self, event: &ToolResultEvent, _ctx: &ExtensionContext) -> HookResult<ToolResultPatch> {
        self.note(format!("tool_result {}", event.tool_name));
        Ok(ToolResultPatch::default())
    }

    async fn turn_end(&self, event: &TurnEndEvent, _ctx: &ExtensionContext) -> HookResult<()> {
        self.note(format!("turn_end {}", event.turn_index));
        Ok(())
    }

    async fn agent_end(&self, _event: &AgentEndEvent, _ctx: &ExtensionContext) -> HookResult<()> {
        self.note("agent_end");
        Ok(())
    }
}

#[tokio::test]
async fn stages_run_in_pi_order_and_a_command_never_reaches_the_model() {
    let dir = TempDir::new().unwrap();
    let recorder = Recorder::default();
    let responses =
        vec![ScriptedResponse::tool_call("read", json!({"path": "missing.txt"})), ScriptedResponse::text("Done.")];
    let (session, provider) = make_session(&dir, responses, Extensions::new().with(recorder.clone()));
    session.prompt("/hello there".into()).await.unwrap();
    assert_eq!(recorder.seen(), ["command hello there"]);
    assert!(provider.requests().is_empty(), "a command sends nothing");

    session.prompt("use /tpl".into()).await.unwrap();
    let seen = recorder.seen();
    assert_eq!(
        seen[1..],
        [
            "input use /tpl",
            "before_agent_start use expanded template",
            "agent_start",
            "turn_start 0",
            "context",
            "tool_call read",
            "tool_result read",
            "turn_end 0",
            "turn_start 1",
            "context",
            "turn_end 1",
            "agent_end",
        ]
    );
    // The command's next-turn message follows the user's message.
    let first = &provider.requests()[0].context;
    assert_eq!(texts(first), ["user: use expanded template", "user: from the command"]);
}

/// Rewrites input by its own rule.
struct Rewrite(&'static str, InputAction);

impl Extension for Rewrite {
    fn name(&self) -> &str {
        self.0
    }

    async fn input(&self, event: &InputEvent, _ctx: &ExtensionContext) -> HookResult<InputAction> {
        Ok(match &self.1 {
            InputAction::Transform { text, .. } => {
                InputAction::Transform { text: format!("{} {text}", event.text), images: None }
            }
            other => other.clone(),
        })
    }
}

#[tokio::test]
async fn input_transforms_chain_and_handled_sends_nothing() {
    let dir = TempDir::new().unwrap();
    let extensions = Extensions::new()
        .with(Rewrite("a", InputAction::Transform { text: "+a".into(), images: None }))
        .with(Rewrite("b", InputAction::Transform { text: "+b".into(), images: None }));
    let (session, provider) = make_session(&dir, vec![ScriptedResponse::text("ok")], extensions);
    session.prompt("start".into()).await.unwrap();
    assert_eq!(texts(&provider.requests()[0].context), ["user: start +a +b"]);

    let dir = TempDir::new().unwrap();
    let extensions = Extensions::new().with(Rewrite("stop", InputAction::Handled));
    let (session, provider) = make_session(&dir, vec![ScriptedResponse::text("never")], extensions);
    session.prompt("anything".into()).await.unwrap();
    assert!(provider.requests().is_empty());
    assert!(session.agent().messages().is_empty());
}

/// Appends to the system prompt and injects a message, only for prompts containing "plan".
struct Planner(&'static str);

impl Extension for Planner {
    fn name(&self) -> &str {
        self.0
    }

    async fn before_agent_start(
        &self,
        event: &BeforeAgentStartEvent,
        ctx: &ExtensionContext,
    ) -> HookResult<BeforeAgentStartResult> {
        if !event.prompt.contains("plan") {
            return Ok(BeforeAgentStartResult::default());
        }
        assert_eq!(ctx.system_prompt(), event.system_prompt, "the context shows the chained prompt");
        Ok(BeforeAgentStartResult {
            message: Some(ExtensionMessage::text("plan", format!("injected by {}", self.0))),
            system_prompt: Some(format!("{}\n{} was here", event.system_prompt, self.0)),
        })
    }
}

#[tokio::test]
async fn system_prompt_changes_chain_and_last_for_one_prompt() {
    let dir = TempDir::new().unwrap();
    let extensions = Extensions::new().with(Planner("first")).with(Planner("second"));
    let responses = vec![ScriptedResponse::text("planned"), ScriptedResponse::text("plain")];
    let (session, provider) = make_session(&dir, responses, extensions);
    let base = session.base_system_prompt();
    session.prompt("make a plan".into()).await.unwrap();
    session.prompt("just answer".into()).await.unwrap();
    let requests = provider.requests();
    assert_eq!(requests[0].context.system_prompt, format!("{base}\nfirst was here\nsecond was here"));
    assert_eq!(
        texts(&requests[0].context),
        ["user: make a plan", "user: injected by first", "user: injected by second"]
    );
    assert_eq!(requests[1].context.system_prompt, base, "the base prompt is back");
    let entries = load_session_file(session.manager().path().unwrap()).unwrap().entries;
    let custom = entries.iter().filter(|entry| matches!(entry.kind, EntryKind::CustomMessage { .. })).count();
    assert_eq!(custom, 2, "injected messages are saved as custom_message entries");
}

/// Keeps only the last message in what the model sees.
struct KeepLast;

impl Extension for KeepLast {
    fn name(&self) -> &str {
        "keep-last"
    }

    async fn context(&self, event: &ContextEvent, _ctx: &ExtensionContext) -> HookResult<Option<Vec<AgentMessage>>> {
        Ok(Some(event.messages.last().cloned().into_iter().collect()))
    }
}

#[tokio::test]
async fn a_context_handler_prunes_every_turn_without_touching_the_transcript() {
    let dir = TempDir::new().unwrap();
    let responses =
        vec![ScriptedResponse::tool_call("bash", json!({"command": "echo hi"})), ScriptedResponse::text("Done.")];
    let (session, provider) = make_session(&dir, responses, Extensions::new().with(KeepLast));
    session.prompt("go".into()).await.unwrap();
    let requests = provider.requests();
    assert_eq!(texts(&requests[0].context), ["user: go"]);
    assert_eq!(texts(&requests[1].context), ["tool: hi\n"]);
    assert_eq!(session.agent().messages().len(), 4, "the transcript keeps everything");
}

/// Blocks `rm -rf` and rewrites every bash result.
struct Guard {
    calls: Arc<AtomicUsize>,
}

impl Extension for Guard {
    fn name(&self) -> &str {
        "guard"
    }

    fn subscriptions(&self) -> EventSet {
        EventSet::of(&[EventKind::ToolCall, EventKind::ToolResult])
    }

    async fn tool_call(&self, event: &ToolCallEvent, _ctx: &ExtensionContext) -> HookResult<ToolCallDecision> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let command = event.input["command"].as_str().unwrap_or_default();
        Ok(if command.contains("rm -rf") {
            ToolCallDecision::block("rm -rf is not allowed here")
        } else {
            ToolCallDecision::Allow
        })
    }

    async fn tool_result(&self, event: &ToolResultEvent, _ctx: &ExtensionContext) -> HookResult<ToolResultPatch> {
        let text: String = event.content.iter().filter_map(UserContent::as_text).collect();
        Ok(ToolResultPatch {
            content: Some(vec![UserContent::text(format!("[checked] {text}"))]),
            ..Default::default()
        })
    }
}

#[tokio::test]
async fn a_blocked_call_never_runs_and_results_can_be_rewritten() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("keep.txt"), "precious").unwrap();
    let responses = vec![
        ScriptedResponse::tool_call("bash", json!({"command": "rm -rf keep.txt"})),
        ScriptedResponse::tool_call("bash", json!({"command": "echo safe"})),
        ScriptedResponse::text("Done."),
    ];
    let calls = Arc::new(AtomicUsize::new(0));
    let (session, provider) = make_session(&dir, responses, Extensions::new().with(Guard { calls: calls.clone() }));
    session.prompt("clean up".into()).await.unwrap();
    assert!(dir.path().join("keep.txt").exists(), "the blocked command never ran");
    let requests = provider.requests();
    assert_eq!(texts(&requests[1].context).last().unwrap(), "tool: rm -rf is not allowed here");
    assert_eq!(texts(&requests[2].context).last().unwrap(), "tool: [checked] safe\n");
    assert_eq!(calls.load(Ordering::SeqCst), 2);
}

/// Fails on every prompt.
struct Broken;

impl Extension for Broken {
    fn name(&self) -> &str {
        "broken"
    }

    async fn before_agent_start(
        &self,
        _event: &BeforeAgentStartEvent,
        _ctx: &ExtensionContext,
    ) -> HookResult<BeforeAgentStartResult> {
        Err(ExtensionError::new("no luck"))
    }
}

#[tokio::test]
async fn a_failing_handler_is_reported_and_the_prompt_goes_on() {
    let dir = TempDir::new().unwrap();
    let (session, provider) = make_session(&dir, vec![ScriptedResponse::text("fine")], Extensions::new().with(Broken));
    let errors = Arc::new(Mutex::new(Vec::new()));
    let sink = errors.clone();
    session
        .extensions()
        .on_error(Arc::new(move |error: &ExtensionErrorEvent| sink.lock().unwrap().push(error.clone())));
    session.prompt("hi".into()).await.unwrap();
    assert_eq!(provider.requests().len(), 1);
    let errors = errors.lock().unwrap();
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].extension_path, "broken");
    assert_eq!(errors[0].event, "before_agent_start");
    assert_eq!(errors[0].error, "no luck");
    let line = serde_json::to_value(&errors[0]).unwrap();
    assert_eq!(
        line,
        json!({"type": "extension_error", "extensionPath": "broken", "event": "before_agent_start", "error": "no luck"})
    );
}

/// Registers a tool-switching command, an entry-writing command and a prompt-sending command.
struct Controls;

impl Extension for Controls {
    fn name(&self) -> &str {
        "controls"
    }

    fn register(&self, registrar: &mut ExtensionRegistrar) {
        registrar.command("readonly", "only read", |_args, ctx| async move {
            ctx.set_active_tools(&["read".to_owned()]);
            Ok(())
        });
        registrar.command("remember", "store state", |args, ctx| async move {
            ctx.append_entry("memo", Some(Value::String(args)))?;
            Ok(())
        });
        registrar.command("ask", "ask the model", |args, ctx| async move {
            ctx.send_user_message(format!("asked: {args}"), None);
            Ok(())
        });
    }
}

#[tokio::test]
async fn commands_change_tools_write_entries_and_send_prompts() {
    let dir = TempDir::new().unwrap();
    let responses = vec![ScriptedResponse::text("answer one"), ScriptedResponse::text("answer two")];
    let (session, provider) = make_session(&dir, responses, Extensions::new().with(Controls));
    let before = session.base_system_prompt();
    assert!(before.contains("- bash: "), "{before}");
    session.prompt("/readonly".into()).await.unwrap();
    assert_eq!(session.active_tools(), ["read"]);
    let after = session.base_system_prompt();
    assert!(!after.contains("- bash: ") && after.contains("- read: "), "{after}");

    session.prompt("/ask why".into()).await.unwrap();
    let requests = provider.requests();
    assert_eq!(requests.len(), 1, "the deferred prompt ran");
    assert_eq!(texts(&requests[0].context), ["user: asked: why"]);
    assert_eq!(requests[0].context.system_prompt, after);
    assert_eq!(requests[0].context.tools.iter().map(|tool| tool.name.as_str()).collect::<Vec<_>>(), ["read"]);

    session.prompt("/remember the milk".into()).await.unwrap();
    let entries = load_session_file(session.manager().path().unwrap()).unwrap().entries;
    let memo = entries.iter().find_map(|entry| match &entry.kind {
        EntryKind::Custom { custom_type, data } if custom_type == "memo" => data.clone(),
        _ => None,
    });
    assert_eq!(memo, Some(json!("the milk")));
}

#[path = "tests_pipeline_session.rs"]
mod session_operations;
