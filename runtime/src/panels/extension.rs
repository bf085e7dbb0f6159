//! The panels strategy as a built-in extension: its `context` handler builds every request (seed 003), its
//! tools edit the panels, its state is saved as `custom` entries after each turn and restored when a session
//! starts or the branch changes, and the Spine wakes the agent once for notifications that arrived while it
//! worked. `/context` shows the latest request's panels.

use std::sync::Arc;

use super::engine::{PanelsCore, RequestInput};
use super::render::{LibraryEntry, LibraryKind};
use super::report::ContextReport;
use super::state::{PanelState, STATE_ENTRY_TYPE};
use super::tools::{PanelTool, PanelToolSpec, SharedCore};
use super::{BuiltinPanel, PanelsDefinition, tools_panels, tools_state};
use crate::extension::{
    AgentEndEvent, ContextEvent, Delivery, EventKind, EventSet, Extension, ExtensionContext, ExtensionMessage,
    ExtensionRegistrar, HookResult, NotifyLevel, SendOptions, SessionForkEvent, SessionShutdownEvent,
    SessionStartEvent, SessionSwitchEvent, SessionTreeEvent, ToolExecutionEndEvent, TurnEndEvent,
};
use crate::extension::{BeforeAgentStartEvent, BeforeAgentStartResult};
use crate::protocol::{AgentMessage, Message, StopReason, now_ms};
use crate::tools::ToolEnvironment;

/// The `customType` of the messages the Spine wakes the agent with.
pub const SPINE_MESSAGE_TYPE: &str = "spine";

/// Tools after which the directory tree is walked again.
const TREE_CHANGING_TOOLS: [&str; 4] = ["write", "edit", "bash", "console"];

/// Context Pilot's pipeline as an extension.
pub struct PanelsExtension {
    core: SharedCore,
}

impl PanelsExtension {
    pub fn new(definition: PanelsDefinition, library: Vec<LibraryEntry>, env: ToolEnvironment) -> Self {
        let core = PanelsCore::new(definition, library, env);
        Self { core: Arc::new(tokio::sync::Mutex::new(core)) }
    }

    /// The shared state (for tests and benchmarks).
    pub fn core(&self) -> SharedCore {
        self.core.clone()
    }

    /// Loads the last saved state on the current branch (or a fresh one).
    async fn restore(&self, ctx: &ExtensionContext) {
        let saved = ctx
            .custom_entries(STATE_ENTRY_TYPE)
            .into_iter()
            .rev()
            .find_map(|data| serde_json::from_value::<PanelState>(data).ok());
        let mut core = self.core.lock().await;
        core.reset_state(saved.unwrap_or_default());
    }

    /// Saves the state if it changed since it was last saved.
    async fn save(&self, ctx: &ExtensionContext) -> HookResult<()> {
        let mut core = self.core.lock().await;
        if !core.dirty {
            return Ok(());
        }
        let data = serde_json::to_value(&core.state)?;
        core.dirty = false;
        drop(core);
        ctx.append_entry(STATE_ENTRY_TYPE, Some(data)).map(|_| ()).map_err(Into::into)
    }
}

/// The library entries of an agent's skills, prompt templates and commands.
pub fn library_entries(
    skills: &[crate::prompt::Skill],
    templates: &[crate::prompt::PromptTemplate],
    commands: &[crate::CommandDefinition],
) -> Vec<LibraryEntry> {
    let skills = skills.iter().map(|skill| LibraryEntry {
        kind: LibraryKind::Skill,
        name: skill.name.clone(),
        description: skill.description.clone(),
        path: Some(skill.file_path.display().to_string()),
    });
    let templates = templates.iter().map(|template| LibraryEntry {
        kind: LibraryKind::PromptTemplate,
        name: template.name.clone(),
        description: template.description.clone(),
        path: None,
    });
    let commands = commands.iter().map(|command| LibraryEntry {
        kind: LibraryKind::Command,
        name: command.name.clone(),
        description: command.description.clone(),
        path: None,
    });
    skills.chain(templates).chain(commands).collect()
}

