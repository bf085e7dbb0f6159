//! The mock LLM server: hand-rolled HTTP/1.1 on 127.0.0.1 that serves the script one response per
//! completion request, streams SSE with chunked encoding, records every request, and can log them.

use std::collections::VecDeque;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::bedrock_auth;
use super::render::bedrock_converse as bedrock;
use super::render::{MockApi, error_body, frames};
use super::script::{MockCompletion, MockHttpError, MockResponse, MockScript};

mod oauth;
mod subscriptions;
pub use oauth::{TEST_CLIENT_EMAIL, TEST_PRIVATE_KEY_PEM, TEST_PROJECT_ID};
pub use subscriptions::{TEST_CHATGPT_ACCOUNT_ID, TEST_GITHUB_TOKEN, TEST_OAUTH_REFRESH_TOKEN};

/// Largest request head and body the server reads.
const MAX_HEAD_BYTES: usize = 64 * 1024;
const MAX_BODY_BYTES: usize = 64 * 1024 * 1024;

/// One request as the server received it (header names lowercased).
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    /// The body as JSON; a non-JSON body is kept as a JSON string, an empty one as null.
    pub body: Value,
}

impl RecordedRequest {
    /// The first header with this (case-insensitive) name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }
}

/// State shared by the accept loop and the connection tasks.
#[derive(Debug, Default)]
struct Shared {
    responses: Mutex<VecDeque<MockResponse>>,
    /// Completion requests answered from the script so far.
    served: AtomicUsize,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Woken at every request (for answers that wait for more requests).
    arrivals: tokio::sync::Notify,
    log_file: Mutex<Option<PathBuf>>,
    oauth: oauth::OAuthState,
    subscriptions: subscriptions::SubscriptionState,
}

/// Locks a mutex, recovering the data if a panicking holder poisoned it.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A scripted OpenAI-compatible server running on a background task until shut down or dropped.
#[derive(Debug)]
pub struct MockLlmServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    stop: CancellationToken,
    task: Option<JoinHandle<()>>,
}

impl MockLlmServer {
    /// Starts on a free port of 127.0.0.1.
    pub async fn start(script: MockScript) -> std::io::Result<Self> {
        Self::start_on(script, 0).await
    }

    /// Starts on `port` of 127.0.0.1 (0 picks a free one).
    pub async fn start_on(script: MockScript, port: u16) -> std::io::Result<Self> {
        let listener = TcpListener::bind(("127.0.0.1", port)).await?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Shared { responses: Mutex::new(script.responses.into()), ..Shared::default() });
        let stop = CancellationToken::new();
        let task = tokio::spawn(accept_loop(listener, shared.clone(), stop.clone()));
        Ok(Self { addr, shared, stop, task: Some(task) })
    }

    /// Appends each later request to `path` as one JSON line `{"method","path","body"}` (headers,
    /// and so API keys, are never written).
    pub fn set_log_file(&self, path: PathBuf) {
        *lock(&self.shared.log_file) = Some(path);
    }

    /// `http://127.0.0.1:PORT/v1`, the base URL an openai-completions model should use.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.addr.port())
    }

    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// How many scripted responses have not been served yet.
    pub fn remaining_responses(&self) -> usize {
        lock(&self.shared.responses).len()
    }

    /// Stops accepting, ends open connections and waits for the server task.
    pub async fn shutdown(mut self) {
        self.stop.cancel();
        if let Some(task) = self.task.take() {
            let _ = task.await;
        }
    }
}

impl Drop for MockLlmServer {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}

