//! Bedrock failures: the error name and message of an error response or exception event (read as the AWS
//! SDK reads them), pi's wording (`Throttling error: …`), the failure kind, and which ones the SDK's
//! standard retry strategy tries again.

use std::time::Duration;

use reqwest::header::HeaderMap;
use serde_json::Value;

use crate::ai::error_kind::ProviderErrorKind;

/// Error names the SDK retries as throttling (with the longer backoff).
const THROTTLING_ERRORS: [&str; 14] = [
    "BandwidthLimitExceeded",
    "EC2ThrottledException",
    "LimitExceededException",
    "PriorRequestNotComplete",
    "ProvisionedThroughputExceededException",
    "RequestLimitExceeded",
    "RequestThrottled",
    "RequestThrottledException",
    "SlowDown",
    "ThrottledException",
    "Throttling",
    "ThrottlingException",
    "TooManyRequestsException",
    "TransactionInProgressException",
];
/// Error names the SDK retries as transient.
const TRANSIENT_ERRORS: [&str; 3] = ["TimeoutError", "RequestTimeout", "RequestTimeoutException"];
/// Statuses the SDK retries as transient.
const TRANSIENT_STATUSES: [u16; 4] = [500, 502, 503, 504];
/// Error names that mean the credentials or signature were refused.
const AUTH_ERRORS: [&str; 7] = [
    "AccessDeniedException",
    "ExpiredTokenException",
    "IncompleteSignature",
    "InvalidSignatureException",
    "MissingAuthenticationTokenException",
    "UnrecognizedClientException",
    "UnauthorizedException",
];

/// How the SDK's standard strategy retries a failure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RetryClass {
    /// Backoff from a 1 s base.
    Throttling,
    /// Backoff from a 50 ms base.
    Transient,
}

impl RetryClass {
    /// The wait before retry number `retries_done + 1`: a random share of `base · 2^retries_done` (at most
    /// 20 s), at least what the server asked for (up to 5 s more than the backoff).
    pub fn delay(self, retries_done: u32, server: Option<Duration>) -> Duration {
        let base = match self {
            Self::Throttling => 1000.0,
            Self::Transient => 50.0,
        };
        let random = (uuid::Uuid::new_v4().as_u128() % 10_000) as f64 / 10_000.0;
        let backoff = random * (base * 2f64.powi(retries_done.min(16) as i32)).min(20_000.0);
        let backoff = Duration::from_millis(backoff as u64);
        match server {
            Some(asked) => backoff.max(asked.min(backoff + Duration::from_secs(5))),
            None => backoff,
        }
    }
}

/// A modelled Bedrock failure.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServiceError {
    /// The exception's name (`ThrottlingException`), or `Unknown`.
    pub name: String,
    pub message: String,
    /// The HTTP status, for error responses (exception events have none).
    pub status: Option<u16>,
    /// A wait the server asked for (`retry-after`, `x-amz-retry-after`).
    pub retry_after: Option<Duration>,
}

impl ServiceError {
    /// pi's text: a readable prefix for the exceptions it knows, else the name, then the message.
    pub fn text(&self) -> String {
        let prefix = match self.name.as_str() {
            "InternalServerException" => "Internal server error",
            "ModelStreamErrorException" => "Model stream error",
            "ValidationException" => "Validation error",
            "ThrottlingException" => "Throttling error",
            "ServiceUnavailableException" => "Service unavailable",
            other => other,
        };
        format!("{prefix}: {}", self.message)
    }

    /// The SDK's retry decision: throttling (429 or a throttling name), transient (a transient name or
    /// status), or none.
    pub fn retry_class(&self) -> Option<RetryClass> {
        let name = self.name.as_str();
        if self.status == Some(429) || THROTTLING_ERRORS.contains(&name) {
            Some(RetryClass::Throttling)
        } else if TRANSIENT_ERRORS.contains(&name) || self.status.is_some_and(|s| TRANSIENT_STATUSES.contains(&s)) {
            Some(RetryClass::Transient)
        } else {
            None
        }
    }

