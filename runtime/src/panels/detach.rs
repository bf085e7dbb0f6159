//! Detaching old conversation (seed 003, step 2): when the live conversation is long enough, its oldest
//! complete turns move into a frozen history panel. All four limits must hold: the chunk has at least
//! `chunk_min_messages` messages and `chunk_min_tokens` tokens, and what stays live has at least
//! `keep_min_messages` and `keep_min_tokens`. The cut is made where a user turns starts, so no tool call is
//! separated from its result.

use crate::compaction::estimate_tokens;
use crate::protocol::AgentMessage;

/// The four limits, Context Pilot's values by default.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DetachLimits {
    pub chunk_min_messages: usize,
    pub chunk_min_tokens: u64,
    pub keep_min_messages: usize,
    pub keep_min_tokens: u64,
}

impl Default for DetachLimits {
    fn default() -> Self {
        Self { chunk_min_messages: 25, chunk_min_tokens: 5_000, keep_min_messages: 25, keep_min_tokens: 7_500 }
    }
}

/// How many of the oldest `messages` to detach (the smallest chunk that meets the chunk limits and ends at
/// a turn boundary), or `None` when no cut meets all four limits.
pub fn detach_point(messages: &[AgentMessage], limits: &DetachLimits) -> Option<usize> {
    let tokens: Vec<u64> = messages.iter().map(estimate_tokens).collect();
    let total: u64 = tokens.iter().sum();
    let mut chunk_tokens = 0;
    for (cut, message) in messages.iter().enumerate() {
        let boundary = cut > 0 && matches!(message, AgentMessage::User(_));
        if boundary && cut >= limits.chunk_min_messages && chunk_tokens >= limits.chunk_min_tokens {
            // The first cut that makes a big enough chunk; a later one would only leave less live.
            let keeps_enough =
                messages.len() - cut >= limits.keep_min_messages && total - chunk_tokens >= limits.keep_min_tokens;
            return keeps_enough.then_some(cut);
        }
        chunk_tokens += tokens[cut];
    }
    None
}
