//! Sending a provider request: one shared HTTP client (proxies from the environment), headers, and the POST
//! with the vendor SDKs' retry rules (408/409/429/5xx and failed connections, their backoff and the server's
//! `retry-after`). A failure names the URL (without credentials or query) and the cause.

use std::sync::OnceLock;
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio_util::sync::CancellationToken;

use super::error_kind::ProviderErrorKind;
use super::transport::{
    ABORTED_BEFORE_RESPONSE, CONNECTION_ERROR, DecodeError, Failure, HttpRequest, RetryRule, TIMED_OUT,
};

/// A shared client: one connection pool for the whole process, through the proxy the environment names.
pub fn http_client() -> Result<&'static reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            // Proxies come from HTTPS_PROXY / HTTP_PROXY / ALL_PROXY / NO_PROXY (either case), as Node's
            // environment proxy agent reads them for pi.
            reqwest::Client::builder().build().map_err(|e| format!("could not create the HTTP client: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Adds `name: value` pairs to `headers`, later ones replacing earlier ones of the same name.
pub fn apply_headers<'a>(
    headers: &mut HeaderMap,
    pairs: impl IntoIterator<Item = &'a (String, String)>,
) -> Result<(), String> {
    for (name, value) in pairs {
        let header = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("invalid header name \"{name}\""))?;
        let value = HeaderValue::from_str(value).map_err(|_| format!("invalid value for header \"{name}\""))?;
        headers.insert(header, value);
    }
    Ok(())
}

/// A header value holding a secret (it is marked sensitive, so it never shows in debug output).
pub fn secret_header(value: &str) -> Result<HeaderValue, String> {
    let mut value = HeaderValue::from_str(value).map_err(|_| "the API key is not a valid header value".to_owned())?;
    value.set_sensitive(true);
    Ok(value)
}

/// Sends the request, retrying like the vendor SDKs, and returns the open (2xx) response.
/// `url` as errors show it: without credentials, query or fragment, which may hold secrets.
pub(crate) fn shown_url(url: &str) -> String {
    match reqwest::Url::parse(url) {
        Ok(mut parsed) => {
            // Both fail only for URLs that cannot have credentials; there is nothing to remove then.
            let _ = parsed.set_username("");
            let _ = parsed.set_password(None);
            parsed.set_query(None);
            parsed.set_fragment(None);
            parsed.to_string()
        }
        Err(_) => url.split(['?', '#']).next().unwrap_or_default().to_owned(),
    }
}

/// The innermost cause of an error (`Connection refused (os error 111)` under reqwest's own words).
pub(crate) fn root_cause(error: &(dyn std::error::Error + 'static)) -> String {
    let mut cause = error;
    while let Some(source) = cause.source() {
        cause = source;
    }
    cause.to_string()
}

pub(crate) async fn send(
    request: &HttpRequest,
    cancel: &CancellationToken,
    http_error: impl Fn(u16, &str) -> String,
) -> Result<reqwest::Response, Failure> {
    let client = http_client()?;
    if request.retry_rule == RetryRule::Codex {
        return super::openai_codex_responses::send::send(client, request, cancel).await;
    }
    let mut retries_left = request.max_retries;
    loop {
        let attempt = client.post(&request.url).headers(request.headers.clone()).body(request.body.clone());
        let sent = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
            sent = tokio::time::timeout(request.response_timeout, attempt.send()) => sent,
        };
        let server_delay = match sent {
            Ok(Ok(response)) if response.status().is_success() => return Ok(response),
            Ok(Ok(response)) if retries_left > 0 && should_retry(&response) => {
                server_retry_delay(response.headers()).filter(|delay| *delay <= request.max_retry_delay)
            }
            Ok(Ok(response)) => {
                let status = response.status().as_u16();
                let retry_after =
                    server_retry_delay(response.headers()).or_else(|| retry_after_seconds(response.headers()));
                let text = tokio::select! {
                    biased;
                    _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
                    text = tokio::time::timeout(request.idle_timeout, response.text()) => match text {
                        Ok(Ok(text)) => text,
                        Ok(Err(error)) => error.to_string(),
                        Err(_) => return Err(TIMED_OUT.into()),
                    },
                };
                let kind = ProviderErrorKind::from_status(status, retry_after);
                return Err(Failure::Error(DecodeError { message: http_error(status, &text), kind: Some(kind) }));
            }
            Ok(Err(_)) | Err(_) if retries_left > 0 => None,
            Ok(Err(error)) => {
                let (url, cause) = (shown_url(&request.url), root_cause(&error));
                return Err(Failure::Error(DecodeError {
                    message: format!("{CONNECTION_ERROR} (POST {url}: {cause})"),
                    kind: Some(ProviderErrorKind::Network),
                }));
            }
            Err(_) => {
                return Err(Failure::Error(DecodeError {
                    message: TIMED_OUT.to_owned(),
                    kind: Some(ProviderErrorKind::Network),
                }));
            }
        };
        let delay = server_delay.unwrap_or_else(|| default_retry_delay(request.max_retries - retries_left));
        retries_left -= 1;
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(ABORTED_BEFORE_RESPONSE.into()),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

/// The SDKs' rule: `x-should-retry` decides when present, else 408, 409, 429 and 5xx are retried.
fn should_retry(response: &reqwest::Response) -> bool {
    match response.headers().get("x-should-retry").and_then(|v| v.to_str().ok()) {
        Some("true") => return true,
        Some("false") => return false,
        _ => {}
    }
    matches!(response.status().as_u16(), 408 | 409 | 429 | 500..)
}

/// A delay the server asked for (`retry-after-ms`, `retry-after` seconds or HTTP date), if reasonable (≤ 60 s).
pub fn server_retry_delay(headers: &HeaderMap) -> Option<Duration> {
    let millis = requested_delay_ms(headers)?;
    (millis.is_finite() && millis > 0.0 && millis <= 60_000.0).then(|| Duration::from_secs_f64(millis / 1000.0))
}

/// Whatever delay the server asked for, however long (for error classification).
fn retry_after_seconds(headers: &HeaderMap) -> Option<Duration> {
    let millis = requested_delay_ms(headers)?;
    (millis.is_finite() && millis > 0.0).then(|| Duration::from_secs_f64(millis / 1000.0))
}

fn requested_delay_ms(headers: &HeaderMap) -> Option<f64> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()).filter(|ms| *ms > 0.0).or_else(|| {
        let value = header("retry-after")?;
        match value.parse::<f64>() {
            Ok(seconds) => Some(seconds * 1000.0),
            Err(_) => {
                let date = chrono::DateTime::parse_from_rfc2822(value).ok()?;
                Some((date.timestamp_millis() - crate::protocol::now_ms()) as f64)
            }
        }
    })
}

