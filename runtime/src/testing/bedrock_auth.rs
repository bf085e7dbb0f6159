//! How the mock server authorizes a Bedrock request, as AWS would: it recomputes the SigV4 signature from
//! the request it received (canonical request, string to sign, signing key of the fixed test secret) and
//! refuses a request that does not match with 403 and an AWS-shaped JSON error; or it checks a bearer token
//! against the fixed test one. The canonical request is built here independently of the client's signer;
//! only the HMAC steps are `aws-sigv4`'s.

use sha2::{Digest, Sha256};

use super::server::RecordedRequest;

/// The access key id the mock accepts.
pub const MOCK_AWS_ACCESS_KEY_ID: &str = "AKIDPIGENMOCK0000001";
/// The secret access key the mock verifies signatures with.
pub const MOCK_AWS_SECRET_ACCESS_KEY: &str = "pi-gen/mock+secret/K7MDENGbPxRfiCYEXAMPLEKEY";
/// The Bedrock API key (bearer token) the mock accepts.
pub const MOCK_AWS_BEARER_TOKEN: &str = "pi-gen-mock-bedrock-api-key";
/// How far the signing time may be from the server's clock.
const MAX_SKEW_SECONDS: i64 = 5 * 60;

/// Why a request is refused: the status, the `x-amzn-errortype` and the message of the JSON body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub status: u16,
    pub error_type: &'static str,
    pub message: String,
}

impl Refusal {
    fn new(status: u16, error_type: &'static str, message: impl Into<String>) -> Self {
        Self { status, error_type, message: message.into() }
    }

    /// The error body AWS sends: `{"message": …}`.
    pub fn body(&self) -> String {
        serde_json::json!({"message": self.message}).to_string()
    }
}

/// Accepts a request signed with the mock key pair (or carrying the mock bearer token); refuses others.
pub(crate) fn verify(request: &RecordedRequest, body: &[u8]) -> Result<(), Refusal> {
    verify_at(request, body, MOCK_AWS_SECRET_ACCESS_KEY, chrono::Utc::now())
}

