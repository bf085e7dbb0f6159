//! What one request under the panels strategy held, for the user: per-panel tokens and prefix-cache outcome,
//! the conversation's size, and the panels' cost. Sent as a `context_panels` event in `--mode json` and RPC,
//! and returned by RPC `get_session_stats` under `contextPanels`.

use serde::{Deserialize, Serialize};

/// One panel's share of a request.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PanelReport {
    pub id: String,
    pub header: String,
    pub tokens: u64,
    /// It and every panel before it were sent unchanged last time (a prompt-cache hit).
    pub cache_hit: bool,
    /// Dollars, at the model's cache-read price on a hit, else its cache-write (Anthropic) or input price.
    pub cost: f64,
    /// When its content last changed (ms since the epoch); panels are sent oldest first.
    pub last_refresh_ms: i64,
}

/// The latest request's context.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextReport {
    /// Requests built with panels in this process.
    pub requests: u64,
    /// In the order they were sent.
    pub panels: Vec<PanelReport>,
    pub panel_tokens: u64,
    pub cache_hit_tokens: u64,
    pub cache_miss_tokens: u64,
    /// Dollars for this request's panels.
    pub request_cost: f64,
    /// Dollars for panels since the process started.
    pub total_cost: f64,
    /// Live conversation messages sent (after deletions, before the API's cleaning).
    pub conversation_messages: usize,
    pub conversation_tokens: u64,
    /// Messages moved into history panels.
    pub detached_messages: usize,
}
