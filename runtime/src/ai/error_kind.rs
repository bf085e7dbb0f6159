//! Typed classification of provider failures, so retries and compaction decide from types: the kind a
//! provider knew (HTTP status, connection failure), else pi's text rules (its context-overflow
//! patterns, the usage-over-window rule, and its retryable-error pattern).

use std::sync::OnceLock;
use std::time::Duration;

use regex::{Regex, RegexSet};

use crate::protocol::{AssistantMessage, StopReason};

/// What kind of failure ended an assistant message.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ProviderErrorKind {
    /// The key is missing, wrong or lacks permission (401, 403).
    Authentication,
    /// Too many requests (429); the server may say how long to wait.
    RateLimit { retry_after: Option<Duration> },
    /// The prompt does not fit the model's context window.
    ContextOverflow,
    /// The provider failed or is overloaded (5xx, overloaded errors).
    Server,
    /// No connection, a dropped connection, or a stall.
    Network,
    /// The provider rejected the request (other 4xx).
    InvalidRequest,
    /// The caller cancelled.
    Aborted,
}

impl ProviderErrorKind {
    /// The kind an HTTP status implies.
    pub fn from_status(status: u16, retry_after: Option<Duration>) -> Self {
        match status {
            401 | 403 => Self::Authentication,
            429 => Self::RateLimit { retry_after },
            413 => Self::ContextOverflow,
            500.. => Self::Server,
            _ => Self::InvalidRequest,
        }
    }

    /// Whether trying again later can help (rate limits, server and network failures).
    pub fn is_retryable(self) -> bool {
        matches!(self, Self::RateLimit { .. } | Self::Server | Self::Network)
    }
}

/// pi's context-overflow patterns (`utils/overflow.ts`), matched case-insensitively.
const OVERFLOW_PATTERNS: [&str; 18] = [
    r"prompt is too long",
    r"input is too long for requested model",
    r"exceeds the context window",
    r"input token count.*exceeds the maximum",
    r"maximum prompt length is \d+",
    r"reduce the length of the messages",
    r"maximum context length is \d+ tokens",
    r"exceeds the limit of \d+",
    r"exceeds the available context size",
    r"greater than the context length",
    r"context window exceeds limit",
    r"exceeded model token limit",
    r"too large for model with \d+ maximum context length",
    r"model_context_window_exceeded",
    r"context[_ ]length[_ ]exceeded",
    r"too many tokens",
    r"token limit exceeded",
    r"^4(00|13)\s*(status code)?\s*\(no body\)",
];

/// pi 0.73.1's texts that are never an overflow, whatever else they say (`Throttling error: Too many tokens`
/// from Bedrock is a rate limit).
const NON_OVERFLOW_PATTERN: &str = r"(?i)^(Throttling error|Service unavailable):|rate limit|too many requests";

/// pi's rule for errors worth retrying (agent-session's `_isRetryableError`).
const RETRYABLE_PATTERN: &str = r"(?i)overloaded|rate.?limit|too many requests|429|500|502|503|504|service.?unavailable|server error|internal error|connection.?error|connection.?refused|other side closed|fetch failed|upstream.?connect|reset before headers|terminated|retry delay";

fn overflow_patterns() -> Option<&'static RegexSet> {
    static SET: OnceLock<Option<RegexSet>> = OnceLock::new();
    SET.get_or_init(|| RegexSet::new(OVERFLOW_PATTERNS.iter().map(|p| format!("(?i){p}"))).ok()).as_ref()
}

fn non_overflow_pattern() -> Option<&'static Regex> {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    PATTERN.get_or_init(|| Regex::new(NON_OVERFLOW_PATTERN).ok()).as_ref()
}

fn retryable_pattern() -> Option<&'static Regex> {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    PATTERN.get_or_init(|| Regex::new(RETRYABLE_PATTERN).ok()).as_ref()
}

/// pi's `isContextOverflow`: an error whose text matches an overflow pattern, or a successful answer
/// whose input (plus cache reads) exceeds `context_window`.
pub fn is_context_overflow(message: &AssistantMessage, context_window: Option<u64>) -> bool {
    match message.stop_reason {
        StopReason::Error => {
            message.error_kind == Some(ProviderErrorKind::ContextOverflow)
                || message.error_message.as_deref().is_some_and(|text| {
                    !non_overflow_pattern().is_some_and(|pattern| pattern.is_match(text))
                        && overflow_patterns().is_some_and(|set| set.is_match(text))
                })
        }
        StopReason::Stop => {
            context_window.is_some_and(|window| message.usage.input + message.usage.cache_read > window)
        }
        _ => false,
    }
}

/// pi's retry rule: an error with a text, not an overflow, and either a retryable kind or a text that
/// matches pi's pattern.
pub fn is_retryable_error(message: &AssistantMessage, context_window: Option<u64>) -> bool {
    if message.stop_reason != StopReason::Error || is_context_overflow(message, context_window) {
        return false;
    }
    let Some(text) = message.error_message.as_deref().filter(|t| !t.is_empty()) else { return false };
    message.error_kind.is_some_and(ProviderErrorKind::is_retryable)
        || retryable_pattern().is_some_and(|pattern| pattern.is_match(text))
}