async fn accept_loop(listener: TcpListener, shared: Arc<Shared>, stop: CancellationToken) {
    loop {
        let accepted = tokio::select! {
            _ = stop.cancelled() => return,
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((socket, _)) => {
                let (shared, stop) = (shared.clone(), stop.clone());
                tokio::spawn(async move {
                    tokio::select! {
                        _ = stop.cancelled() => {}
                        _ = serve_connection(socket, &shared) => {}
                    }
                });
            }
            // Out of file descriptors or similar: back off instead of spinning.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// Reads one request, answers it, and closes the connection.
async fn serve_connection(socket: TcpStream, shared: &Shared) {
    let mut reader = BufReader::new(socket);
    let Ok(Some((request, raw_body))) = read_request(&mut reader).await else { return };
    let request_bytes = request_size(&request.body);
    lock(&shared.requests).push(request.clone());
    shared.arrivals.notify_waiters();
    let log_file = lock(&shared.log_file).clone();
    if let Some(path) = log_file {
        append_log(&path, &request).await;
    }
    let mut socket = reader.into_inner();
    let route = request.path.split('?').next().unwrap_or_default();
    if let Some((status, headers, body)) =
        subscriptions::answer(&shared.subscriptions, shared.oauth.lifetime_secs(), route, &request)
    {
        write_plain(&mut socket, status, &headers, &body).await;
        let _ = socket.shutdown().await;
        return;
    }
    if let Some((status, body)) = oauth::answer(&shared.oauth, route, &request) {
        write_plain(&mut socket, status, &[], &body).await;
        let _ = socket.shutdown().await;
        return;
    }
    // Bedrock requests are authorized first, as AWS does: a refused one uses no scripted answer.
    let refusal = (MockApi::for_route(route) == Some(MockApi::BedrockConverseStream))
        .then(|| bedrock_auth::verify(&request, &raw_body).err())
        .flatten();
    match (request.method.as_str(), MockApi::for_request(route, &request.headers)) {
        ("GET", _) if route == "/health" || route == "/v1/health" => {
            write_plain(&mut socket, 200, &[], r#"{"status":"ok"}"#).await;
        }
        ("POST", Some(MockApi::BedrockConverseStream)) if refusal.is_some() => {
            if let Some(refusal) = refusal {
                let headers = [("x-amzn-errortype".to_owned(), refusal.error_type.to_owned())];
                write_plain(&mut socket, refusal.status, &headers, &refusal.body()).await;
            }
        }
        ("POST", Some(api)) => {
            let next = lock(&shared.responses).pop_front();
            match next {
                Some(response) => {
                    let number = shared.served.fetch_add(1, Ordering::SeqCst) + 1;
                    let wanted = match &response {
                        MockResponse::Completion(completion) => completion.wait_for_requests,
                        _ => None,
                    };
                    if let Some(wanted) = wanted
                        && let Err(seen) = wait_for_requests(shared, wanted).await
                    {
                        let message = format!(
                            "mock LLM server: response {number} waits for {wanted} requests in all; after 30 s \
                             there were {seen}"
                        );
                        write_plain(&mut socket, 400, &[], &error_body(api, 400, &message)).await;
                        let _ = socket.shutdown().await;
                        return;
                    }
                    let model = api.model_name(route, &request.body);
                    serve_scripted(&mut socket, api, response, number, &model, request_bytes).await;
                }
                None => {
                    let served = shared.served.load(Ordering::SeqCst);
                    let message =
                        format!("mock LLM server: the script has no more responses (all {served} were served)");
                    // Tell SDK clients not to retry: more requests cannot help.
                    let mut headers = vec![("x-should-retry".to_owned(), "false".to_owned())];
                    if api == MockApi::BedrockConverseStream {
                        // The AWS SDK retries a 500; a 400 it does not.
                        headers.push(("x-amzn-errortype".to_owned(), "ValidationException".to_owned()));
                    }
                    let status = if api == MockApi::BedrockConverseStream { 400 } else { 500 };
                    write_plain(&mut socket, status, &headers, &error_body(api, status, &message)).await;
                }
            }
        }
        (method, _) => {
            let message = format!("mock LLM server: no route for {method} {}", request.path);
            write_plain(&mut socket, 404, &[], &json!({"error": {"message": message}}).to_string()).await;
        }
    }
    let _ = socket.shutdown().await;
}

fn request_size(body: &Value) -> usize {
    match body {
        Value::Null => 0,
        Value::String(text) => text.len(),
        other => other.to_string().len(),
    }
}

/// Parses the request line, headers and a `Content-Length` body. `None` when the peer sent nothing.
async fn read_request(reader: &mut BufReader<TcpStream>) -> std::io::Result<Option<(RecordedRequest, Vec<u8>)>> {
    let bad = |what: &str| std::io::Error::new(std::io::ErrorKind::InvalidData, what.to_owned());
    let mut line = String::new();
    if reader.read_line(&mut line).await? == 0 {
        return Ok(None);
    }
    let mut parts = line.split_whitespace();
    let (Some(method), Some(path)) = (parts.next(), parts.next()) else { return Err(bad("malformed request line")) };
    let (method, path) = (method.to_owned(), path.to_owned());
    let mut headers = Vec::new();
    let mut head_bytes = line.len();
    loop {
        line.clear();
        let read = reader.read_line(&mut line).await?;
        head_bytes += read;
        if read == 0 || head_bytes > MAX_HEAD_BYTES {
            return Err(bad("incomplete or oversized request head"));
        }
        let trimmed = line.trim_end_matches(['\r', '\n']);
        if trimmed.is_empty() {
            break;
        }
        if let Some((name, value)) = trimmed.split_once(':') {
            headers.push((name.trim().to_ascii_lowercase(), value.trim().to_owned()));
        }
    }
    let length = headers
        .iter()
        .find(|(name, _)| name == "content-length")
        .and_then(|(_, value)| value.parse::<usize>().ok())
        .unwrap_or(0);
    if length > MAX_BODY_BYTES {
        return Err(bad("request body too large"));
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body).await?;
    let parsed = match serde_json::from_slice::<Value>(&body) {
        Ok(json) => json,
        Err(_) if body.is_empty() => Value::Null,
        Err(_) => Value::String(String::from_utf8_lossy(&body).into_owned()),
    };
    Ok(Some((RecordedRequest { method, path, headers, body: parsed }, body)))
}

async fn append_log(path: &std::path::Path, request: &RecordedRequest) {
    let line = json!({"method": request.method, "path": request.path, "body": request.body}).to_string() + "\n";
    let file = tokio::fs::OpenOptions::new().create(true).append(true).open(path).await;
    if let Ok(mut file) = file {
        // tokio's File hands the bytes to a background write; only flush waits until they are in the file,
        // so the line is there before the answer (a reader of the log may look as soon as it has it).
        let _ = file.write_all(line.as_bytes()).await;
        let _ = file.flush().await;
    }
}

async fn serve_scripted(
    socket: &mut TcpStream,
    api: MockApi,
    response: MockResponse,
    number: usize,
    model: &str,
    request_bytes: usize,
) {
    let bedrock = api == MockApi::BedrockConverseStream;
    let content_type = if bedrock { bedrock::CONTENT_TYPE } else { "text/event-stream" };
    match response {
        MockResponse::Completion(completion) if bedrock => {
            let frames = bedrock::binary_frames(&completion, number, request_bytes);
            stream_frames(socket, frames, &completion, content_type).await;
        }
        MockResponse::Completion(completion) => {
            let frames = frames(api, &completion, number, model, request_bytes);
            let frames = frames.into_iter().map(String::into_bytes).collect();
            stream_frames(socket, frames, &completion, content_type).await;
        }
        MockResponse::HttpError(MockHttpError { status, body, mut headers }) => {
            if bedrock && !headers.iter().any(|(name, _)| name.eq_ignore_ascii_case("x-amzn-errortype")) {
                headers.push(("x-amzn-errortype".to_owned(), bedrock::error_type(status).to_owned()));
            }
            write_plain(socket, status, &headers, &body).await;
        }
        MockResponse::RawSse(raw) => {
            stream_frames(socket, vec![raw.into_bytes()], &MockCompletion::default(), content_type).await;
        }
    }
}

/// Waits until `wanted` requests have arrived in all; after 30 s gives up with how many did.
async fn wait_for_requests(shared: &Shared, wanted: usize) -> Result<(), usize> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    loop {
        // Registered before the count is read, so an arrival in between still wakes it.
        let arrival = shared.arrivals.notified();
        tokio::pin!(arrival);
        arrival.as_mut().enable();
        let seen = lock(&shared.requests).len();
        if seen >= wanted {
            return Ok(());
        }
        if tokio::time::timeout_at(deadline, arrival).await.is_err() {
            return Err(seen);
        }
    }
}

/// Writes a 200 event stream with chunked encoding, pausing `delay_ms` between frames. With
/// `disconnect_after`, the connection is dropped mid-body (no terminating chunk); with `stall_after`,
/// it stays open and silent until the client goes away or the server stops.
async fn stream_frames(socket: &mut TcpStream, frames: Vec<Vec<u8>>, completion: &MockCompletion, content_type: &str) {
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nCache-Control: no-cache\r\n\
         Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n"
    );
    if write_flush(socket, head.as_bytes()).await.is_err() {
        return;
    }
    let frames = match completion.split_seed {
        Some(seed) => split_anywhere(&frames.concat(), seed),
        None => frames,
    };
    for (index, frame) in frames.iter().enumerate() {
        if completion.disconnect_after == Some(index) {
            return;
        }
        if completion.stall_after == Some(index) {
            // Wait for the client to hang up (a read of 0 bytes or an error), never answering.
            let mut scratch = [0u8; 64];
            while matches!(socket.read(&mut scratch).await, Ok(n) if n > 0) {}
            return;
        }
        if index > 0 && completion.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(completion.delay_ms)).await;
        }
        let mut chunk = format!("{:x}\r\n", frame.len()).into_bytes();
        chunk.extend_from_slice(frame.as_ref());
        chunk.extend_from_slice(b"\r\n");
        if write_flush(socket, &chunk).await.is_err() {
            return;
        }
    }
    if completion.disconnect_after.is_none_or(|after| after > frames.len()) {
        let _ = write_flush(socket, b"0\r\n\r\n").await;
    }
}

