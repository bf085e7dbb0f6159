//! One sub-agent run: its session (a file beside the parent's, or in memory), its agent prepared as the
//! command line would prepare it (with the parent's model and key unless it names a model), its events
//! forwarded as the parent tool's updates, the parent's abort passed on, and its answer as the tool result.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

use super::super::modes::open_session;
use super::super::resolve::ResolvedModel;
use super::super::setup::{Placement, prepare_with};
use super::{ParentRun, SubagentScope};
use crate::AgentDefinition;
use crate::agent::Agent;
use crate::agent_session::{AgentSession, PromptOptions, SessionEventSink, SubagentUsage};
use crate::ai::catalog::{builtin_thinking_level_map, clamp_thinking_level};
use crate::extension::{Extensions, InputSource};
use crate::protocol::{AgentEvent, AgentMessage, AgentToolResult, StopReason, UserContent, WireEvent};
use crate::session::SessionManager;
use crate::tools::{ToolContext, ToolError};

/// The `customType` of the entry a parent's session gets for each sub-agent run (its `data` names the run's
/// session file).
pub const SUBAGENT_RUN_ENTRY: &str = "subagent_run";

/// The `customType` of the first entry of a sub-agent's session: which sub-agent it is (`chain`: the tool
/// names from the top-level agent down), for `--session` to reopen it with that agent.
pub const SUBAGENT_SESSION_ENTRY: &str = "subagent_session";

/// One call of a sub-agent tool.
pub(super) struct SubagentRun<'a> {
    pub tool_name: &'a str,
    pub definition: &'a AgentDefinition,
    pub parent: &'a ParentRun,
    pub scope: &'a SubagentScope,
}

/// The folder a parent session's sub-agent sessions go to: beside its file, named after it.
pub fn subagent_session_dir(parent_file: &Path) -> PathBuf {
    parent_file.with_extension("")
}

impl SubagentRun<'_> {
    pub(super) async fn run(&self, task: String, ctx: ToolContext) -> Result<AgentToolResult, ToolError> {
        let name = self.tool_name;
        let (parent_agent, runner) =
            self.parent.link.get().ok_or_else(|| ToolError::new(format!("Sub-agent {name}: its parent has ended")))?;
        let parent_file = runner.context().session_file();
        let cannot_start =
            |error: &dyn std::fmt::Display| ToolError::new(format!("Sub-agent {name} cannot start: {error}"));
        let mut session = match &parent_file {
            Some(file) => SessionManager::create(&subagent_session_dir(file), &self.parent.cwd)
                .map_err(|error| cannot_start(&error))?,
            None => SessionManager::in_memory(&self.parent.cwd),
        };
        let origin = json!({
            "agent": self.definition.name,
            "tool": name,
            "chain": self.scope.chain,
            "parentSession": parent_file.as_ref().map(|path| path.to_string_lossy().into_owned()),
        });
        session.append_custom(SUBAGENT_SESSION_ENTRY, Some(origin)).map_err(|error| cannot_start(&error))?;
        let (args, model) = self.model_choice(&parent_agent);
        let placement = Placement {
            cwd: self.parent.cwd.clone(),
            agent_dir: self.parent.agent_dir.clone(),
            session: Some(session),
            model,
            scope: self.scope.clone(),
        };
        let prepared = prepare_with(self.definition, &args, Vec::new(), Extensions::new(), placement)
            .map_err(|error| cannot_start(&error))?;
        // The sub-agent's own `ask` permissions (and other dialogs) reach the person through the parent's UI.
        if let Some(ui) = runner.context().ui_handle() {
            prepared.extensions.set_ui(ui.clone());
        }
        let (mcp, level) = (prepared.mcp.clone(), prepared.pi_compat);
        let quiet: SessionEventSink = Arc::new(|_| {});
        let session = open_session(prepared, quiet).await.map_err(|error| cannot_start(&error))?;
        forward_events(&session, name, level, &ctx);
        let outcome = prompt_until_done(&session, task, &ctx).await;
        if let Some(run) = mcp {
            run.manager.shutdown().await;
        }
        let result = self.result(&session, outcome);
        let data = json!({
            "toolCallId": ctx.tool_call_id,
            "tool": name,
            "agent": self.definition.name,
            "sessionFile": result.details.as_ref().and_then(|details| details.get("sessionFile")).cloned(),
            "sessionId": session.manager().session_id(),
            "stopReason": result.details.as_ref().and_then(|details| details.get("stopReason")).cloned(),
        });
        // The link is a convenience: the tool result carries the same file name.
        let _ = runner.context().append_entry(SUBAGENT_RUN_ENTRY, Some(data));
        Ok(result)
    }

    /// The flags the sub-agent is prepared with, and the parent's model and key when the sub-agent names no
    /// model of its own.
    fn model_choice(&self, parent: &Agent) -> (crate::cli::CliArgs, Option<ResolvedModel>) {
        let mut args = self.parent.args.clone();
        let parent_model = parent.state().model;
        let own = &self.definition;
        if own.default_provider.is_some() || own.default_model.is_some() {
            args.provider = own.default_provider.clone();
            args.model = own.default_model.clone();
            // A key the parent was given for this provider (e.g. `--api-key`) serves the sub-agent too.
            let same_provider = match (&own.default_provider, &parent_model) {
                (Some(provider), Some(model)) => *provider == model.provider,
                (None, _) => true,
                _ => false,
            };
            if same_provider {
                args.api_key = parent.api_key();
            }
            return (args, None);
        }
        let Some(model) = parent_model else { return (args, None) };
        let pi_compat = parent.pi_compat();
        let thinking = match own.thinking {
            Some(level) => {
                let map = builtin_thinking_level_map(&model.provider, &model.id);
                clamp_thinking_level(&model, map, level, pi_compat)
            }
            None => parent.state().thinking_level,
        };
        let resolved = ResolvedModel { model, api_key: parent.api_key().unwrap_or_default(), thinking };
        (args, Some(resolved))
    }

    /// The tool result: the final answer, or an error result when the run failed or was aborted; `details`
    /// name the session file, the model, how the run ended and what it used.
    fn result(&self, session: &AgentSession, outcome: Result<(), String>) -> AgentToolResult {
        let name = self.tool_name;
        let answer = session.agent().find_last_message(|message| message.as_assistant().cloned());
        let stop_reason = answer.as_ref().map(|answer| answer.stop_reason);
        let file =
            session.manager().path().filter(|path| path.is_file()).map(|path| path.to_string_lossy().into_owned());
        let model = session.agent().model().map(|model| format!("{}/{}", model.provider, model.id));
        let usage = SubagentUsage::from_stats(&session.stats());
        let stop = match (&outcome, stop_reason) {
            (Err(_), _) | (_, Some(StopReason::Error)) => "error",
            (_, Some(StopReason::Aborted)) => "aborted",
            (_, None) => "error",
            _ => "stop",
        };
        let details = json!({
            "agent": self.definition.name,
            "sessionFile": file,
            "sessionId": session.manager().session_id(),
            "model": model,
            "stopReason": stop,
            SubagentUsage::DETAILS_KEY: usage,
        });
        let (text, failed) = match (outcome, answer) {
            (Err(error), _) => (format!("Sub-agent {name} failed: {error}"), true),
            (Ok(()), Some(answer)) if answer.stop_reason == StopReason::Aborted => {
                (format!("Sub-agent {name} was aborted"), true)
            }
            (Ok(()), Some(answer)) if answer.stop_reason == StopReason::Error => {
                let why = answer.error_message.clone().unwrap_or_else(|| "the request failed".to_owned());
                (format!("Sub-agent {name} failed: {why}"), true)
            }
            (Ok(()), Some(answer)) => {
                let text = answer.text();
                if text.trim().is_empty() { (format!("Sub-agent {name} gave no answer"), false) } else { (text, false) }
            }
            (Ok(()), None) => (format!("Sub-agent {name} gave no answer"), true),
        };
        AgentToolResult {
            content: vec![UserContent::text(text)],
            details: Some(details),
            is_error: failed.then_some(true),
            ..AgentToolResult::default()
        }
    }
}