/// The kind of failure `message` carries: the provider's own verdict first (overflow text wins over a
/// plain 400), then pi's text rules; `None` for a message that did not fail.
pub fn classify(message: &AssistantMessage, context_window: Option<u64>) -> Option<ProviderErrorKind> {
    if message.stop_reason == StopReason::Aborted {
        return Some(ProviderErrorKind::Aborted);
    }
    if is_context_overflow(message, context_window) {
        return Some(ProviderErrorKind::ContextOverflow);
    }
    if message.stop_reason != StopReason::Error {
        return None;
    }
    if let Some(kind) = message.error_kind {
        return Some(kind);
    }
    let text = message.error_message.as_deref().unwrap_or("").to_ascii_lowercase();
    let kind = if text.starts_with("401") || text.starts_with("403") || text.contains("api key") {
        ProviderErrorKind::Authentication
    } else if text.contains("429") || text.contains("rate limit") || text.contains("too many requests") {
        ProviderErrorKind::RateLimit { retry_after: None }
    } else if ["connection", "terminated", "timed out", "fetch failed", "other side closed"]
        .iter()
        .any(|needle| text.contains(needle))
    {
        ProviderErrorKind::Network
    } else if text.starts_with('4') {
        ProviderErrorKind::InvalidRequest
    } else {
        ProviderErrorKind::Server
    };
    Some(kind)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::Usage;

    fn failed(text: &str) -> AssistantMessage {
        AssistantMessage {
            stop_reason: StopReason::Error,
            error_message: Some(text.to_owned()),
            ..AssistantMessage::default()
        }
    }

    #[test]
    fn overflow_follows_pi_patterns_and_the_usage_rule() {
        assert!(is_context_overflow(&failed("prompt is too long: 213462 tokens > 200000 maximum"), None));
        assert!(is_context_overflow(&failed("400 status code (no body)"), None));
        assert!(is_context_overflow(&failed("Error: Context_Length_Exceeded"), None));
        assert!(!is_context_overflow(&failed("429 rate limit"), None));
        // pi 0.73.1's exceptions: a Bedrock throttle that mentions tokens is no overflow.
        assert!(!is_context_overflow(&failed("Throttling error: Too many tokens, slow down."), None));
        assert!(!is_context_overflow(&failed("too many tokens: rate limit reached"), None));
        assert!(is_context_overflow(&failed("Validation error: Input is too long for requested model."), None));
        let mut answered = AssistantMessage {
            usage: Usage { input: 900, cache_read: 200, ..Usage::default() },
            ..AssistantMessage::default()
        };
        assert!(is_context_overflow(&answered, Some(1000)));
        assert!(!is_context_overflow(&answered, Some(1100)));
        answered.usage.cache_read = 0;
        assert!(!is_context_overflow(&answered, Some(1000)));
        let typed = AssistantMessage { error_kind: Some(ProviderErrorKind::ContextOverflow), ..failed("413") };
        assert!(is_context_overflow(&typed, None));
    }

    #[test]
    fn retryable_errors_follow_pi_and_exclude_overflow() {
        assert!(is_retryable_error(&failed("429 rate limit"), None));
        assert!(is_retryable_error(&failed("Overloaded"), None));
        assert!(is_retryable_error(&failed("terminated"), None));
        assert!(!is_retryable_error(&failed("400 invalid model"), None));
        assert!(
            !is_retryable_error(&failed("prompt is too long: 500 tokens"), None),
            "an overflow is compacted, not retried"
        );
        assert!(!is_retryable_error(&failed(""), None));
        let typed = AssistantMessage { error_kind: Some(ProviderErrorKind::Network), ..failed("socket closed") };
        assert!(is_retryable_error(&typed, None));
    }

    #[test]
    fn classification_prefers_the_provider_kind_and_falls_back_to_text() {
        let typed = AssistantMessage {
            error_kind: Some(ProviderErrorKind::RateLimit { retry_after: Some(Duration::from_secs(3)) }),
            ..failed("429 slow down")
        };
        assert_eq!(
            classify(&typed, None),
            Some(ProviderErrorKind::RateLimit { retry_after: Some(Duration::from_secs(3)) })
        );
        assert_eq!(classify(&failed("401 invalid x-api-key"), None), Some(ProviderErrorKind::Authentication));
        assert_eq!(classify(&failed("Connection error."), None), Some(ProviderErrorKind::Network));
        assert_eq!(classify(&failed("400 bad field"), None), Some(ProviderErrorKind::InvalidRequest));
        assert_eq!(classify(&failed("500 boom"), None), Some(ProviderErrorKind::Server));
        assert_eq!(classify(&failed("prompt is too long"), None), Some(ProviderErrorKind::ContextOverflow));
        let aborted = AssistantMessage { stop_reason: StopReason::Aborted, ..AssistantMessage::default() };
        assert_eq!(classify(&aborted, None), Some(ProviderErrorKind::Aborted));
        assert_eq!(classify(&AssistantMessage::default(), None), None);
        assert_eq!(ProviderErrorKind::from_status(503, None), ProviderErrorKind::Server);
        assert_eq!(ProviderErrorKind::from_status(403, None), ProviderErrorKind::Authentication);
    }
}
