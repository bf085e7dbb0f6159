//! Finishing a run that a crash cut short (`serve` after a restart): the model call that was running is made
//! again; a tool call that was running is not (it may have done its work already) but gets an error result
//! saying it was interrupted, and the model carries on from there.

use super::AgentSession;
use crate::agent::{AgentError, PromptInput};
use crate::protocol::{AgentMessage, StopReason, ToolResultMessage, UserContent, now_ms};

/// The result a tool call gets when a crash interrupted it.
pub const TOOL_INTERRUPTED: &str = "Tool interrupted: the agent stopped while this call ran, so its outcome is unknown; it was not run again. \
     Check its effects before repeating it.";

impl AgentSession {
    /// Carries on with the run the session file shows unfinished: tool calls of the last answer without a
    /// result get [`TOOL_INTERRUPTED`] (recorded, never run again) and the loop continues, which calls the
    /// model again when the last message is not a finished answer. Returns `false` when the last answer was
    /// complete and nothing needed doing.
    pub async fn resume_interrupted(&self) -> Result<bool, AgentError> {
        let messages = self.agent.messages();
        let Some(answer_at) = messages.iter().rposition(|message| matches!(message, AgentMessage::Assistant(_))) else {
            // No answer yet: the first model call was cut short.
            return self.continue_interrupted(&messages).await;
        };
        let Some(AgentMessage::Assistant(answer)) = messages.get(answer_at) else { return Ok(false) };
        let answered: Vec<&str> = messages[answer_at + 1..]
            .iter()
            .filter_map(|message| match message {
                AgentMessage::ToolResult(result) => Some(result.tool_call_id.as_str()),
                _ => None,
            })
            .collect();
        let missing: Vec<ToolResultMessage> = answer
            .tool_calls()
            .filter(|call| !answered.contains(&call.id.as_str()))
            .map(|call| ToolResultMessage {
                tool_call_id: call.id.clone(),
                tool_name: call.name.clone(),
                content: vec![UserContent::text(TOOL_INTERRUPTED)],
                details: None,
                is_error: true,
                duration_ms: None,
                timestamp: now_ms(),
            })
            .collect();
        let finished = answer_at + 1 == messages.len()
            && answer.tool_calls().next().is_none()
            && !matches!(answer.stop_reason, StopReason::Error);
        if finished {
            return Ok(false);
        }
        if missing.is_empty() {
            return self.continue_interrupted(&messages).await;
        }
        // The results start the continued run, so they are announced (`message_start`/`message_end`) and
        // saved like any message before the model is called again.
        let results = missing.into_iter().map(AgentMessage::ToolResult).collect();
        self.reset_cancel();
        self.run_with_retry(self.agent.prompt(PromptInput::Messages(results))).await?;
        self.check_compaction_after_run().await?;
        Ok(true)
    }

    async fn continue_interrupted(&self, messages: &[AgentMessage]) -> Result<bool, AgentError> {
        match messages.last() {
            None => Ok(false),
            // A failed answer is the last message: the run ended (a retry would have been recorded).
            Some(AgentMessage::Assistant(_)) => Ok(false),
            Some(_) => {
                self.reset_cancel();
                self.run_with_retry(self.agent.continue_()).await?;
                self.check_compaction_after_run().await?;
                Ok(true)
            }
        }
    }
}