/// How often a console's exit watcher looks again while the agent works.
const BUSY_RECHECK: std::time::Duration = std::time::Duration::from_millis(250);

/// Waits for a console to exit, then wakes the agent once it is idle, unless a request already showed the
/// notification (the running agent sees it in its next request, or is woken at the end of its run).
async fn wake_when_idle_after_exit(
    core: SharedCore,
    mut exit: tokio::sync::watch::Receiver<Option<super::sources::ConsoleStatus>>,
    ctx: ExtensionContext,
) {
    // A closed channel means the console was stopped and dropped: nothing to tell.
    if exit.wait_for(Option::is_some).await.is_err() {
        return;
    }
    loop {
        {
            let mut core = core.lock().await;
            core.poll_consoles(now_ms());
            if core.spine.pending().next().is_none() {
                return;
            }
            if ctx.is_idle() {
                let limit = core.definition.max_auto_continuations;
                if let Some(text) = core.spine.take_wake_up(limit) {
                    let message =
                        ExtensionMessage { display: true, ..ExtensionMessage::text(SPINE_MESSAGE_TYPE, text) };
                    ctx.send_message(message, SendOptions { trigger_turn: true, deliver_as: None });
                }
                return;
            }
        }
        tokio::time::sleep(BUSY_RECHECK).await;
    }
}

fn into_agent_message(message: Message) -> AgentMessage {
    match message {
        Message::User(user) => AgentMessage::User(user),
        Message::Assistant(answer) => AgentMessage::Assistant(answer),
        Message::ToolResult(result) => AgentMessage::ToolResult(result),
    }
}

/// `/context`: the latest request's panels, one line each.
pub fn context_summary(report: Option<&ContextReport>) -> String {
    let Some(report) = report else {
        return "No request has been built with panels yet.".to_owned();
    };
    let mut text = format!(
        "Request {}: {} panel tokens ({} cached, {} not), conversation {} messages ({} tokens), {} detached; \
         panel cost ${:.4} (this request), ${:.4} (total)",
        report.requests,
        report.panel_tokens,
        report.cache_hit_tokens,
        report.cache_miss_tokens,
        report.conversation_messages,
        report.conversation_tokens,
        report.detached_messages,
        report.request_cost,
        report.total_cost
    );
    for panel in &report.panels {
        let cached = if panel.cache_hit { "cached" } else { "new" };
        text.push_str(&format!("\n{:>5} {:>7} tokens  {cached:<6} {}", panel.id, panel.tokens, panel.header));
    }
    text
}

impl Extension for PanelsExtension {
    fn name(&self) -> &str {
        "panels"
    }

    fn subscriptions(&self) -> EventSet {
        EventSet::of(&[
            EventKind::Context,
            EventKind::BeforeAgentStart,
            EventKind::TurnEnd,
            EventKind::AgentEnd,
            EventKind::ToolExecutionEnd,
            EventKind::SessionStart,
            EventKind::SessionSwitch,
            EventKind::SessionTree,
            EventKind::SessionFork,
            EventKind::SessionShutdown,
        ])
    }

    fn register(&self, registrar: &mut ExtensionRegistrar) {
        let builtin = self.core.try_lock().map(|core| core.definition.builtin.clone()).unwrap_or_default();
        let mut specs: Vec<PanelToolSpec> = Vec::new();
        if builtin.contains(&BuiltinPanel::Todo) {
            specs.push(tools_state::todo_tool());
        }
        if builtin.contains(&BuiltinPanel::Memories) {
            specs.push(tools_state::memory_tool());
        }
        if builtin.contains(&BuiltinPanel::Scratchpad) {
            specs.push(tools_state::scratchpad_tool());
        }
        specs.extend([
            tools_panels::open_tool(),
            tools_panels::close_tool(),
            tools_panels::watch_tool(),
            tools_panels::console_tool(),
            tools_state::summarize_messages_tool(),
            tools_state::delete_messages_tool(),
        ]);
        for spec in specs {
            registrar.tool(Arc::new(PanelTool::new(spec, self.core.clone())));
        }
        let core = self.core.clone();
        registrar.command(
            "context",
            "Show the panels of the latest request: tokens and prompt-cache hits",
            move |_, ctx| {
                let core = core.clone();
                async move {
                    let text = context_summary(core.lock().await.report.as_ref());
                    ctx.notify(&text, NotifyLevel::Info);
                    Ok(())
                }
            },
        );
    }

