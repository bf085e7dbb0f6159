//! An MCP server on rmcp's server side, for the MCP client tests: a fixed set of tools whose behaviour
//! (echo, structured output, images, tool errors, slowness, crashes, tool-list changes, env and cwd) the
//! tests check, over stdio or streamable HTTP.
//!
//! `mcp-test-server [--http ADDR] [--fail-start MESSAGE] [--delay-start-ms N] [--log FILE]`
//!
//! - stdio by default; `--http 127.0.0.1:0` serves streamable HTTP at `http://ADDR/mcp` and prints the
//!   URL with the bound port as the first stdout line.
//! - `--fail-start MESSAGE` writes MESSAGE to stderr and exits 3 before speaking MCP.
//! - `--delay-start-ms N` sleeps N ms before serving.
//! - `--log FILE` appends a JSON line per tool call (`{"tool": name, "arguments": {...}}`) and, over
//!   HTTP, the first request's headers (`{"headers": {...}}`).
//!
//! Writes `mcp-test-server ready` to stderr when it starts serving.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::io::Write;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation, JsonObject, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, SubscriptionFilter, Tool,
};
use rmcp::service::{RequestContext, SubscriptionContext, SubscriptionSink};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

/// A 1x1 red pixel.
const PNG_BASE64: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAIAAACQd1PeAAAADElEQVR4nGP4z8AAAAMBAQDJ/pLvAAAAAElFTkSuQmCC";

const USAGE: &str = "usage: mcp-test-server [--http ADDR] [--fail-start MESSAGE] [--delay-start-ms N] [--log FILE]";

#[derive(Default)]
struct Options {
    http: Option<SocketAddr>,
    fail_start: Option<String>,
    delay_start: Duration,
    log: Option<PathBuf>,
}

fn parse_options() -> Result<Options, String> {
    let mut options = Options::default();
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let mut value = || args.next().ok_or_else(|| format!("{flag} needs a value\n{USAGE}"));
        match flag.as_str() {
            "--http" => {
                let addr = value()?;
                options.http = Some(addr.parse().map_err(|error| format!("--http {addr}: {error}"))?);
            }
            "--fail-start" => options.fail_start = Some(value()?),
            "--delay-start-ms" => {
                let ms = value()?;
                let ms = ms.parse().map_err(|error| format!("--delay-start-ms {ms}: {error}"))?;
                options.delay_start = Duration::from_millis(ms);
            }
            "--log" => options.log = Some(PathBuf::from(value()?)),
            _ => return Err(format!("unknown argument {flag}\n{USAGE}")),
        }
    }
    Ok(options)
}

/// What every session (stdio has one; HTTP one per client) shares.
#[derive(Default)]
struct State {
    log: Option<PathBuf>,
    /// Tools `add_tool` registered, by name.
    added_tools: Mutex<Vec<String>>,
    listeners: Mutex<Listeners>,
    headers_logged: AtomicBool,
}

/// Open `subscriptions/listen` streams: the 2026-07-28 lifecycle's way to get list_changed.
///
/// rmcp acknowledges a listen request before it calls [`ServerHandler::listen`], so a client may call
/// `add_tool` before the stream is registered here. `generation` counts tool-list changes, and
/// `pending` the generation each listen request saw when it was accepted (oldest first), so `listen`
/// can send a change it missed.
#[derive(Default)]
struct Listeners {
    sinks: Vec<SubscriptionSink>,
    generation: u64,
    pending: VecDeque<u64>,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl State {
    fn log(&self, entry: &Value) {
        let Some(path) = &self.log else { return };
        let appended = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
            .and_then(|mut file| writeln!(file, "{entry}"));
        if let Err(error) = appended {
            eprintln!("mcp-test-server: cannot append to {}: {error}", path.display());
        }
    }
}

#[derive(Clone)]
struct TestServer {
    state: Arc<State>,
}

fn schema(value: Value) -> JsonObject {
    match value {
        Value::Object(object) => object,
        _ => JsonObject::new(),
    }
}

fn object_schema(properties: Value, required: &[&str]) -> JsonObject {
    schema(json!({ "type": "object", "properties": properties, "required": required }))
}

fn builtin_tools() -> Vec<Tool> {
    let string = json!({ "type": "string" });
    let integer = json!({ "type": "integer" });
    vec![
        Tool::new("echo", "Echoes the text back.", object_schema(json!({ "text": string }), &["text"])),
        Tool::new("add", "Adds two integers.", object_schema(json!({ "a": integer, "b": integer }), &["a", "b"]))
            .with_raw_output_schema(Arc::new(object_schema(json!({ "sum": integer }), &["sum"]))),
        Tool::new("image", "Returns a tiny PNG image and a caption.", object_schema(json!({}), &[])),
        Tool::new(
            "fail",
            "Fails with the given message (a tool error, isError: true).",
            object_schema(json!({ "message": string }), &["message"]),
        ),
        Tool::new(
            "slow",
            "Sleeps for ms milliseconds, then answers.",
            object_schema(json!({ "ms": integer }), &["ms"]),
        ),
        Tool::new(
            "die",
            "Exits the server process at once (exit code 7) without answering.",
            object_schema(json!({}), &[]),
        ),
        Tool::new(
            "add_tool",
            "Registers a new tool with the given name that echoes its text argument.",
            object_schema(json!({ "name": string }), &["name"]),
        ),
        Tool::new(
            "env",
            "Returns the value of an environment variable in the server process.",
            object_schema(json!({ "name": string }), &["name"]),
        ),
        Tool::new("cwd", "Returns the server's current directory.", object_schema(json!({}), &[])),
    ]
}

fn added_tool(name: &str) -> Tool {
    Tool::new(
        name.to_owned(),
        format!("Echoes its text prefixed with {name}."),
        object_schema(json!({ "text": { "type": "string" } }), &["text"]),
    )
}

fn text(text: impl Into<String>) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(text)]).into()
}