    /// The kind of failure, for retries and compaction upstream.
    pub fn kind(&self) -> ProviderErrorKind {
        let name = self.name.as_str();
        if self.retry_class() == Some(RetryClass::Throttling) {
            return ProviderErrorKind::RateLimit { retry_after: self.retry_after };
        }
        if AUTH_ERRORS.contains(&name) {
            return ProviderErrorKind::Authentication;
        }
        match (name, self.status) {
            ("InternalServerException" | "ServiceUnavailableException" | "ModelStreamErrorException", _) => {
                ProviderErrorKind::Server
            }
            ("ValidationException", _) => ProviderErrorKind::InvalidRequest,
            (_, Some(status)) => ProviderErrorKind::from_status(status, self.retry_after),
            (_, None) => ProviderErrorKind::Server,
        }
    }
}

/// The SDK's cleaning of an error code: before `,` and `:`, after `#`.
fn sanitize_code(raw: &str) -> String {
    let code = raw.split(',').next().unwrap_or_default();
    let code = code.split(':').next().unwrap_or_default();
    match code.split_once('#') {
        Some((_, after)) => after.to_owned(),
        None => code.to_owned(),
    }
}

/// A value as JavaScript puts it in a string (`message` may be any JSON).
fn js_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// An error response: the name from `x-amzn-errortype`, else the body's `code` or `__type`, else
/// `Unknown`; the message from the body's `message` or `Message`, else `UnknownError`. A body that is not
/// JSON is quoted as the message (the SDK fails to parse it).
pub fn http_error(status: u16, headers: &HeaderMap, body: &str) -> ServiceError {
    let parsed = serde_json::from_str::<Value>(body).ok();
    let object = parsed.as_ref().and_then(Value::as_object);
    let field = |key: &str| object.and_then(|o| o.iter().find(|(k, _)| k.eq_ignore_ascii_case(key)).map(|(_, v)| v));
    let header = headers.get("x-amzn-errortype").and_then(|v| v.to_str().ok());
    let name = header
        .map(sanitize_code)
        .or_else(|| field("code").filter(|v| !v.is_null()).map(|v| sanitize_code(&js_text(v))))
        .or_else(|| object.and_then(|o| o.get("__type")).map(|v| sanitize_code(&js_text(v))))
        .unwrap_or_else(|| "Unknown".to_owned());
    let message = match object {
        Some(object) => object.get("message").or_else(|| object.get("Message")).filter(|v| !v.is_null()).map(js_text),
        None => Some(body.split_whitespace().collect::<Vec<_>>().join(" ")).filter(|text| !text.is_empty()),
    };
    let message = message.filter(|m| !m.is_empty()).unwrap_or_else(|| "UnknownError".to_owned());
    ServiceError { name, message, status: Some(status), retry_after: retry_after(headers) }
}

/// An exception event (`:exception-type` such as `throttlingException`): the exception's name and the
/// payload's `message`.
pub fn stream_exception(exception_type: &str, payload: &[u8]) -> ServiceError {
    let mut name = exception_type.to_owned();
    if let Some(first) = name.get(..1) {
        let upper = first.to_ascii_uppercase();
        name.replace_range(..1, &upper);
    }
    let payload = serde_json::from_slice::<Value>(payload).ok();
    let message = payload
        .as_ref()
        .and_then(|p| p.get("message").or_else(|| p.get("Message")))
        .filter(|v| !v.is_null())
        .map(js_text)
        .filter(|m| !m.is_empty())
        .unwrap_or_else(|| "UnknownError".to_owned());
    ServiceError { name, message, status: None, retry_after: None }
}

/// `x-amz-retry-after` (milliseconds) or `retry-after` (seconds).
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(millis) = header("x-amz-retry-after").and_then(|v| v.parse::<f64>().ok()) {
        return (millis.is_finite() && millis > 0.0).then(|| Duration::from_secs_f64(millis / 1000.0));
    }
    let seconds = header("retry-after")?.parse::<f64>().ok()?;
    (seconds.is_finite() && seconds > 0.0).then(|| Duration::from_secs_f64(seconds))
}

