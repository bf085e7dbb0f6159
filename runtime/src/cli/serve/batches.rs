//! Batch runs over the API: one prompt in each of many repositories (`POST /v1/batches`), each in a session
//! of its own, at most `concurrency` at once; progress and each session's answer at `GET /v1/batches/{id}`.
//! The bodies here; pi-temporal's engine runs a batch as a parent workflow with the sessions' workflows as
//! its children, and an engine without batches of its own gets the server's ([`super::local_batches`]).

use std::path::PathBuf;

use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::api_error::ApiError;

/// The most repositories one batch takes.
pub const MAX_BATCH_REPOS: usize = 1000;
/// How many of a batch's sessions run at once when the request does not say.
pub const DEFAULT_BATCH_CONCURRENCY: u32 = 4;
/// The most sessions of one batch that run at once.
pub const MAX_BATCH_CONCURRENCY: u32 = 64;

/// `POST /v1/batches`.
#[derive(Debug, Clone, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BatchRequest {
    /// The prompt every session runs.
    pub prompt: String,
    /// The working directory of each session (absolute, under the server's roots).
    pub repos: Vec<PathBuf>,
    /// How many sessions run at once (default 4, at most 64).
    pub concurrency: Option<u32>,
}

impl BatchRequest {
    /// The request's concurrency, once its prompt and repositories were checked.
    pub fn checked(&self) -> Result<u32, ApiError> {
        if self.prompt.trim().is_empty() {
            return Err(ApiError::bad_request("prompt: expected the text every session runs"));
        }
        if self.repos.is_empty() || self.repos.len() > MAX_BATCH_REPOS {
            return Err(ApiError::bad_request(format!(
                "repos: expected 1 to {MAX_BATCH_REPOS} working directories, got {}",
                self.repos.len()
            )));
        }
        match self.concurrency.unwrap_or(DEFAULT_BATCH_CONCURRENCY) {
            concurrency @ 1..=MAX_BATCH_CONCURRENCY => Ok(concurrency),
            other => {
                Err(ApiError::bad_request(format!("concurrency: expected 1 to {MAX_BATCH_CONCURRENCY}, got {other}")))
            }
        }
    }
}

/// The answer to `POST /v1/batches`: the batch's id and its sessions, in the order of `repos`.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BatchStarted {
    pub id: String,
    pub sessions: Vec<BatchSessionRef>,
}

/// A session of a batch and the repository it works in.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BatchSessionRef {
    pub id: String,
    pub repo: String,
}

/// `GET /v1/batches/{id}`: the batch's progress and the answers so far.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BatchStatus {
    pub id: String,
    pub prompt: String,
    pub concurrency: u32,
    pub total: usize,
    pub queued: usize,
    pub running: usize,
    pub done: usize,
    pub failed: usize,
    pub sessions: Vec<BatchSessionStatus>,
}

/// Where a batch's session is.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum BatchItemStatus {
    /// Waiting for a place among the batch's `concurrency`.
    #[default]
    Queued,
    Running,
    /// Its run ended; the answer is its last.
    Done,
    /// Its run could not be carried out (`error` says why).
    Failed,
}

/// A session of a batch: where it is and, once done, its answer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BatchSessionStatus {
    pub id: String,
    pub repo: String,
    pub status: BatchItemStatus,
    /// The run's last answer: its text and `stopReason`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub answer: Option<BatchAnswer>,
    /// Why the session's run could not be carried out.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A session's last answer.
#[derive(Debug, Clone, Serialize, schemars::JsonSchema)]
pub struct BatchAnswer {
    pub text: String,
    #[serde(rename = "stopReason")]
    pub stop_reason: String,
}

impl BatchAnswer {
    /// The answer an assistant message (as pi writes it) gives: its text blocks joined, its `stopReason`.
    pub fn of(message: &serde_json::Value) -> Self {
        let blocks = message["content"].as_array().map(Vec::as_slice).unwrap_or_default();
        let text: String =
            blocks.iter().filter(|block| block["type"] == "text").filter_map(|block| block["text"].as_str()).collect();
        Self { text, stop_reason: message["stopReason"].as_str().unwrap_or_default().to_owned() }
    }

    /// The last answer in a session file (pi's JSONL lines), if it has one.
    pub fn last_in(session_file: &str) -> Option<Self> {
        session_file.lines().rev().find_map(|line| {
            let entry: serde_json::Value = serde_json::from_str(line).ok()?;
            entry.get("message").filter(|message| message["role"] == "assistant").map(Self::of)
        })
    }
}

impl BatchStatus {
    /// The status of batch `id` with `sessions`, the counts made from theirs.
    pub fn new(id: String, prompt: String, concurrency: u32, sessions: Vec<BatchSessionStatus>) -> Self {
        let count = |status| sessions.iter().filter(|session| session.status == status).count();
        let (queued, running, done, failed) = (
            count(BatchItemStatus::Queued),
            count(BatchItemStatus::Running),
            count(BatchItemStatus::Done),
            count(BatchItemStatus::Failed),
        );
        Self { id, prompt, concurrency, total: sessions.len(), queued, running, done, failed, sessions }
    }
}

/// 404 `batch_not_found`.
pub fn batch_not_found(id: &str) -> ApiError {
    ApiError::new(StatusCode::NOT_FOUND, "batch_not_found", format!("no batch {id}"))
}