fn string_arg(arguments: &JsonObject, name: &str) -> Result<String, ErrorData> {
    match arguments.get(name) {
        Some(Value::String(value)) => Ok(value.clone()),
        _ => Err(ErrorData::invalid_params(format!("argument {name} must be a string"), None)),
    }
}

fn integer_arg(arguments: &JsonObject, name: &str) -> Result<i64, ErrorData> {
    arguments
        .get(name)
        .and_then(Value::as_i64)
        .ok_or_else(|| ErrorData::invalid_params(format!("argument {name} must be an integer"), None))
}

impl TestServer {
    fn tools(&self) -> Vec<Tool> {
        let mut tools = builtin_tools();
        tools.extend(lock(&self.state.added_tools).iter().map(|name| added_tool(name)));
        tools
    }

    async fn add_tool(&self, name: String, context: &RequestContext<RoleServer>) -> CallToolResponse {
        {
            let mut added = lock(&self.state.added_tools);
            if added.contains(&name) || builtin_tools().iter().any(|tool| tool.name == name) {
                return CallToolResult::error(vec![ContentBlock::text(format!("tool {name} already exists"))]).into();
            }
            added.push(name.clone());
        }
        // A session that began with `initialize` gets the notification on its connection; requests of the
        // 2026-07-28 lifecycle carry their protocol version in _meta and get it on their listen streams.
        if context.meta.protocol_version().is_none()
            && let Err(error) = context.peer.notify_tool_list_changed().await
        {
            eprintln!("mcp-test-server: sending tools/list_changed failed: {error}");
        }
        let sinks = {
            let mut listeners = lock(&self.state.listeners);
            listeners.generation += 1;
            listeners.sinks.clone()
        };
        for listener in sinks {
            if let Err(error) = listener.notify_tool_list_changed().await {
                eprintln!("mcp-test-server: sending tools/list_changed to a listener failed: {error}");
            }
        }
        text(format!("added {name}"))
    }
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().enable_tool_list_changed().build())
            .with_server_info(Implementation::new("mcp-test-server", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools().into_iter().find(|tool| tool.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let arguments = request.arguments.unwrap_or_default();
        self.state.log(&json!({ "tool": request.name, "arguments": arguments }));
        match request.name.as_ref() {
            "echo" => Ok(text(string_arg(&arguments, "text")?)),
            "add" => {
                let sum = integer_arg(&arguments, "a")? + integer_arg(&arguments, "b")?;
                let mut result = CallToolResult::success(vec![ContentBlock::text(sum.to_string())]);
                result.structured_content = Some(json!({ "sum": sum }));
                Ok(result.into())
            }
            "image" => Ok(CallToolResult::success(vec![
                ContentBlock::image(PNG_BASE64, "image/png"),
                ContentBlock::text("a 1x1 red pixel"),
            ])
            .into()),
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text(string_arg(&arguments, "message")?)]).into()),
            "slow" => {
                let ms = integer_arg(&arguments, "ms")?.max(0).unsigned_abs();
                tokio::select! {
                    () = tokio::time::sleep(Duration::from_millis(ms)) => Ok(text(format!("done after {ms} ms"))),
                    () = context.ct.cancelled() => Err(ErrorData::internal_error("cancelled", None)),
                }
            }
            "die" => {
                eprintln!("mcp-test-server: dying as asked");
                std::process::exit(7)
            }
            "add_tool" => Ok(self.add_tool(string_arg(&arguments, "name")?, &context).await),
            "env" => {
                let name = string_arg(&arguments, "name")?;
                Ok(text(std::env::var(&name).unwrap_or_else(|_| "<unset>".to_owned())))
            }
            "cwd" => Ok(text(match std::env::current_dir() {
                Ok(dir) => dir.display().to_string(),
                Err(error) => format!("<error: {error}>"),
            })),
            name => {
                if lock(&self.state.added_tools).iter().any(|added| added == name) {
                    Ok(text(format!("{name}: {}", string_arg(&arguments, "text")?)))
                } else {
                    Err(ErrorData::invalid_params(format!("unknown tool {name}"), None))
                }
            }
        }
    }

    fn accepted_subscription_filter(&self, requested: &SubscriptionFilter) -> Option<SubscriptionFilter> {
        let mut listeners = lock(&self.state.listeners);
        let generation = listeners.generation;
        listeners.pending.push_back(generation);
        Some(requested.clone())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let sink = context.sink().clone();
        let missed_change = {
            let mut listeners = lock(&self.state.listeners);
            listeners.sinks.push(sink.clone());
            let accepted_at = listeners.pending.pop_front().unwrap_or(listeners.generation);
            accepted_at != listeners.generation
        };
        if missed_change && sink.accepted().tools_list_changed == Some(true) {
            let _ = sink.notify_tool_list_changed().await;
        }
        context.cancelled().await;
        lock(&self.state.listeners).sinks.retain(|listener| listener.id() != sink.id());
        Ok(())
    }
}

