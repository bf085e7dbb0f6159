//! The agent's request settings: keys, hooks and transport options that apply from the next model call on
//! (the transcript and run state are in the parent module).

use super::{Agent, lock};
use crate::agent::config::{AfterToolCallFn, BeforeToolCallFn, ConvertToLlmFn, GetApiKeyFn, TransformContextFn};
use crate::definition::ToolExecutionMode;

impl Agent {
    pub fn set_tool_execution(&self, mode: ToolExecutionMode) {
        lock(&self.inner.settings).tool_execution = mode;
    }

    pub fn set_api_key(&self, key: Option<String>) {
        lock(&self.inner.settings).api_key = key;
    }

    pub fn set_get_api_key(&self, lookup: Option<GetApiKeyFn>) {
        lock(&self.inner.settings).get_api_key = lookup;
    }

    /// The per-call key lookup, if one is set (the session's own model calls use it too).
    pub fn get_api_key(&self) -> Option<GetApiKeyFn> {
        lock(&self.inner.settings).get_api_key.clone()
    }

    /// The key set for the current model, if any (the per-call lookup may still supply another).
    pub fn api_key(&self) -> Option<String> {
        lock(&self.inner.settings).api_key.clone()
    }

    pub fn set_convert_to_llm(&self, convert: Option<ConvertToLlmFn>) {
        lock(&self.inner.settings).convert_to_llm = convert;
    }

    pub fn set_transform_context(&self, transform: Option<TransformContextFn>) {
        lock(&self.inner.settings).transform_context = transform;
    }

    pub fn set_before_tool_call(&self, hook: Option<BeforeToolCallFn>) {
        lock(&self.inner.settings).before_tool_call = hook;
    }

    pub fn set_after_tool_call(&self, hook: Option<AfterToolCallFn>) {
        lock(&self.inner.settings).after_tool_call = hook;
    }

    pub fn set_on_payload(&self, hook: Option<crate::ai::PayloadHook>) {
        lock(&self.inner.settings).on_payload = hook;
    }

    pub fn set_session_id(&self, session_id: Option<String>) {
        lock(&self.inner.settings).session_id = session_id;
    }

    /// The SDK-level timeout and retries of the next requests (pi's `retry.provider`).
    pub fn set_provider_retry(&self, retry: crate::ai::ProviderRetry) {
        lock(&self.inner.settings).provider_retry = retry;
    }

    /// The thinking-token budgets of the next requests (pi's `thinkingBudgets`).
    pub fn set_thinking_budgets(&self, budgets: crate::ai::ThinkingBudgets) {
        lock(&self.inner.settings).thinking_budgets = budgets;
    }
}
