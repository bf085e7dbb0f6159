//! The agent loop (pi-agent-core): [`Agent`], [`run_agent_loop`] / [`agent_loop`], tool execution in
//! sequential and parallel modes, argument validation with coercion, steering and follow-up queues.

mod config;
mod decide;
mod queue;
mod run_loop;
mod state;
mod stateful;
mod stream_response;
mod tool_calls;
mod validation;

#[cfg(test)]
mod tests_agent;
#[cfg(test)]
mod tests_loop;
#[cfg(test)]
mod tests_steps;
#[cfg(test)]
mod tests_support;
#[cfg(test)]
mod tests_tools;

pub use config::{
    AfterToolCallContext, AfterToolCallFn, AfterToolCallResult, AgentContext, AgentEventSink, AgentLoopConfig,
    BeforeToolCallContext, BeforeToolCallFn, BeforeToolCallResult, BoxFuture, ConvertToLlmFn, GetApiKeyFn, HookError,
    QueueMode, QueuePollFn, TransformContextFn, default_convert_to_llm,
};
pub use decide::{LoopState, Outcome, Step, UnexpectedOutcome};
pub use run_loop::{
    AgentEventStream, AgentLoopError, agent_loop, agent_loop_continue, run_agent_loop, run_agent_loop_continue,
};
pub use state::{AgentError, AgentOptions, AgentState, PromptInput};
pub use stateful::{Agent, StepReport, StepRequest, StepWork, Subscription, WeakAgent};
pub use tool_calls::{BLOCKED_TEXT, SKIPPED_TEXT};
pub use validation::{ToolArgumentsError, validate_tool_arguments};