type Body = http_body_util::combinators::BoxBody<Bytes, Infallible>;

async fn serve_http(server: TestServer, addr: SocketAddr) -> std::io::Result<()> {
    let listener = tokio::net::TcpListener::bind(addr).await?;
    let url = format!("http://{}/mcp", listener.local_addr()?);
    let state = server.state.clone();
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default().disable_allowed_hosts(),
    );
    let mut stdout = std::io::stdout();
    writeln!(stdout, "{url}")?;
    stdout.flush()?;
    eprintln!("mcp-test-server ready");
    loop {
        let (stream, _) = listener.accept().await?;
        let service = service.clone();
        let state = state.clone();
        let handler = service_fn(move |request: Request<Incoming>| {
            let service = service.clone();
            let state = state.clone();
            async move {
                if !state.headers_logged.swap(true, Ordering::SeqCst) {
                    let headers: serde_json::Map<String, Value> = request
                        .headers()
                        .iter()
                        .map(|(name, value)| {
                            (name.as_str().to_owned(), Value::String(String::from_utf8_lossy(value.as_bytes()).into()))
                        })
                        .collect();
                    state.log(&json!({ "headers": headers }));
                }
                if request.uri().path() != "/mcp" {
                    let mut response = Response::new(Full::new(Bytes::from_static(b"not found\n")).boxed());
                    *response.status_mut() = StatusCode::NOT_FOUND;
                    return Ok::<Response<Body>, Infallible>(response);
                }
                Ok(service.handle(request).await)
            }
        });
        tokio::spawn(async move {
            // A client that drops its connection mid-stream is routine, not worth a message.
            let _ = http1::Builder::new().serve_connection(TokioIo::new(stream), handler).await;
        });
    }
}

async fn serve_stdio(server: TestServer) -> Result<(), String> {
    eprintln!("mcp-test-server ready");
    let running =
        server.serve(rmcp::transport::stdio()).await.map_err(|error| format!("the MCP handshake failed: {error}"))?;
    running.waiting().await.map_err(|error| format!("the server task failed: {error}"))?;
    Ok(())
}

fn main() {
    let options = match parse_options() {
        Ok(options) => options,
        Err(message) => {
            eprintln!("mcp-test-server: {message}");
            std::process::exit(2);
        }
    };
    if let Some(message) = options.fail_start {
        eprintln!("{message}");
        std::process::exit(3);
    }
    std::thread::sleep(options.delay_start);
    let server = TestServer { state: Arc::new(State { log: options.log, ..State::default() }) };
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("mcp-test-server: cannot start tokio: {error}");
            std::process::exit(1);
        }
    };
    let result = runtime.block_on(async move {
        match options.http {
            Some(addr) => serve_http(server, addr).await.map_err(|error| format!("serving HTTP on {addr}: {error}")),
            None => serve_stdio(server).await,
        }
    });
    if let Err(message) = result {
        eprintln!("mcp-test-server: {message}");
        std::process::exit(1);
    }
}
