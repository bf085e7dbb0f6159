//! The unified LLM layer (pi-ai): models, the provider contract and registry, and the providers.

pub mod anthropic_messages;
pub mod azure_openai_responses;
pub mod bedrock_converse;
mod blocks;
pub mod catalog;
pub mod error_kind;
pub mod github_copilot;
pub mod google_generative_ai;
pub mod google_vertex;
mod http_send;
pub mod mistral_conversations;
pub mod model;
pub mod oauth;
pub mod openai_codex_responses;
pub mod openai_completions;
pub mod openai_responses;
mod openai_sdk_errors;
mod output_limit;
pub mod partial_json;
mod pi15;
pub mod provider;
pub mod record;
pub mod replay;
pub mod scripted;
pub mod stream;
pub mod streaming_arguments;
pub mod structured_output;
mod thinking;
pub mod transport;

use std::sync::Arc;

pub use anthropic_messages::AnthropicMessagesProvider;
pub use azure_openai_responses::AzureOpenAiResponsesProvider;
pub use bedrock_converse::BedrockConverseProvider;
pub use error_kind::{ProviderErrorKind, classify, is_context_overflow, is_retryable_error};
pub use google_generative_ai::GoogleGenerativeAiProvider;
pub use google_vertex::GoogleVertexProvider;
pub use mistral_conversations::MistralConversationsProvider;
pub use model::{InvalidThinkingLevel, Model, ModelCost, ThinkingLevel};
pub use openai_codex_responses::OpenAiCodexResponsesProvider;
pub use openai_completions::OpenAiCompletionsProvider;
pub use openai_responses::OpenAiResponsesProvider;
pub use partial_json::parse_streaming_json;
pub use provider::{
    ApiProvider, LlmContext, PayloadHook, ProviderRegistry, ProviderRetry, StreamOptions, ThinkingBudgets, ToolSpec,
    empty_assistant_message, error_stream,
};
pub use replay::{NO_RESULT_TEXT, transform_messages};
pub use scripted::{ScriptedBlock, ScriptedProvider, ScriptedRequest, ScriptedResponse};
pub use stream::{AssistantMessageSender, AssistantMessageStream};

/// A registry holding every built-in provider.
pub fn default_registry() -> ProviderRegistry {
    let mut registry = ProviderRegistry::new();
    registry.register(Arc::new(OpenAiCompletionsProvider::new()));
    registry.register(Arc::new(AnthropicMessagesProvider::new()));
    registry.register(Arc::new(OpenAiResponsesProvider::new()));
    registry.register(Arc::new(GoogleGenerativeAiProvider::new()));
    registry.register(Arc::new(AzureOpenAiResponsesProvider::new()));
    registry.register(Arc::new(MistralConversationsProvider::new()));
    registry.register(Arc::new(GoogleVertexProvider::new()));
    registry.register(Arc::new(BedrockConverseProvider::new()));
    registry.register(Arc::new(OpenAiCodexResponsesProvider::new()));
    registry
}
