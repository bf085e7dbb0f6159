//! A model as pi describes it (catalog entries and models.json), thinking levels, and cost calculation.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Serialize};

use crate::protocol::{PiCompat, Usage};

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

/// Reasoning effort, from `off` to `xhigh` (pi 0.73.1) or `max` (pi 1.5).
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
    /// pi 1.5's seventh level; unknown at level 0.73.
    Max,
}

impl ThinkingLevel {
    /// pi 0.73.1's levels, lowest first.
    pub const ALL: [ThinkingLevel; 6] = [Self::Off, Self::Minimal, Self::Low, Self::Medium, Self::High, Self::Xhigh];
    /// pi 1.5's levels, lowest first: 0.73.1's and `max`.
    pub const ALL_V1_5: [ThinkingLevel; 7] =
        [Self::Off, Self::Minimal, Self::Low, Self::Medium, Self::High, Self::Xhigh, Self::Max];

    /// The levels the pi release `pi_compat` knows, lowest first.
    pub fn levels(pi_compat: PiCompat) -> &'static [ThinkingLevel] {
        if pi_compat.is_v1_5() { &Self::ALL_V1_5 } else { &Self::ALL }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Off => "off",
            Self::Minimal => "minimal",
            Self::Low => "low",
            Self::Medium => "medium",
            Self::High => "high",
            Self::Xhigh => "xhigh",
            Self::Max => "max",
        }
    }

    /// The level named `text` among those the pi release `pi_compat` knows (`max` only from 1.5 on).
    pub fn parse_at(text: &str, pi_compat: PiCompat) -> Result<Self, InvalidThinkingLevel> {
        Self::levels(pi_compat)
            .iter()
            .copied()
            .find(|level| level.as_str() == text)
            .ok_or_else(|| InvalidThinkingLevel(text.to_owned(), pi_compat))
    }

    /// The level named `text` in any pi release (for data such as a model's thinking-level map, which
    /// names `max` whatever the level of the run).
    pub fn from_name(text: &str) -> Option<Self> {
        Self::ALL_V1_5.into_iter().find(|level| level.as_str() == text)
    }
}

impl fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The text is not one of the levels the run's pi release knows: `off, minimal, low, medium, high, xhigh`,
/// and from pi 1.5 on `max`.
#[derive(Debug, Clone, thiserror::Error)]
#[error("invalid thinking level \"{text}\" (expected one of: {names})", text = .0, names = level_names(*.1))]
pub struct InvalidThinkingLevel(pub String, pub PiCompat);

/// The level names of `pi_compat`'s release, comma-separated.
fn level_names(pi_compat: PiCompat) -> String {
    ThinkingLevel::levels(pi_compat).iter().map(|level| level.as_str()).collect::<Vec<_>>().join(", ")
}

impl FromStr for ThinkingLevel {
    type Err = InvalidThinkingLevel;

    /// A level pi 0.73.1 knows (`max` is refused: use [`ThinkingLevel::parse_at`] where the run's level
    /// is known).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::parse_at(s, PiCompat::V0_73)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn max_is_a_level_of_pi_1_5_only() {
        assert_eq!(ThinkingLevel::levels(PiCompat::V0_73).last(), Some(&ThinkingLevel::Xhigh));
        assert_eq!(ThinkingLevel::levels(PiCompat::V1_5).last(), Some(&ThinkingLevel::Max));
        assert!(ThinkingLevel::Max > ThinkingLevel::Xhigh);
        assert_eq!(ThinkingLevel::parse_at("max", PiCompat::V1_5).ok(), Some(ThinkingLevel::Max));
        let refused = "max".parse::<ThinkingLevel>().err().map(|error| error.to_string());
        assert_eq!(
            refused.as_deref(),
            Some("invalid thinking level \"max\" (expected one of: off, minimal, low, medium, high, xhigh)")
        );
        let at_1_5 = ThinkingLevel::parse_at("huge", PiCompat::V1_5).err().map(|error| error.to_string());
        assert_eq!(
            at_1_5.as_deref(),
            Some("invalid thinking level \"huge\" (expected one of: off, minimal, low, medium, high, xhigh, max)")
        );
        assert_eq!(ThinkingLevel::from_name("max"), Some(ThinkingLevel::Max));
        assert_eq!(serde_json::to_string(&ThinkingLevel::Max).ok().as_deref(), Some("\"max\""));
    }
}