/// Runs the task; once the parent aborts, aborts the sub-agent (again until its run has ended, in case the
/// abort came while a prompt was starting) and waits for what it saves on the way out.
async fn prompt_until_done(session: &AgentSession, task: String, ctx: &ToolContext) -> Result<(), String> {
    let options = PromptOptions { expand: false, source: InputSource::Extension, ..PromptOptions::default() };
    let prompt = session.prompt_with(task, options);
    tokio::pin!(prompt);
    let outcome = tokio::select! {
        biased;
        outcome = &mut prompt => outcome,
        () = ctx.cancel.cancelled() => loop {
            session.abort();
            if let Ok(outcome) = tokio::time::timeout(Duration::from_millis(100), &mut prompt).await {
                break outcome;
            }
        },
    };
    outcome.map_err(|error| error.to_string())
}

/// Passes every event of the sub-agent on as an update of the parent's tool call: `details.event` is the
/// event as json mode prints it, the text what the sub-agent did and said so far.
fn forward_events(session: &AgentSession, name: &str, level: crate::protocol::PiCompat, ctx: &ToolContext) {
    let Some(update) = ctx.on_update.clone() else { return };
    let name = name.to_owned();
    let progress = Mutex::new(Progress::default());
    session.subscribe(move |event: &AgentEvent| {
        let text = {
            let mut progress = progress.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            progress.see(event);
            progress.text()
        };
        let wire = serde_json::to_value(WireEvent::new(event, level)).unwrap_or(Value::Null);
        update(AgentToolResult {
            content: vec![UserContent::text(text)],
            details: Some(json!({ "subagent": name, "event": wire })),
            ..AgentToolResult::default()
        });
    });
}

/// What a sub-agent did so far, as a short text: a line per tool it called, then its current answer.
#[derive(Default)]
struct Progress {
    tools: Vec<String>,
    answer: String,
}

impl Progress {
    fn see(&mut self, event: &AgentEvent) {
        match event {
            AgentEvent::ToolExecutionStart { tool_name, .. } => self.tools.push(format!("→ {tool_name}")),
            AgentEvent::MessageUpdate { message: AgentMessage::Assistant(answer), .. }
            | AgentEvent::MessageEnd { message: AgentMessage::Assistant(answer) } => self.answer = answer.text(),
            _ => {}
        }
    }

    fn text(&self) -> String {
        let mut lines = self.tools.clone();
        if !self.answer.is_empty() {
            lines.push(self.answer.clone());
        }
        lines.join("\n")
    }
}