/// `body` cut into pieces of 1 to 9 bytes at positions drawn from `seed` (xorshift), ignoring
/// event and character boundaries.
fn split_anywhere(body: &[u8], seed: u64) -> Vec<Vec<u8>> {
    let mut state = seed | 1;
    let mut pieces = Vec::new();
    let mut start = 0;
    while start < body.len() {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let end = (start + 1 + (state % 9) as usize).min(body.len());
        pieces.push(body[start..end].to_vec());
        start = end;
    }
    pieces
}

async fn write_flush(socket: &mut TcpStream, bytes: &[u8]) -> std::io::Result<()> {
    socket.write_all(bytes).await?;
    socket.flush().await
}

/// A complete non-streaming response; JSON bodies are labelled as JSON.
async fn write_plain(socket: &mut TcpStream, status: u16, headers: &[(String, String)], body: &str) {
    let content_type =
        if serde_json::from_str::<Value>(body).is_ok() { "application/json" } else { "text/plain; charset=utf-8" };
    let mut head = format!(
        "HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nConnection: close\r\n",
        reason_phrase(status),
        body.len()
    );
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let _ = write_flush(socket, (head + body).as_bytes()).await;
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        408 => "Request Timeout",
        409 => "Conflict",
        413 => "Payload Too Large",
        422 => "Unprocessable Entity",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}
