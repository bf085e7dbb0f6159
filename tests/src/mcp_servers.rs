//! The MCP servers the MCP client tests talk to: the rmcp one (the `mcp-test-server` binary of this
//! package) and the Python SDK one (tests/fixtures/mcp/python_server.py in the venv that
//! scripts/install-test-tools makes), and starting either over streamable HTTP.
//!
//! Both offer the same tools: echo, add (structured), image, fail, slow, die, add_tool, env, cwd.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use crate::workspace_root;

/// How long a server may take to print its URL (the Python SDK alone takes ~2 s to import).
const START_TIMEOUT: Duration = Duration::from_secs(60);

/// The `mcp-test-server` binary.
pub fn rmcp_server_bin() -> PathBuf {
    crate::package_bin("mcp-test-server")
}

/// The Python MCP server script; run it with [`python_mcp`].
pub fn python_server_script() -> PathBuf {
    workspace_root().join("tests").join("fixtures").join("mcp").join("python_server.py")
}

/// The venv's python, which has the pinned `mcp` package. Runs scripts/install-test-tools once per test
/// process: it returns at once when the venv is current, and parallel runs wait for each other on its
/// lock. Panics (failing the test, never skipping it) when the install fails.
pub fn python_mcp() -> PathBuf {
    crate::install_test_tools();
    workspace_root().join("target").join("test-tools").join("mcp-venv").join("bin").join("python")
}

/// A command that runs `mcp-test-server` (stdio unless `args` has `--http ADDR`).
pub fn rmcp_server_command(args: &[&str]) -> Command {
    let mut command = Command::new(rmcp_server_bin());
    command.args(args);
    command
}

/// A command that runs the Python MCP server (stdio unless `args` has `--http PORT`).
pub fn python_server_command(args: &[&str]) -> Command {
    let mut command = Command::new(python_mcp());
    command.arg(python_server_script()).args(args);
    command
}

/// A running server process, killed (and reaped) on drop. Its stderr goes to a file, read by
/// [`ServerGuard::stderr`].
pub struct ServerGuard {
    child: Child,
    stderr: tempfile::NamedTempFile,
}

impl ServerGuard {
    /// What the server wrote to stderr so far.
    pub fn stderr(&self) -> String {
        std::fs::read_to_string(self.stderr.path()).unwrap_or_default()
    }

    /// The server's process id.
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    /// The child process, e.g. to check whether it exited.
    pub fn child(&mut self) -> &mut Child {
        &mut self.child
    }
}

impl Drop for ServerGuard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `command` (a server that prints its URL as the first stdout line) and waits for the URL.
/// Panics with the server's stderr when it exits or stays silent instead.
pub fn spawn_http_server(mut command: Command) -> (ServerGuard, String) {
    let stderr = tempfile::NamedTempFile::new().expect("a temp file for the server's stderr");
    let stderr_file = stderr.reopen().expect("reopening the stderr temp file");
    let program = format!("{command:?}");
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(stderr_file)
        .spawn()
        .unwrap_or_else(|error| panic!("cannot start {program}: {error}"));
    let stdout = child.stdout.take().expect("piped stdout");
    let mut guard = ServerGuard { child, stderr };
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::new(stdout);
        let mut line = String::new();
        let _ = reader.read_line(&mut line);
        let _ = sender.send(line);
        // Keep draining, so the server never blocks on (or dies of) a full or closed stdout.
        let _ = std::io::copy(&mut reader, &mut std::io::sink());
    });
    let line = receiver.recv_timeout(START_TIMEOUT).unwrap_or_default();
    let url = line.trim();
    if !url.starts_with("http://") {
        let status = guard.child.try_wait().ok().flatten();
        panic!(
            "{program} printed no URL within {START_TIMEOUT:?} (stdout {line:?}, exit status {status:?}); stderr:\n{}",
            guard.stderr()
        );
    }
    let url = url.to_owned();
    (guard, url)
}

/// Starts `mcp-test-server --http 127.0.0.1:0` with `args`; returns it and its `http://…/mcp` URL.
pub fn spawn_rmcp_http_server(args: &[&str]) -> (ServerGuard, String) {
    let mut args_with_http = vec!["--http", "127.0.0.1:0"];
    args_with_http.extend_from_slice(args);
    spawn_http_server(rmcp_server_command(&args_with_http))
}

/// Starts the Python server on a free port with `args`; returns it and its `http://…/mcp` URL.
pub fn spawn_python_http_server(args: &[&str]) -> (ServerGuard, String) {
    let mut args_with_http = vec!["--http", "0"];
    args_with_http.extend_from_slice(args);
    spawn_http_server(python_server_command(&args_with_http))
}
