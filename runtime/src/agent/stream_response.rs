//! One LLM call of the loop: transformContext, convertToLlm, key lookup, then the provider's stream
//! turned into `message_start` / `message_update` / `message_end` events.

use tokio_util::sync::CancellationToken;

use super::config::{AgentContext, AgentEventSink, AgentLoopConfig};
use super::run_loop::AgentLoopError;
use crate::ai::{LlmContext, StreamOptions, ToolSpec, empty_assistant_message};
use crate::protocol::{AgentEvent, AgentMessage, AssistantMessage, AssistantMessageEvent, StopReason};

/// The error text when a provider's stream ends without `done` or `error`.
const STREAM_ENDED_EARLY: &str = "the model's response stream ended without a final event";

/// Streams the assistant's answer to `context` and returns the final message (which may carry
/// stopReason `error` or `aborted`). The caller appends it to the context.
pub(crate) async fn stream_assistant_response(
    context: &AgentContext,
    config: &AgentLoopConfig,
    cancel: &CancellationToken,
    sink: &dyn AgentEventSink,
) -> Result<AssistantMessage, AgentLoopError> {
    let messages = match &config.transform_context {
        Some(transform) => transform(context.messages.clone(), cancel.clone())
            .await
            .map_err(|error| AgentLoopError::Stage(error.message))?,
        None => context.messages.clone(),
    };
    let llm_context = LlmContext {
        system_prompt: context.system_prompt.clone(),
        messages: (config.convert_to_llm)(&messages),
        tools: context
            .tools
            .iter()
            .map(|tool| ToolSpec {
                name: tool.name().to_owned(),
                description: tool.description().to_owned(),
                parameters: tool.parameters().clone(),
            })
            .collect(),
    };
    let looked_up = match &config.get_api_key {
        Some(lookup) => match lookup(&config.model.provider).await {
            Ok(key) => key,
            Err(reason) => {
                let mut message = empty_assistant_message(&config.model);
                message.stop_reason = StopReason::Error;
                message.error_message = Some(reason);
                return Ok(finish(message, false, sink).await);
            }
        },
        None => None,
    };
    let options = StreamOptions {
        api_key: looked_up.filter(|key| !key.is_empty()).or_else(|| config.api_key.clone()),
        reasoning: config.reasoning,
        max_tokens: config.max_tokens,
        temperature: config.temperature,
        response_schema: config.response_schema.clone(),
        session_id: config.session_id.clone(),
        headers: config.headers.clone(),
        cancel: cancel.clone(),
        idle_timeout: config.idle_timeout,
        on_payload: config.on_payload.clone(),
        retry: config.provider_retry,
        thinking_budgets: config.thinking_budgets,
        pi_compat: config.pi_compat,
        user_agent: config.user_agent.clone(),
    };
    let requested = std::time::Instant::now();
    let mut stream = config.provider.stream(&config.model, &llm_context, options);
    let finish = |mut message: AssistantMessage, started: bool| {
        if config.pi_compat.is_v1_5() {
            message.duration_ms = Some(u64::try_from(requested.elapsed().as_millis()).unwrap_or(u64::MAX));
            let level = config.reasoning.map_or("off", |level| level.as_str());
            message.thinking_level = Some(level.to_owned());
        }
        finish(message, started, sink)
    };

    let mut started = false;
    let mut last_partial: Option<AssistantMessage> = None;
    while let Some(event) = stream.next().await {
        match event {
            AssistantMessageEvent::Start { partial } => {
                started = true;
                sink.emit(AgentEvent::MessageStart { message: AgentMessage::Assistant(partial.clone()) }).await;
                last_partial = Some(partial);
            }
            AssistantMessageEvent::Done { message, .. } | AssistantMessageEvent::Error { error: message, .. } => {
                return Ok(finish(message, started).await);
            }
            update => {
                // Updates before `start` have no message to update, as in pi.
                if started {
                    let partial = update.message().clone();
                    last_partial = Some(partial.clone());
                    let message = AgentMessage::Assistant(partial);
                    sink.emit(AgentEvent::MessageUpdate { message, assistant_message_event: update }).await;
                }
            }
        }
    }
    // The provider vanished without a terminal event: keep what arrived and report it.
    let mut message = last_partial.unwrap_or_else(|| empty_assistant_message(&config.model));
    message.stop_reason = if cancel.is_cancelled() { StopReason::Aborted } else { StopReason::Error };
    message.error_message = Some(STREAM_ENDED_EARLY.to_owned());
    Ok(finish(message, started).await)
}

async fn finish(message: AssistantMessage, started: bool, sink: &dyn AgentEventSink) -> AssistantMessage {
    if !started {
        sink.emit(AgentEvent::MessageStart { message: AgentMessage::Assistant(message.clone()) }).await;
    }
    match sink.emit_message_end(AgentMessage::Assistant(message.clone())).await {
        AgentMessage::Assistant(replaced) => replaced,
        _ => message,
    }
}
