//! A `serve` process for the tests: started on a free loopback port, its address read from stderr, and an
//! HTTP client for its API (JSON requests, and the events read as server-sent events).

use std::path::Path;
use std::time::Duration;

use pi_gen_tests::Sandbox;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Child;

/// How long any one event or reply may take.
pub const WAIT: Duration = Duration::from_secs(30);

/// A running `<agent> serve`.
pub struct Server {
    pub child: Child,
    pub base: String,
    pub token: Option<String>,
    pub http: reqwest::Client,
    /// What the server printed on stderr, collected in the background.
    pub stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Server {
    /// Starts `binary serve --listen 127.0.0.1:0` plus `args` in the sandbox and waits for its address.
    pub async fn start(sandbox: &Sandbox, binary: &Path, args: &[&str], token: Option<&str>) -> Self {
        Self::start_env(sandbox, binary, args, token, &[]).await
    }

    /// [`Server::start`] with extra environment variables.
    pub async fn start_env(
        sandbox: &Sandbox,
        binary: &Path,
        args: &[&str],
        token: Option<&str>,
        env: &[(&str, &str)],
    ) -> Self {
        let mut all = vec!["serve", "--listen", "127.0.0.1:0"];
        let token_file = sandbox.root.path().join("token");
        if let Some(token) = token {
            std::fs::write(&token_file, format!("{token}\n")).expect("token file");
            all.extend(["--token-file", token_file.to_str().expect("utf-8")]);
        }
        all.extend(args);
        let mut child = sandbox.spawn_piped_env(binary, &all, env);
        let stderr = child.stderr.take().expect("piped stderr");
        let mut lines = BufReader::new(stderr).lines();
        let base = tokio::time::timeout(WAIT, async {
            while let Some(line) = lines.next_line().await.expect("stderr") {
                if let Some((_, address)) = line.split_once(" serving on ") {
                    let address = address.split_whitespace().next().expect("an address");
                    return address.to_owned();
                }
            }
            panic!("serve ended before it listened");
        })
        .await
        .expect("serve listens in time");
        let collected = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = collected.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                let mut text = sink.lock().expect("stderr lock");
                text.push_str(&line);
                text.push('\n');
            }
        });
        let http = reqwest::Client::builder().no_proxy().build().expect("client");
        Self { child, base, token: token.map(str::to_owned), http, stderr: collected }
    }

    fn request(&self, method: reqwest::Method, path: &str) -> reqwest::RequestBuilder {
        let request = self.http.request(method, format!("{}{path}", self.base));
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }

    /// Sends `body` as JSON; returns the status and the body (JSON, or `null` when empty).
    pub async fn call(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> (u16, Value) {
        let response = self.send(method, path, body).await;
        let status = response.status().as_u16();
        let text = response.text().await.expect("body");
        let body = if text.is_empty() { Value::Null } else { serde_json::from_str(&text).expect("JSON body") };
        (status, body)
    }

    /// Sends `body` as JSON (with the server's token); returns the response as it came.
    pub async fn send(&self, method: reqwest::Method, path: &str, body: Option<Value>) -> reqwest::Response {
        let mut request = self.request(method, path);
        if let Some(body) = body {
            request = request.header("content-type", "application/json").body(body.to_string());
        }
        tokio::time::timeout(WAIT, request.send()).await.expect("in time").expect("sent")
    }

    pub async fn post(&self, path: &str, body: Value) -> (u16, Value) {
        self.call(reqwest::Method::POST, path, Some(body)).await
    }

    pub async fn get(&self, path: &str) -> (u16, Value) {
        self.call(reqwest::Method::GET, path, None).await
    }

    /// Creates a session in the sandbox's working directory; returns its id.
    pub async fn create_session(&self, sandbox: &Sandbox) -> String {
        let (status, body) = self.post("/v1/sessions", serde_json::json!({ "cwd": sandbox.work_dir() })).await;
        assert_eq!(status, 201, "{body}");
        body["id"].as_str().expect("an id").to_owned()
    }

    /// Opens the session's event stream, after `last_event_id` when given.
    pub async fn events(&self, id: &str, last_event_id: Option<u64>) -> Events {
        let mut request = self.request(reqwest::Method::GET, &format!("/v1/sessions/{id}/events"));
        if let Some(last) = last_event_id {
            request = request.header("Last-Event-ID", last.to_string());
        }
        let response = request.send().await.expect("events");
        assert_eq!(response.status().as_u16(), 200);
        assert_eq!(response.headers()["content-type"], "text/event-stream");
        Events { response, buffer: String::new(), seen: Vec::new() }
    }
}

/// A response body as JSON.
pub async fn json_body(response: reqwest::Response) -> Value {
    let text = response.text().await.expect("body");
    serde_json::from_str(&text).unwrap_or_else(|error| panic!("{error}: {text}"))
}

/// A session's event stream.
pub struct Events {
    response: reqwest::Response,
    buffer: String,
    /// Every event read so far: its number and its data, parsed.
    pub seen: Vec<(u64, Value)>,
}

impl Events {
    /// The next event; `None` when the stream ends. Keep-alive comments do not count as events.
    pub async fn next(&mut self) -> Option<(u64, Value)> {
        let deadline = tokio::time::Instant::now() + WAIT;
        loop {
            if let Some(end) = self.buffer.find("\n\n") {
                let block: String = self.buffer.drain(..end + 2).collect();
                let (mut id, mut data) = (None, None);
                for line in block.lines() {
                    if let Some(value) = line.strip_prefix("id: ").or_else(|| line.strip_prefix("id:")) {
                        id = Some(value.parse::<u64>().expect("a numeric id"));
                    } else if let Some(value) = line.strip_prefix("data: ").or_else(|| line.strip_prefix("data:")) {
                        assert!(data.is_none(), "one data line per event: {block}");
                        data = Some(value.to_owned());
                    }
                }
                // Keep-alive comments carry neither.
                let (Some(id), Some(data)) = (id, data) else { continue };
                let value: Value = serde_json::from_str(&data).unwrap_or_else(|error| panic!("{error}: {data}"));
                self.seen.push((id, value.clone()));
                return Some((id, value));
            }
            let chunk = tokio::time::timeout_at(deadline, self.response.chunk())
                .await
                .unwrap_or_else(|_| panic!("no event within {WAIT:?}; seen: {:#?}", self.seen))
                .expect("read the stream")?;
            self.buffer.push_str(&String::from_utf8_lossy(&chunk));
        }
    }

    /// Reads events until one of `kind`; returns it.
    pub async fn until(&mut self, kind: &str) -> Value {
        loop {
            match self.next().await {
                Some((_, event)) if event["type"] == kind => return event,
                Some(_) => {}
                None => panic!("the stream ended before {kind}; seen: {:#?}", self.seen),
            }
        }
    }
}