#[cfg(test)]
mod tests {
    use reqwest::header::HeaderValue;

    use super::*;

    fn headers(pairs: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_static(value));
        }
        map
    }

    #[test]
    fn error_responses_are_named_and_worded_like_pi() {
        let throttled = http_error(
            429,
            &headers(&[(
                "x-amzn-errortype",
                "ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/",
            )]),
            r#"{"message":"Too many requests, please wait before trying again."}"#,
        );
        assert_eq!(throttled.text(), "Throttling error: Too many requests, please wait before trying again.");
        assert_eq!(throttled.retry_class(), Some(RetryClass::Throttling));
        assert_eq!(throttled.kind(), ProviderErrorKind::RateLimit { retry_after: None });

        let signature = http_error(
            403,
            &HeaderMap::new(),
            r#"{"__type":"com.amazon#InvalidSignatureException","Message":"bad sig"}"#,
        );
        assert_eq!(signature.text(), "InvalidSignatureException: bad sig");
        assert_eq!((signature.retry_class(), signature.kind()), (None, ProviderErrorKind::Authentication));

        let validation = http_error(
            400,
            &headers(&[("x-amzn-errortype", "ValidationException")]),
            r#"{"message":"Input is too long for requested model."}"#,
        );
        assert_eq!(validation.text(), "Validation error: Input is too long for requested model.");
        assert_eq!((validation.retry_class(), validation.kind()), (None, ProviderErrorKind::InvalidRequest));

        let unavailable = http_error(503, &headers(&[("retry-after", "2")]), "{}");
        assert_eq!(unavailable.text(), "Unknown: UnknownError");
        assert_eq!(unavailable.retry_class(), Some(RetryClass::Transient));
        assert_eq!(unavailable.retry_after, Some(Duration::from_secs(2)));
        assert_eq!(unavailable.kind(), ProviderErrorKind::Server);

        let html = http_error(502, &HeaderMap::new(), "<html>\n bad gateway </html>");
        assert_eq!(html.text(), "Unknown: <html> bad gateway </html>");
        let coded = http_error(400, &HeaderMap::new(), r#"{"Code":"SomethingException","message":{"a":1}}"#);
        assert_eq!(coded.text(), r#"SomethingException: {"a":1}"#);
        assert_eq!(coded.kind(), ProviderErrorKind::InvalidRequest);
    }

    #[test]
    fn exception_events_take_the_modelled_names() {
        let busy = stream_exception("throttlingException", br#"{"message":"Too many tokens"}"#);
        assert_eq!(
            (busy.name.as_str(), busy.text().as_str()),
            ("ThrottlingException", "Throttling error: Too many tokens")
        );
        assert_eq!(busy.kind(), ProviderErrorKind::RateLimit { retry_after: None });
        let broken = stream_exception("modelStreamErrorException", b"{}");
        assert_eq!(broken.text(), "Model stream error: UnknownError");
        assert_eq!(broken.kind(), ProviderErrorKind::Server);
        assert_eq!(stream_exception("validationException", b"x").kind(), ProviderErrorKind::InvalidRequest);
    }

    #[test]
    fn retry_delays_follow_the_sdk_bases() {
        for _ in 0..20 {
            assert!(RetryClass::Transient.delay(0, None) <= Duration::from_millis(50));
            assert!(RetryClass::Throttling.delay(1, None) <= Duration::from_millis(2000));
            assert!(RetryClass::Transient.delay(30, None) <= Duration::from_secs(20));
        }
        let asked = RetryClass::Transient.delay(0, Some(Duration::from_secs(2)));
        assert!(asked >= Duration::from_secs(2) && asked <= Duration::from_millis(2050), "{asked:?}");
        let capped = RetryClass::Transient.delay(0, Some(Duration::from_secs(60)));
        assert!(capped <= Duration::from_millis(5050), "{capped:?}");
    }
}
