//! A client for an agent running in `--mode rpc`: writes command lines to its stdin and reads the JSON
//! lines it prints, with a timeout so a silent agent fails the test instead of hanging it.

use std::time::Duration;

use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout};

/// How long any one line may take to arrive.
const LINE_TIMEOUT: Duration = Duration::from_secs(30);

/// A running agent in RPC mode.
pub struct RpcClient {
    child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
    /// Every line read so far, in order.
    pub seen: Vec<Value>,
}

impl RpcClient {
    pub(crate) fn new(mut child: Child) -> Self {
        let stdin = child.stdin.take().expect("piped stdin");
        let stdout = child.stdout.take().expect("piped stdout");
        Self { child, stdin: Some(stdin), lines: BufReader::new(stdout).lines(), seen: Vec::new() }
    }

    /// Writes one raw line (a line feed is added).
    pub async fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin still open");
        stdin.write_all(format!("{line}\n").as_bytes()).await.expect("write a command");
        stdin.flush().await.expect("flush");
    }

    /// Writes one command.
    pub async fn send(&mut self, command: Value) {
        self.send_raw(&command.to_string()).await;
    }

    /// The next line the agent prints, parsed; `None` at the end of its output.
    pub async fn next(&mut self) -> Option<Value> {
        let line = tokio::time::timeout(LINE_TIMEOUT, self.lines.next_line())
            .await
            .unwrap_or_else(|_| panic!("no line within {LINE_TIMEOUT:?}; seen so far: {:#?}", self.seen))
            .expect("read stdout")?;
        let value: Value = serde_json::from_str(&line).unwrap_or_else(|error| panic!("not JSON ({error}): {line}"));
        self.seen.push(value.clone());
        Some(value)
    }

    /// Reads lines until one matches; returns it (the lines before it stay in `seen`).
    pub async fn until(&mut self, matches: impl Fn(&Value) -> bool) -> Value {
        loop {
            match self.next().await {
                Some(line) if matches(&line) => return line,
                Some(_) => {}
                None => panic!("output ended before the expected line; seen: {:#?}", self.seen),
            }
        }
    }

    /// Reads lines until the reply to the command with `id`.
    pub async fn reply(&mut self, id: &str) -> Value {
        self.until(|line| line["type"] == "response" && line["id"] == id).await
    }

    /// Sends a command with `id` and returns its reply.
    pub async fn call(&mut self, id: &str, mut command: Value) -> Value {
        command["id"] = Value::from(id);
        self.send(command).await;
        self.reply(id).await
    }

    /// The agent's process id (for signals), while it runs.
    pub fn pid(&self) -> Option<u32> {
        self.child.id()
    }

    /// Reads the rest of the output without closing stdin (the agent ends by itself, e.g. on a signal) and
    /// waits for it to exit; returns its exit code and what it printed.
    pub async fn wait_exit(mut self) -> (Option<i32>, Vec<Value>) {
        let mut rest = Vec::new();
        while let Some(line) = self.next().await {
            rest.push(line);
        }
        let status = tokio::time::timeout(LINE_TIMEOUT, self.child.wait()).await.expect("exits").expect("status");
        (status.code(), rest)
    }

    /// Closes stdin and waits for the agent to exit; returns its exit code and what it printed after.
    pub async fn close(mut self) -> (Option<i32>, Vec<Value>) {
        drop(self.stdin.take());
        let mut rest = Vec::new();
        while let Some(line) = self.next().await {
            rest.push(line);
        }
        let status = tokio::time::timeout(LINE_TIMEOUT, self.child.wait()).await.expect("exits").expect("status");
        (status.code(), rest)
    }
}
