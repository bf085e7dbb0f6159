//! The session's events as the screen shows them: messages and tool calls into the conversation, retries,
//! compactions and queue changes into status lines and notices.

use pi_tui::Role;

use super::app::App;
use super::tool_view::{ToolState, text_of};
use super::transcript::{AssistantView, Item};
use crate::protocol::{AgentEvent, AgentMessage, SessionOnlyEvent};

impl App {
    pub(super) fn on_agent_event(&mut self, event: AgentEvent) {
        self.pending.on_event(&event);
        match event {
            AgentEvent::MessageStart { message } => match message {
                AgentMessage::User(user) => self.transcript.push(Item::User(user.content.text())),
                AgentMessage::Assistant(assistant) => {
                    let mut view = AssistantView::new();
                    view.update(&assistant, &self.theme);
                    self.transcript.push(Item::Assistant(view));
                }
                AgentMessage::BashExecution(bash) => self.transcript.push(Item::Bash {
                    command: bash.command,
                    output: bash.output,
                    excluded: bash.exclude_from_context.unwrap_or(false),
                    exit_code: bash.exit_code,
                }),
                AgentMessage::Custom(custom) if custom.display => {
                    self.transcript.push(super::transcript::custom_message_item(&custom));
                }
                _ => {}
            },
            AgentEvent::MessageUpdate { message: AgentMessage::Assistant(assistant), .. }
            | AgentEvent::MessageEnd { message: AgentMessage::Assistant(assistant) } => {
                let theme = self.theme.clone();
                if let Some(view) = self.transcript.last_assistant() {
                    view.update(&assistant, &theme);
                }
            }
            AgentEvent::ToolExecutionStart { tool_call_id, tool_name, args } => {
                self.transcript.push(Item::Tool(self.transcript.tool_view(&tool_call_id, &tool_name, args)));
            }
            AgentEvent::ToolExecutionUpdate { tool_call_id, partial_result, .. } => {
                if let Some(view) = self.transcript.tool(&tool_call_id) {
                    view.output = text_of(&partial_result.content);
                }
            }
            AgentEvent::ToolExecutionEnd { tool_call_id, result, is_error, .. } => {
                if let Some(view) = self.transcript.tool(&tool_call_id) {
                    view.output = text_of(&result.content);
                    view.state = if is_error { ToolState::Failed } else { ToolState::Done };
                }
            }
            _ => {}
        }
    }

    pub(super) fn on_session_event(&mut self, event: SessionOnlyEvent) {
        match event {
            SessionOnlyEvent::CompactionStart { .. } => self.status = Some("Compacting the context...".to_owned()),
            SessionOnlyEvent::CompactionEnd { aborted, error_message, result, .. } => {
                self.status = None;
                if aborted {
                    self.transcript.notice("Compaction cancelled.", Role::Warning);
                } else if let Some(error) = error_message {
                    self.transcript.notice(format!("Compaction failed: {error}"), Role::Error);
                } else if result.is_some() {
                    let before = result
                        .as_ref()
                        .and_then(|value| value.get("tokensBefore"))
                        .and_then(serde_json::Value::as_u64)
                        .map(|tokens| format!(" (it held {} tokens)", super::format::tokens(tokens)))
                        .unwrap_or_default();
                    self.transcript.notice(format!("Compacted the context{before}."), Role::Muted);
                }
            }
            SessionOnlyEvent::AutoRetryStart { attempt, max_attempts, delay_ms, error_message } => {
                // The failed answer is retried: it leaves the screen (the status line tells of it).
                self.transcript.drop_failed_answer();
                let seconds = delay_ms.div_ceil(1000);
                self.status = Some(format!("Retrying ({attempt}/{max_attempts}) in {seconds}s: {error_message}"));
            }
            SessionOnlyEvent::AutoRetryEnd { success, attempt, final_error } => {
                self.status = None;
                if !success {
                    let error = final_error.unwrap_or_else(|| "the request kept failing".to_owned());
                    self.transcript.notice(format!("Gave up after {attempt} retries: {error}"), Role::Error);
                }
            }
            SessionOnlyEvent::ModelFallback { from, to, error_message, skipped } => match skipped {
                Some(reason) => {
                    self.transcript.notice(format!("Fallback model {to} is not usable: {reason}"), Role::Warning);
                }
                None => {
                    // The failed answer gives way to the fallback's, as it does to a retry's.
                    self.transcript.drop_failed_answer();
                    let notice = format!("{from} failed ({error_message}); continuing with {to}");
                    self.transcript.notice(notice, Role::Warning);
                }
            },
            _ => {}
        }
    }
}
