//! pi's `compact`: ask the model for the history summary (and, when the cut splits a turn, a summary of
//! the turn's beginning, concurrently), then append the file manifest.

use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::prepare::CompactionPreparation;
use super::prompts::{
    SUMMARIZATION_PROMPT, SUMMARIZATION_SYSTEM_PROMPT, TURN_PREFIX_SUMMARIZATION_PROMPT, UPDATE_SUMMARIZATION_PROMPT,
    summarization_request, with_focus,
};
use super::serialize::serialize_agent_messages;
use crate::ai::{LlmContext, Model, ProviderRegistry, StreamOptions, ThinkingLevel};
use crate::protocol::{
    AgentMessage, AssistantContent, AssistantMessageEvent, Message, MessageContent, StopReason, UserContent,
    UserMessage, now_ms,
};

/// The history summary when the cut leaves nothing before the split turn.
pub const NO_PRIOR_HISTORY: &str = "No prior history.";

/// What a compaction produces; the caller stores it as a `compaction` entry.
#[derive(Debug, Clone, PartialEq)]
pub struct CompactionResult {
    /// The summary with the file manifest appended.
    pub summary: String,
    pub first_kept_entry_id: String,
    pub tokens_before: u64,
    /// `{"readFiles": [...], "modifiedFiles": [...]}`.
    pub details: Option<Value>,
}

/// Why a summary could not be produced.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CompactionError {
    /// The summarization call was cancelled.
    #[error("Compaction was cancelled")]
    Aborted,
    /// The model call for the history summary failed.
    #[error("Summarization failed: {0}")]
    Summarization(String),
    /// The model call for the split turn's beginning failed.
    #[error("Turn prefix summarization failed: {0}")]
    TurnPrefix(String),
}

/// The model a summary is asked from, and how.
#[derive(Clone, Copy)]
pub struct SummaryModel<'a> {
    pub model: &'a Model,
    pub registry: &'a ProviderRegistry,
    pub api_key: Option<&'a str>,
    /// Cancelling ends the call with [`CompactionError::Aborted`].
    pub cancel: &'a CancellationToken,
}

/// One summarization call's parameters.
pub(crate) struct SummaryCall<'a> {
    pub target: SummaryModel<'a>,
    pub max_tokens: u64,
    pub reasoning: Option<ThinkingLevel>,
}

/// Why one model call failed: cancelled, or an error text.
pub(crate) enum CallFailure {
    Aborted,
    Error(String),
}

/// Sends one user message with the summarization system prompt and returns the reply's text blocks joined
/// with `\n`.
pub(crate) async fn complete_text(call: &SummaryCall<'_>, prompt: String) -> Result<String, CallFailure> {
    let context = LlmContext {
        system_prompt: SUMMARIZATION_SYSTEM_PROMPT.to_owned(),
        messages: vec![Message::User(UserMessage {
            content: MessageContent::Blocks(vec![UserContent::text(prompt)]),
            timestamp: now_ms(),
        })],
        tools: Vec::new(),
    };
    let options = StreamOptions {
        api_key: call.target.api_key.map(str::to_owned),
        reasoning: call.reasoning,
        max_tokens: Some(call.max_tokens),
        cancel: call.target.cancel.clone(),
        ..StreamOptions::default()
    };
    let mut stream = call.target.registry.stream(call.target.model, &context, options);
    while let Some(event) = stream.next().await {
        match event {
            AssistantMessageEvent::Done { message, .. } => {
                let texts: Vec<&str> = message
                    .content
                    .iter()
                    .filter_map(|block| match block {
                        AssistantContent::Text(text) => Some(text.text.as_str()),
                        _ => None,
                    })
                    .collect();
                return Ok(texts.join("\n"));
            }
            AssistantMessageEvent::Error { error, .. } => {
                if error.stop_reason == StopReason::Aborted || call.target.cancel.is_cancelled() {
                    return Err(CallFailure::Aborted);
                }
                return Err(CallFailure::Error(error.error_message.unwrap_or_else(|| "Unknown error".to_owned())));
            }
            _ => {}
        }
    }
    if call.target.cancel.is_cancelled() {
        Err(CallFailure::Aborted)
    } else {
        Err(CallFailure::Error("the response ended without a result".to_owned()))
    }
}

