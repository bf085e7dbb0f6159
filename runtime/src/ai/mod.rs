//! The unified LLM layer (pi-ai): models, the provider contract and registry, and the providers.

pub mod model;
pub mod openai_completions;
pub mod provider;
pub mod scripted;
pub mod stream;

use std::sync::Arc;

pub use model::{InvalidThinkingLevel, Model, ModelCost, ThinkingLevel};
pub use openai_completions::OpenAiCompletionsProvider;
pub use provider::{
    ApiProvider, LlmContext, ProviderRegistry, StreamOptions, ToolSpec, empty_assistant_message, error_stream,
};
pub use scripted::{ScriptedBlock, ScriptedProvider, ScriptedRequest, ScriptedResponse};
pub use stream::{AssistantMessageSender, AssistantMessageStream};

/// A registry holding every built-in provider.
pub fn default_registry() -> ProviderRegistry {
    let mut registry = ProviderRegistry::new();
    registry.register(Arc::new(OpenAiCompletionsProvider::new()));
    registry
}
