//! A model as pi describes it (catalog entries and models.json), thinking levels, and cost calculation.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::protocol::Usage;

/// Dollars per million tokens.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelCost {
    pub input: f64,
    pub output: f64,
    #[serde(rename = "cacheRead", default)]
    pub cache_read: f64,
    #[serde(rename = "cacheWrite", default)]
    pub cache_write: f64,
}

/// One model of one provider, with everything a provider needs to talk to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Model {
    pub id: String,
    pub name: String,
    /// Wire protocol: `openai-completions`, `anthropic-messages`, `openai-responses`, `google-generative-ai`,
    /// `google-vertex`.
    pub api: String,
    pub provider: String,
    pub base_url: String,
    pub reasoning: bool,
    /// `text` and/or `image`.
    pub input: Vec<String>,
    pub cost: ModelCost,
    pub context_window: u64,
    pub max_tokens: u64,
    pub headers: Vec<(String, String)>,
    /// Provider-specific compatibility switches (models.json `compat`), kept as JSON.
    pub compat: Option<serde_json::Value>,
}

impl Model {
    /// A model with pi's models.json defaults (128000 context, 16384 max tokens, text input, zero cost).
    pub fn new(
        provider: impl Into<String>,
        id: impl Into<String>,
        api: impl Into<String>,
        base_url: impl Into<String>,
    ) -> Self {
        let id = id.into();
        Self {
            name: id.clone(),
            id,
            api: api.into(),
            provider: provider.into(),
            base_url: base_url.into(),
            reasoning: false,
            input: vec!["text".to_owned()],
            cost: ModelCost::default(),
            context_window: 128_000,
            max_tokens: 16_384,
            headers: Vec::new(),
            compat: None,
        }
    }

    /// Fills `usage.cost` from this model's prices.
    pub fn apply_cost(&self, usage: &mut Usage) {
        let per_token = |price: f64, tokens: u64| price / 1_000_000.0 * tokens as f64;
        usage.cost.input = per_token(self.cost.input, usage.input);
        usage.cost.output = per_token(self.cost.output, usage.output);
        usage.cost.cache_read = per_token(self.cost.cache_read, usage.cache_read);
        usage.cost.cache_write = per_token(self.cost.cache_write, usage.cache_write);
        usage.cost.total = usage.cost.input + usage.cost.output + usage.cost.cache_read + usage.cost.cache_write;
    }

    pub fn supports_images(&self) -> bool {
        self.input.iter().any(|i| i == "image")
    }
}

/// Reasoning effort, from `off` to `xhigh`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ThinkingLevel {
    #[default]
    Off,
    Minimal,
    Low,
    Medium,
    High,
    Xhigh,
}

impl ThinkingLevel {
    pub const ALL: [ThinkingLevel; 6] = [Self::Off, Self::Minimal, Self::Low, Self::Medium, Self::High, Self::Xhigh];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
        }
    }
}

impl fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text was not one of `off, minimal, low, medium, high, xhigh`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid thinking level \"{0}\" (expected one of: off, minimal, low, medium, high, xhigh)")]
pub struct InvalidThinkingLevel(pub String);

impl FromStr for ThinkingLevel {
    type Err = InvalidThinkingLevel;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::ALL.into_iter().find(|l| l.as_str() == s).ok_or_else(|| InvalidThinkingLevel(s.to_owned()))
    }
}
