//! Streamable HTTP for `rmcp` over the runtime's own reqwest 0.12 client: POSTs of JSON-RPC messages
//! answered with JSON or an SSE stream, the server's GET stream, and the session's DELETE. (rmcp's own
//! reqwest client is reqwest 0.13, which would put a second HTTP stack into every agent.)

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use futures_util::StreamExt;
use futures_util::stream::BoxStream;
use http::{HeaderName, HeaderValue};
use reqwest::StatusCode;
use reqwest::header::{ACCEPT, CONTENT_TYPE};
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::streamable_http_client::{
    AuthRequiredError, StreamableHttpClient, StreamableHttpError, StreamableHttpPostResponse,
    StreamableHttpResponseLimits,
};
use sse_stream::{Error as SseError, Sse, SseStream};

const SESSION_ID: &str = "Mcp-Session-Id";
const LAST_EVENT_ID: &str = "Last-Event-Id";
const ACCEPT_BOTH: &str = "application/json, text/event-stream";
/// How much of an unusable error body is kept for the message.
const ERROR_PREVIEW: usize = 2048;

/// The runtime's HTTP client as an MCP streamable-HTTP client.
#[derive(Clone, Default)]
pub struct McpHttpClient {
    client: reqwest::Client,
}

impl McpHttpClient {
    pub fn new(client: reqwest::Client) -> Self {
        Self { client }
    }
}

/// An HTTP failure of the MCP transport (connection, status, body).
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct McpHttpError(String);

type HttpResult<T> = Result<T, StreamableHttpError<McpHttpError>>;

fn client_error(error: reqwest::Error) -> StreamableHttpError<McpHttpError> {
    // reqwest's message names the URL; the chain below it says what went wrong.
    let mut message = error.to_string();
    let mut source = std::error::Error::source(&error);
    while let Some(cause) = source {
        message.push_str(": ");
        message.push_str(&cause.to_string());
        source = cause.source();
    }
    StreamableHttpError::Client(McpHttpError(message))
}

fn with_headers(
    mut request: reqwest::RequestBuilder,
    session_id: Option<&str>,
    auth_header: Option<String>,
    custom_headers: HashMap<HeaderName, HeaderValue>,
) -> reqwest::RequestBuilder {
    if let Some(token) = auth_header {
        request = request.bearer_auth(token);
    }
    for (name, value) in custom_headers {
        request = request.header(name.as_str(), value.as_bytes());
    }
    if let Some(session_id) = session_id {
        request = request.header(SESSION_ID, session_id);
    }
    request
}

fn media_type(response: &reqwest::Response) -> Option<String> {
    let value = response.headers().get(CONTENT_TYPE)?.to_str().ok()?;
    Some(value.split(';').next().unwrap_or_default().trim().to_ascii_lowercase())
}

fn auth_challenge(response: &reqwest::Response) -> Option<StreamableHttpError<McpHttpError>> {
    if response.status() != StatusCode::UNAUTHORIZED {
        return None;
    }
    let header = response.headers().get(reqwest::header::WWW_AUTHENTICATE)?;
    let header = String::from_utf8_lossy(header.as_bytes()).into_owned();
    Some(StreamableHttpError::AuthRequired(AuthRequiredError::new(header)))
}

