//! pi's own retry loop for the Codex endpoint (it does not use an SDK): up to three retries, waiting 1 s,
//! 2 s, then 4 s. A 429, 500, 502, 503 or 504 (or a body speaking of rate limits, overload, unavailability or
//! refused connections) is retried; so is any other failure, a failed connection included, unless it speaks
//! of a usage limit. No `retry-after` is honoured, and the call's own retry settings do not apply.

use std::time::Duration;

use regex::Regex;
use std::sync::OnceLock;
use tokio_util::sync::CancellationToken;

use super::errors::http_error;
use crate::ai::error_kind::ProviderErrorKind;
use crate::ai::http_send::{root_cause, shown_url};
use crate::ai::transport::{ABORTED, CONNECTION_ERROR, DecodeError, Failure, HttpRequest, TIMED_OUT};

/// Retries after the first attempt.
pub const MAX_RETRIES: u32 = 3;
/// The first wait; each retry doubles it.
const BASE_DELAY: Duration = Duration::from_secs(1);
/// Statuses retried whatever the body says.
const RETRYABLE_STATUSES: [u16; 5] = [429, 500, 502, 503, 504];
/// Body texts retried whatever the status.
const RETRYABLE_TEXT: &str = r"(?i)rate.?limit|overloaded|service.?unavailable|upstream.?connect|connection.?refused";
/// A failure whose message says this is not retried (pi's test, case-sensitive).
const USAGE_LIMIT_WORDS: &str = "usage limit";

/// Sends `request` until it is answered with a 2xx, retrying as pi does; the error of the last attempt
/// otherwise. Cancelling ends the wait at once.
pub(crate) async fn send(
    client: &reqwest::Client,
    request: &HttpRequest,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, Failure> {
    let mut attempt = 0u32;
    loop {
        if cancel.is_cancelled() {
            return Err(ABORTED.into());
        }
        let post = client.post(&request.url).headers(request.headers.clone()).body(request.body.clone());
        let sent = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ABORTED.into()),
            sent = tokio::time::timeout(request.response_timeout, post.send()) => sent,
        };
        let (error, retryable) = match sent {
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) => {
                let status = response.status();
                let reason = status.canonical_reason().unwrap_or_default();
                let text = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Err(ABORTED.into()),
                    text = tokio::time::timeout(request.idle_timeout, response.text()) => match text {
                        Ok(Ok(text)) => text,
                        Ok(Err(error)) => error.to_string(),
                        Err(_) => String::new(),
                    },
                };
                let read = http_error(status.as_u16(), reason, &text);
                let by_status = is_retryable_response(status.as_u16(), &text);
                let usage_limit = read.usage_limit || read.message.contains(USAGE_LIMIT_WORDS);
                (DecodeError { message: read.message, kind: read.kind }, by_status || !usage_limit)
            }
            Ok(Err(error)) => {
                let message = format!("{CONNECTION_ERROR} (POST {}: {})", shown_url(&request.url), root_cause(&error));
                (DecodeError { message, kind: Some(ProviderErrorKind::Network) }, true)
            }
            Err(_) => (DecodeError { message: TIMED_OUT.to_owned(), kind: Some(ProviderErrorKind::Network) }, true),
        };
        if attempt >= MAX_RETRIES || !retryable {
            return Err(Failure::Error(error));
        }
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ABORTED.into()),
            _ = tokio::time::sleep(retry_delay(attempt)) => {}
        }
        attempt += 1;
    }
}

/// The wait before retry `attempt + 1`.
fn retry_delay(attempt: u32) -> Duration {
    BASE_DELAY * 2u32.saturating_pow(attempt)
}

/// pi's test of a failed response: a retryable status, or a body that speaks of a passing problem.
fn is_retryable_response(status: u16, body: &str) -> bool {
    static PATTERN: OnceLock<Option<Regex>> = OnceLock::new();
    RETRYABLE_STATUSES.contains(&status)
        || PATTERN.get_or_init(|| Regex::new(RETRYABLE_TEXT).ok()).as_ref().is_some_and(|re| re.is_match(body))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_from_one_second() {
        let waits: Vec<u64> = (0..MAX_RETRIES).map(|attempt| retry_delay(attempt).as_secs()).collect();
        assert_eq!(waits, [1, 2, 4]);
    }

    #[test]
    fn responses_are_retried_by_status_or_by_words() {
        assert!(is_retryable_response(503, ""));
        assert!(is_retryable_response(429, "usage limit"));
        assert!(is_retryable_response(400, "upstream connect error"));
        assert!(is_retryable_response(418, "Rate-limit hit"));
        assert!(!is_retryable_response(400, "bad input"));
        assert!(!is_retryable_response(501, "not implemented"));
    }
}
