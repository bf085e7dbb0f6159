//! The headers of one attempt, authorized: SigV4-signed with `aws-sigv4` (service `bedrock`, the payload's
//! SHA-256 in `x-amz-content-sha256`, the session token in `x-amz-security-token`), or a bearer token. The
//! signed set is the one the AWS SDK signs: every header sent but `user-agent`, including `host` and
//! `content-length`. Secret values are marked sensitive and never appear in errors.

use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{PayloadChecksumKind, SignableBody, SignableRequest, SigningSettings, sign};
use aws_sigv4::sign::v4;
use reqwest::header::{AUTHORIZATION, CONTENT_LENGTH, HOST, HeaderMap, HeaderName, HeaderValue};

use super::credentials::{AwsCredentials, BedrockAuth};

/// The signing name of Bedrock's runtime API.
pub const SIGNING_NAME: &str = "bedrock";

/// What the HTTP client will send as `host` for `url`: the host, with the port when it is not the scheme's.
pub fn host_header(url: &reqwest::Url) -> Option<String> {
    let host = url.host_str()?;
    Some(match url.port() {
        Some(port) => format!("{host}:{port}"),
        None => host.to_owned(),
    })
}

/// Adds the authorization to `headers` for a POST of `body` to `url`.
pub fn authorize(
    headers: &mut HeaderMap,
    url: &str,
    body: &[u8],
    auth: &BedrockAuth,
    region: &str,
    time: SystemTime,
) -> Result<(), String> {
    match auth {
        BedrockAuth::Bearer(token) => {
            let mut value = HeaderValue::from_str(&format!("Bearer {token}"))
                .map_err(|_| "AWS_BEARER_TOKEN_BEDROCK is not a valid header value".to_owned())?;
            value.set_sensitive(true);
            headers.insert(AUTHORIZATION, value);
            Ok(())
        }
        BedrockAuth::SigV4(credentials) => sign_v4(headers, url, body, credentials, region, time),
    }
}

fn sign_v4(
    headers: &mut HeaderMap,
    url: &str,
    body: &[u8],
    credentials: &AwsCredentials,
    region: &str,
    time: SystemTime,
) -> Result<(), String> {
    let parsed = reqwest::Url::parse(url).map_err(|error| format!("invalid Bedrock URL: {error}"))?;
    let host = host_header(&parsed).ok_or_else(|| "the Bedrock URL has no host".to_owned())?;
    let content_length = body.len().to_string();
    let mut signed: Vec<(&str, &str)> =
        vec![(HOST.as_str(), host.as_str()), (CONTENT_LENGTH.as_str(), &content_length)];
    for (name, value) in headers.iter() {
        let value = value.to_str().map_err(|_| format!("the header {name} is not text and cannot be signed"))?;
        signed.push((name.as_str(), value));
    }
    let identity = Credentials::new(
        &credentials.access_key_id,
        &credentials.secret_access_key,
        credentials.session_token.clone(),
        None,
        "pi-runtime",
    )
    .into();
    let mut settings = SigningSettings::default();
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region(region)
        .name(SIGNING_NAME)
        .time(time)
        .settings(settings)
        .build()
        .map_err(|error| format!("could not sign the Bedrock request: {error}"))?
        .into();
    let request = SignableRequest::new("POST", url, signed.into_iter(), SignableBody::Bytes(body))
        .map_err(|error| format!("could not sign the Bedrock request: {error}"))?;
    let (instructions, _signature) =
        sign(request, &params).map_err(|error| format!("could not sign the Bedrock request: {error}"))?.into_parts();
    for (name, value) in instructions.headers() {
        let name = HeaderName::from_bytes(name.as_bytes()).map_err(|_| format!("invalid signing header {name}"))?;
        let mut value = HeaderValue::from_str(value).map_err(|_| format!("invalid value of signing header {name}"))?;
        if name == AUTHORIZATION || name.as_str() == "x-amz-security-token" {
            value.set_sensitive(true);
        }
        headers.insert(name, value);
    }
    Ok(())
}