fn reasoning_for(model: &Model) -> Option<ThinkingLevel> {
    model.reasoning.then_some(ThinkingLevel::High)
}

/// The history summary: a fresh one, or an update of `previous_summary`, with `maxTokens = 0.8 × reserve`.
pub async fn generate_summary(
    target: SummaryModel<'_>,
    messages: &[AgentMessage],
    reserve_tokens: u64,
    custom_instructions: Option<&str>,
    previous_summary: Option<&str>,
) -> Result<String, CompactionError> {
    let base = if previous_summary.is_some() { UPDATE_SUMMARIZATION_PROMPT } else { SUMMARIZATION_PROMPT };
    let instructions = with_focus(base, custom_instructions);
    let prompt = summarization_request(&serialize_agent_messages(messages), previous_summary, &instructions);
    let max_tokens = reserve_tokens * 4 / 5;
    let call = SummaryCall { target, max_tokens, reasoning: reasoning_for(target.model) };
    complete_text(&call, prompt).await.map_err(|failure| match failure {
        CallFailure::Aborted => CompactionError::Aborted,
        CallFailure::Error(message) => CompactionError::Summarization(message),
    })
}

/// The summary of a split turn's beginning, with `maxTokens = 0.5 × reserve`.
pub async fn generate_turn_prefix_summary(
    target: SummaryModel<'_>,
    messages: &[AgentMessage],
    reserve_tokens: u64,
) -> Result<String, CompactionError> {
    let prompt = summarization_request(&serialize_agent_messages(messages), None, TURN_PREFIX_SUMMARIZATION_PROMPT);
    let max_tokens = reserve_tokens / 2;
    let call = SummaryCall { target, max_tokens, reasoning: reasoning_for(target.model) };
    complete_text(&call, prompt).await.map_err(|failure| match failure {
        CallFailure::Aborted => CompactionError::Aborted,
        CallFailure::Error(message) => CompactionError::TurnPrefix(message),
    })
}

/// pi's `compact`: summarizes the prepared messages and returns what the `compaction` entry records.
pub async fn compact(
    preparation: &CompactionPreparation,
    model: &Model,
    registry: &ProviderRegistry,
    api_key: Option<&str>,
    custom_instructions: Option<&str>,
    cancel: &CancellationToken,
) -> Result<CompactionResult, CompactionError> {
    let reserve = preparation.settings.reserve_tokens;
    let previous = preparation.previous_summary.as_deref();
    let target = SummaryModel { model, registry, api_key, cancel };
    let mut summary = if preparation.is_split_turn && !preparation.turn_prefix_messages.is_empty() {
        let history_summary = async {
            if preparation.messages_to_summarize.is_empty() {
                Ok(NO_PRIOR_HISTORY.to_owned())
            } else {
                generate_summary(target, &preparation.messages_to_summarize, reserve, custom_instructions, previous)
                    .await
            }
        };
        let prefix_summary = generate_turn_prefix_summary(target, &preparation.turn_prefix_messages, reserve);
        let (history_summary, prefix_summary) = tokio::join!(history_summary, prefix_summary);
        format!("{}\n\n---\n\n**Turn Context (split turn):**\n\n{}", history_summary?, prefix_summary?)
    } else {
        generate_summary(target, &preparation.messages_to_summarize, reserve, custom_instructions, previous).await?
    };
    let lists = preparation.file_ops.file_lists();
    summary.push_str(&lists.format_tags());
    Ok(CompactionResult {
        summary,
        first_kept_entry_id: preparation.first_kept_entry_id.clone(),
        tokens_before: preparation.tokens_before,
        details: Some(lists.to_details()),
    })
}
