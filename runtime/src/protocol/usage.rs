//! Token usage with cost, and the reasons an assistant message stops.

use serde::{Deserialize, Serialize};

use super::js_number;

/// Dollar cost of one response, split like [`Usage`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    #[serde(with = "js_number")]
    pub input: f64,
    #[serde(with = "js_number")]
    pub output: f64,
    #[serde(rename = "cacheRead", with = "js_number")]
    pub cache_read: f64,
    #[serde(rename = "cacheWrite", with = "js_number")]
    pub cache_write: f64,
    #[serde(with = "js_number")]
    pub total: f64,
    /// Whether `total` came from the provider's own figure (pi 1.5 reports it; absent at level 0.73).
    #[serde(rename = "totalFromProvider", default, skip_serializing_if = "Option::is_none")]
    pub total_from_provider: Option<bool>,
}

/// Tokens of one response. `input` excludes cache reads; `totalTokens` is the sum of all four.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize, Deserialize)]
pub struct Usage {
    pub input: u64,
    pub output: u64,
    #[serde(rename = "cacheRead")]
    pub cache_read: u64,
    #[serde(rename = "cacheWrite")]
    pub cache_write: u64,
    /// Reasoning tokens the provider reported (pi 1.5 reports it once usage arrives; absent at level 0.73).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reasoning: Option<u64>,
    #[serde(rename = "totalTokens")]
    pub total_tokens: u64,
    pub cost: Cost,
}

/// Why an assistant message ended.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[non_exhaustive]
pub enum StopReason {
    #[default]
    #[serde(rename = "stop")]
    Stop,
    #[serde(rename = "length")]
    Length,
    #[serde(rename = "toolUse")]
    ToolUse,
    #[serde(rename = "error")]
    Error,
    #[serde(rename = "aborted")]
    Aborted,
    /// A message still streaming (pi 1.5's partial messages; 0.73 shows `stop` until the end).
    #[serde(rename = "pending")]
    Pending,
}

impl StopReason {
    /// The wire name (`stop`, `toolUse`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Stop => "stop",
            Self::Length => "length",
            Self::ToolUse => "toolUse",
            Self::Error => "error",
            Self::Aborted => "aborted",
            Self::Pending => "pending",
        }
    }
}
