//! The unified LLM layer (pi-ai): models, the provider contract and registry, and the providers.

pub mod model;
pub mod provider;
pub mod stream;

pub use model::{InvalidThinkingLevel, Model, ModelCost, ThinkingLevel};
pub use provider::{ApiProvider, LlmContext, ProviderRegistry, StreamOptions, ToolSpec, empty_assistant_message, error_stream};
pub use stream::{AssistantMessageSender, AssistantMessageStream};