    async fn before_agent_start(
        &self,
        _event: &BeforeAgentStartEvent,
        _ctx: &ExtensionContext,
    ) -> HookResult<BeforeAgentStartResult> {
        self.core.lock().await.spine.user_message(now_ms());
        Ok(BeforeAgentStartResult::default())
    }

    async fn context(&self, event: &ContextEvent, ctx: &ExtensionContext) -> HookResult<Option<Vec<AgentMessage>>> {
        let model = ctx.model();
        let system_prompt = ctx.system_prompt();
        let all_tools: Vec<(String, String)> =
            ctx.all_tools().into_iter().map(|tool| (tool.name, tool.description)).collect();
        let active_tools = ctx.active_tools();
        let input = RequestInput {
            messages: &event.messages,
            system_prompt: &system_prompt,
            model: model.as_ref(),
            all_tools: &all_tools,
            active_tools: &active_tools,
            now_ms: now_ms(),
        };
        let (messages, report) = self.core.lock().await.prepare(&input).await;
        ctx.report_context(&report);
        Ok(Some(messages.into_iter().map(into_agent_message).collect()))
    }

    async fn tool_execution_end(&self, event: &ToolExecutionEndEvent, ctx: &ExtensionContext) -> HookResult<()> {
        if TREE_CHANGING_TOOLS.contains(&event.tool_name.as_str()) {
            self.core.lock().await.sources.invalidate_tree();
        }
        if event.tool_name == "console" {
            let exits = self.core.lock().await.sources.unwatched_exits();
            for exit in exits {
                tokio::spawn(wake_when_idle_after_exit(self.core.clone(), exit, ctx.clone()));
            }
        }
        Ok(())
    }

    async fn turn_end(&self, event: &TurnEndEvent, ctx: &ExtensionContext) -> HookResult<()> {
        let wake = {
            let mut core = self.core.lock().await;
            core.poll_consoles(now_ms());
            let finished = match &event.message {
                AgentMessage::Assistant(answer) => {
                    answer.stop_reason == StopReason::Stop && answer.tool_calls().next().is_none()
                }
                _ => false,
            };
            let limit = core.definition.max_auto_continuations;
            if finished { core.spine.take_wake_up(limit) } else { None }
        };
        if let Some(text) = wake {
            let message = ExtensionMessage { display: true, ..ExtensionMessage::text(SPINE_MESSAGE_TYPE, text) };
            ctx.send_message(message, SendOptions { trigger_turn: false, deliver_as: Some(Delivery::FollowUp) });
        }
        self.save(ctx).await
    }

    async fn agent_end(&self, _event: &AgentEndEvent, ctx: &ExtensionContext) -> HookResult<()> {
        self.save(ctx).await
    }

    async fn session_start(&self, _event: &SessionStartEvent, ctx: &ExtensionContext) -> HookResult<()> {
        self.restore(ctx).await;
        Ok(())
    }

    async fn session_switch(&self, _event: &SessionSwitchEvent, ctx: &ExtensionContext) -> HookResult<()> {
        self.restore(ctx).await;
        Ok(())
    }

    async fn session_tree(&self, _event: &SessionTreeEvent, ctx: &ExtensionContext) -> HookResult<()> {
        self.restore(ctx).await;
        Ok(())
    }

    async fn session_fork(&self, _event: &SessionForkEvent, ctx: &ExtensionContext) -> HookResult<()> {
        self.restore(ctx).await;
        Ok(())
    }

    async fn session_shutdown(&self, _event: &SessionShutdownEvent, _ctx: &ExtensionContext) -> HookResult<()> {
        let mut core = self.core.lock().await;
        core.sources.cancel.cancel();
        for console in core.sources.consoles.drain(..) {
            console.process.stop();
        }
        Ok(())
    }
}