/// Reads at most `limit` bytes of the body; `Err` when it is longer.
async fn read_limited(response: reqwest::Response, limit: usize) -> HttpResult<Vec<u8>> {
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(client_error)?;
        if body.len() + chunk.len() > limit {
            return Err(StreamableHttpError::ResponseBodyTooLarge { max_size: limit });
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

fn sse_events(response: reqwest::Response) -> BoxStream<'static, Result<Sse, SseError>> {
    SseStream::from_bytes_stream(response.bytes_stream()).boxed()
}

impl StreamableHttpClient for McpHttpClient {
    type Error = McpHttpError;

    async fn post_message(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let limits = StreamableHttpResponseLimits::default();
        self.post_message_with_response_limits(uri, message, session_id, auth_header, custom_headers, limits).await
    }

    async fn post_message_with_response_limits(
        &self,
        uri: Arc<str>,
        message: ClientJsonRpcMessage,
        session_id: Option<Arc<str>>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
        limits: StreamableHttpResponseLimits,
    ) -> HttpResult<StreamableHttpPostResponse> {
        let request = self.client.post(uri.as_ref()).header(ACCEPT, ACCEPT_BOTH);
        let request = with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let body = serde_json::to_vec(&message).map_err(StreamableHttpError::Deserialize)?;
        let request = request.header(CONTENT_TYPE, "application/json").body(body);
        let response = request.send().await.map_err(client_error)?;
        if let Some(challenge) = auth_challenge(&response) {
            return Err(challenge);
        }
        let status = response.status();
        if matches!(status, StatusCode::ACCEPTED | StatusCode::NO_CONTENT) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        if status == StatusCode::NOT_FOUND && session_id.is_some() {
            return Err(StreamableHttpError::SessionExpired);
        }
        let new_session = response.headers().get(SESSION_ID).and_then(|id| id.to_str().ok()).map(str::to_owned);
        let media = media_type(&response);
        let expects_answer = matches!(message, ClientJsonRpcMessage::Request(_));
        if status.is_success() && !expects_answer && response.content_length() == Some(0) {
            return Ok(StreamableHttpPostResponse::Accepted);
        }
        match media.as_deref() {
            Some("text/event-stream") if status.is_success() => {
                Ok(StreamableHttpPostResponse::Sse(sse_events(response), new_session))
            }
            Some("application/json") => {
                let body = read_limited(response, limits.max_json_response_size).await?;
                match serde_json::from_slice::<ServerJsonRpcMessage>(&body) {
                    Ok(message) => Ok(StreamableHttpPostResponse::Json(message, new_session)),
                    Err(_) if !status.is_success() => Err(status_error(status, &body)),
                    Err(error) => Err(StreamableHttpError::Deserialize(error)),
                }
            }
            _ if !status.is_success() => {
                let body =
                    read_limited(response, limits.max_error_response_size.max(ERROR_PREVIEW)).await.unwrap_or_default();
                Err(status_error(status, &body))
            }
            _ if !expects_answer => Ok(StreamableHttpPostResponse::Accepted),
            other => Err(StreamableHttpError::UnexpectedContentType(other.map(str::to_owned))),
        }
    }

    async fn delete_session(
        &self,
        uri: Arc<str>,
        session_id: Arc<str>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<()> {
        let request = with_headers(self.client.delete(uri.as_ref()), Some(&session_id), auth_header, custom_headers);
        let response = request.send().await.map_err(client_error)?;
        // A server that keeps no sessions may not allow DELETE; there is nothing to close then.
        if response.status().is_success() || response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Ok(());
        }
        Err(status_error(response.status(), &[]))
    }

    async fn get_stream(
        &self,
        uri: Arc<str>,
        session_id: Option<Arc<str>>,
        last_event_id: Option<String>,
        auth_header: Option<String>,
        custom_headers: HashMap<HeaderName, HeaderValue>,
    ) -> HttpResult<BoxStream<'static, Result<Sse, SseError>>> {
        let mut request = self.client.get(uri.as_ref()).header(ACCEPT, "text/event-stream");
        if let Some(last_event_id) = last_event_id {
            request = request.header(LAST_EVENT_ID, last_event_id);
        }
        let request = with_headers(request, session_id.as_deref(), auth_header, custom_headers);
        let response = request.send().await.map_err(client_error)?;
        if response.status() == StatusCode::METHOD_NOT_ALLOWED {
            return Err(StreamableHttpError::ServerDoesNotSupportSse);
        }
        if let Some(challenge) = auth_challenge(&response) {
            return Err(challenge);
        }
        if !response.status().is_success() {
            return Err(status_error(response.status(), &[]));
        }
        match media_type(&response).as_deref() {
            Some("text/event-stream") => Ok(sse_events(response)),
            other => Err(StreamableHttpError::UnexpectedContentType(other.map(str::to_owned))),
        }
    }
}

fn status_error(status: StatusCode, body: &[u8]) -> StreamableHttpError<McpHttpError> {
    let text = String::from_utf8_lossy(&body[..body.len().min(ERROR_PREVIEW)]);
    let text = text.trim();
    let message = if text.is_empty() { format!("HTTP {status}") } else { format!("HTTP {status}: {text}") };
    StreamableHttpError::UnexpectedServerResponse(Cow::Owned(message))
}