/// 0.5 s doubling per retry, at most 8 s, minus up to 25 % jitter.
fn default_retry_delay(retries_done: u32) -> Duration {
    let seconds = (0.5 * 2f64.powi(retries_done.min(16) as i32)).min(8.0);
    let random = (uuid::Uuid::new_v4().as_u128() % 10_000) as f64 / 10_000.0;
    Duration::from_secs_f64(seconds * (1.0 - random * 0.25))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_in_errors_lose_credentials_and_queries() {
        assert_eq!(shown_url("https://user:secret@llm.example/v1/chat?token=abc#x"), "https://llm.example/v1/chat");
        assert_eq!(shown_url("http://127.0.0.1:9/v1"), "http://127.0.0.1:9/v1");
        assert_eq!(shown_url("not a url?key=1"), "not a url");
    }

    #[test]
    fn retry_delays_follow_the_sdk() {
        for (done, max) in [(0, 0.5), (1, 1.0), (2, 2.0), (5, 8.0), (40, 8.0)] {
            let delay = default_retry_delay(done).as_secs_f64();
            assert!(delay <= max && delay >= max * 0.75, "retry {done}: {delay}");
        }
        let mut headers = HeaderMap::new();
        headers.insert("retry-after", HeaderValue::from_static("2"));
        assert_eq!(server_retry_delay(&headers), Some(Duration::from_secs(2)));
        headers.insert("retry-after-ms", HeaderValue::from_static("150"));
        assert_eq!(server_retry_delay(&headers), Some(Duration::from_millis(150)));
        headers.insert("retry-after-ms", HeaderValue::from_static("0"));
        headers.insert("retry-after", HeaderValue::from_static("120"));
        assert_eq!(server_retry_delay(&headers), None, "too long to wait inside the SDK retry");
        assert_eq!(retry_after_seconds(&headers), Some(Duration::from_secs(120)), "but still reported");
    }

    #[test]
    fn headers_replace_by_name_and_bad_ones_are_named() {
        let mut headers = HeaderMap::new();
        let pairs = [("X-Team".to_owned(), "model".to_owned()), ("x-team".to_owned(), "call".to_owned())];
        apply_headers(&mut headers, &pairs).expect("valid");
        assert_eq!(headers.get("x-team").and_then(|v| v.to_str().ok()), Some("call"));
        let bad = [("bad name".to_owned(), "v".to_owned())];
        assert_eq!(apply_headers(&mut headers, &bad).err().as_deref(), Some("invalid header name \"bad name\""));
        assert!(secret_header("k").is_ok_and(|v| v.is_sensitive()));
    }
}