/// [`verify`] with the server's secret and clock given.
fn verify_at(
    request: &RecordedRequest,
    body: &[u8],
    secret: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<(), Refusal> {
    let Some(authorization) = request.header("authorization") else {
        return Err(Refusal::new(403, "MissingAuthenticationTokenException", "Missing authentication token"));
    };
    if let Some(token) = authorization.strip_prefix("Bearer ") {
        return if token == MOCK_AWS_BEARER_TOKEN {
            Ok(())
        } else {
            Err(Refusal::new(403, "UnrecognizedClientException", "The bearer token in the request is not valid."))
        };
    }
    let Some(fields) = authorization.strip_prefix("AWS4-HMAC-SHA256 ") else {
        return Err(Refusal::new(403, "IncompleteSignatureException", "Unsupported authorization scheme."));
    };
    let field = |name: &str| {
        fields
            .split(',')
            .map(str::trim)
            .find_map(|part| part.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')))
    };
    let (Some(credential), Some(signed_headers), Some(signature)) =
        (field("Credential"), field("SignedHeaders"), field("Signature"))
    else {
        return Err(Refusal::new(403, "IncompleteSignatureException", "The authorization header is incomplete."));
    };
    let scope: Vec<&str> = credential.split('/').collect();
    let [access_key_id, date, region, service, "aws4_request"] = scope[..] else {
        return Err(Refusal::new(403, "IncompleteSignatureException", "The credential scope is malformed."));
    };
    if access_key_id != MOCK_AWS_ACCESS_KEY_ID {
        return Err(Refusal::new(403, "UnrecognizedClientException", "The access key ID in the request is not known."));
    }
    let amz_date = request.header("x-amz-date").unwrap_or_default();
    let time = chrono::NaiveDateTime::parse_from_str(amz_date, "%Y%m%dT%H%M%SZ")
        .map_err(|_| Refusal::new(403, "IncompleteSignatureException", "x-amz-date is missing or malformed."))?
        .and_utc();
    if !amz_date.starts_with(date) || service != "bedrock" {
        return Err(Refusal::new(403, "InvalidSignatureException", "The credential scope does not match the request."));
    }
    if (now - time).num_seconds().abs() > MAX_SKEW_SECONDS {
        return Err(Refusal::new(
            403,
            "InvalidSignatureException",
            "Signature expired: the signing time is too far from now.",
        ));
    }
    let names: Vec<&str> = signed_headers.split(';').collect();
    if !names.contains(&"host") || !names.contains(&"x-amz-date") {
        return Err(Refusal::new(403, "InvalidSignatureException", "host and x-amz-date must be signed."));
    }
    let body_hash = hex(&Sha256::digest(body));
    let payload_hash = match request.header("x-amz-content-sha256") {
        Some(declared) if declared != body_hash => {
            return Err(Refusal::new(400, "ValidationException", "x-amz-content-sha256 does not match the body."));
        }
        Some(declared) => declared.to_owned(),
        None => body_hash,
    };
    let (path, query) = request.path.split_once('?').unwrap_or((request.path.as_str(), ""));
    let canonical = [
        request.method.clone(),
        canonical_path(path),
        canonical_query(query),
        names.iter().map(|name| format!("{name}:{}\n", header_values(request, name))).collect::<String>(),
        signed_headers.to_owned(),
        payload_hash,
    ]
    .join("\n");
    let string_to_sign = format!(
        "AWS4-HMAC-SHA256\n{amz_date}\n{date}/{region}/{service}/aws4_request\n{}",
        hex(&Sha256::digest(canonical.as_bytes()))
    );
    let key = aws_sigv4::sign::v4::generate_signing_key(secret, time.into(), region, service);
    let expected = aws_sigv4::sign::v4::calculate_signature(key, string_to_sign.as_bytes());
    if expected != signature {
        return Err(Refusal::new(
            403,
            "InvalidSignatureException",
            "The signature the server computed for this request does not match the one it carries. \
             Check the AWS secret access key and how the request is signed.",
        ));
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// AWS's URI encoding: everything but `A-Z a-z 0-9 - _ . ~` as `%XX`.
fn uri_encode(text: &str) -> String {
    let mut out = String::new();
    for byte in text.bytes() {
        if byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.' | b'~') {
            out.push(byte as char);
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
}

/// The path normalized (`.` and `..` segments resolved, empty segments dropped) with every segment
/// encoded once more (services other than S3 sign the doubly encoded path).
fn canonical_path(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    let mut out = String::from("/");
    out.push_str(&segments.iter().map(|s| uri_encode(s)).collect::<Vec<_>>().join("/"));
    if path.ends_with('/') && !segments.is_empty() {
        out.push('/');
    }
    out
}

fn canonical_query(query: &str) -> String {
    let mut pairs: Vec<(String, String)> = query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (uri_encode(&percent_decode(key)), uri_encode(&percent_decode(value)))
        })
        .collect();
    pairs.sort();
    pairs.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join("&")
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok());
        match (bytes[i], hex.and_then(|h| u8::from_str_radix(h, 16).ok())) {
            (b'%', Some(byte)) => {
                out.push(byte);
                i += 3;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The values of header `name`, joined by commas, each trimmed with inner runs of spaces collapsed.
fn header_values(request: &RecordedRequest, name: &str) -> String {
    request
        .headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, value)| value.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_paths_and_queries_follow_sigv4() {
        assert_eq!(
            canonical_path("/model/us.anthropic.claude-v1%3A0/converse-stream"),
            "/model/us.anthropic.claude-v1%253A0/converse-stream"
        );
        assert_eq!(canonical_path("/a/./b/../c//d/"), "/a/c/d/");
        assert_eq!(canonical_path("/"), "/");
        assert_eq!(canonical_query("b=2&a=x%20y&a=1"), "a=1&a=x%20y&b=2");
        assert_eq!(percent_decode("%41%zz"), "A%zz");
    }

    #[test]
    fn requests_without_valid_authorization_are_refused() {
        let request = |auth: Option<&str>| RecordedRequest {
            method: "POST".into(),
            path: "/model/m/converse-stream".into(),
            headers: auth.map(|a| ("authorization".to_owned(), a.to_owned())).into_iter().collect(),
            body: serde_json::Value::Null,
        };
        assert_eq!(verify(&request(None), b"").map_err(|r| r.error_type), Err("MissingAuthenticationTokenException"));
        assert_eq!(verify(&request(Some(&format!("Bearer {MOCK_AWS_BEARER_TOKEN}"))), b""), Ok(()));
        assert_eq!(verify(&request(Some("Bearer nope")), b"").map_err(|r| r.status), Err(403));
        let other_key = "AWS4-HMAC-SHA256 Credential=AKIDOTHER/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host;x-amz-date, Signature=00";
        assert_eq!(
            verify(&request(Some(other_key)), b"").map_err(|r| r.error_type),
            Err("UnrecognizedClientException")
        );
        let refusal = Refusal::new(403, "InvalidSignatureException", "x");
        assert_eq!(refusal.body(), r#"{"message":"x"}"#);
    }

    /// A request pi 0.73.1 sent through the AWS SDK for JavaScript (3.1163), signed with the mock key pair
    /// and a session token, as the mock server received it.
    fn signed_by_the_aws_sdk() -> (RecordedRequest, &'static str) {
        let body = r#"{"messages":[{"role":"user","content":[{"text":"hi"},{"cachePoint":{"type":"default"}}]}],"system":[{"text":"Be brief.\nCurrent date: 2026-11-27\nCurrent working directory: /tmp/bedrock-cap"},{"cachePoint":{"type":"default"}}],"inferenceConfig":{"maxTokens":32000}}"#;
        let headers = [
            ("content-type", "application/json"),
            ("content-length", "265"),
            ("x-amz-user-agent", "aws-sdk-js/3.1163.0"),
            (
                "user-agent",
                "aws-sdk-js/3.1163.0 ua/2.1 os/linux#6.18.44-fc-v782 lang/js md/nodejs#20.20.2 api/bedrock-runtime#3.1163.0 m/N,E,g",
            ),
            ("host", "127.0.0.1:18901"),
            ("amz-sdk-invocation-id", "26681a58-c071-4a97-a8b3-2d9d5c9f98c7"),
            ("amz-sdk-request", "attempt=1; max=3"),
            ("x-amz-date", "20261127T173653Z"),
            ("x-amz-security-token", "mock-session-token"),
            ("x-amz-content-sha256", "a36beddf15476baf041bc0e73a32af5d38b8644ba4c3bfdf3b5b02ba2267f9d1"),
            (
                "authorization",
                "AWS4-HMAC-SHA256 Credential=AKIDPIGENMOCK0000001/20261127/eu-west-3/bedrock/aws4_request, SignedHeaders=amz-sdk-invocation-id;amz-sdk-request;content-length;content-type;host;x-amz-content-sha256;x-amz-date;x-amz-security-token;x-amz-user-agent, Signature=3cb6955f6a3f378338c65a88f76a8c30a81126730eb0f5e983060b13b3d0ea59",
            ),
            ("connection", "keep-alive"),
        ];
        let request = RecordedRequest {
            method: "POST".into(),
            path: "/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse-stream".into(),
            headers: headers.iter().map(|(n, v)| ((*n).to_owned(), (*v).to_owned())).collect(),
            body: serde_json::Value::Null,
        };
        (request, body)
    }

    #[test]
    fn signatures_of_the_aws_sdk_for_javascript_verify() {
        let (request, body) = signed_by_the_aws_sdk();
        let then = chrono::DateTime::parse_from_rfc3339("2026-11-27T17:37:00Z").expect("date").to_utc();
        assert_eq!(verify_at(&request, body.as_bytes(), MOCK_AWS_SECRET_ACCESS_KEY, then), Ok(()));
        let wrong = verify_at(&request, body.as_bytes(), "another-secret", then);
        assert_eq!(wrong.map_err(|r| (r.status, r.error_type)), Err((403, "InvalidSignatureException")));
        let tampered = body.replace("hi", "ho");
        assert_eq!(
            verify_at(&request, tampered.as_bytes(), MOCK_AWS_SECRET_ACCESS_KEY, then).map_err(|r| r.status),
            Err(400)
        );
        let later = then + chrono::Duration::minutes(20);
        let expired = verify_at(&request, body.as_bytes(), MOCK_AWS_SECRET_ACCESS_KEY, later);
        assert!(expired.is_err_and(|r| r.message.starts_with("Signature expired")));
    }
}
