//! Headless Chromium for the HTML export tests: the page served from a loopback server that records every
//! request, loaded with the flags that keep Chromium itself off the network, and read back as the DOM after
//! its script ran, or as a screenshot.

use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};

/// Debian's `chromium` (or `PI_GEN_CHROMIUM`); `scripts/install-test-tools` installs it.
pub fn chromium() -> PathBuf {
    if let Some(path) = std::env::var_os("PI_GEN_CHROMIUM") {
        return PathBuf::from(path);
    }
    let find = || {
        ["/usr/bin/chromium", "/usr/bin/chromium-browser", "/usr/bin/google-chrome"]
            .into_iter()
            .map(PathBuf::from)
            .find(|candidate| candidate.is_file())
    };
    if let Some(found) = find() {
        return found;
    }
    // A plain `cargo test` on a new machine: install it as the README's test command would.
    crate::install_test_tools();
    if let Some(found) = find() {
        return found;
    }
    panic!(
        "no Chromium found: run scripts/install-test-tools (Debian: apt-get install chromium) or set PI_GEN_CHROMIUM"
    );
}

/// A page on 127.0.0.1 that answers `/page.html` and records the path of every request that reaches it.
pub struct PageServer {
    pub base: String,
    requests: Arc<Mutex<Vec<String>>>,
}

impl PageServer {
    pub fn serve(page: Vec<u8>) -> Self {
        Self::serve_with_headers(page, "")
    }

    /// Like [`PageServer::serve`], with extra response header lines (each ending in `\r\n`).
    pub fn serve_with_headers(page: Vec<u8>, headers: &'static str) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let base = format!("http://{}", listener.local_addr().expect("address"));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let seen = requests.clone();
        let page = Arc::new(page);
        std::thread::spawn(move || {
            // A thread per connection: Chromium opens spare connections that may never carry a request.
            for stream in listener.incoming().flatten() {
                let (page, seen) = (page.clone(), seen.clone());
                std::thread::spawn(move || answer(stream, &page, headers, &seen));
            }
        });
        Self { base, requests }
    }

    /// The paths requested so far (query strings dropped).
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("requests").clone()
    }
}

fn answer(mut stream: TcpStream, page: &[u8], headers: &str, seen: &Mutex<Vec<String>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone the stream"));
    let mut request_line = String::new();
    if reader.read_line(&mut request_line).is_err() || request_line.trim().is_empty() {
        return;
    }
    // The rest of the head, up to its blank line.
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|read| read > 2) {
        line.clear();
    }
    let path = request_line.split_whitespace().nth(1).unwrap_or_default();
    let path = path.split('?').next().unwrap_or_default().to_owned();
    seen.lock().expect("requests").push(path.clone());
    let (status, body): (&str, &[u8]) = if path == "/page.html" { ("200 OK", page) } else { ("404 Not Found", b"") };
    let head = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n{headers}\r\n",
        body.len()
    );
    let _ = stream.write_all(head.as_bytes());
    let _ = stream.write_all(body);
}

/// One headless Chromium run with its own profile directory.
fn run_chromium(extra: &[&str], url: &str) -> std::process::Output {
    let profile = tempfile::tempdir().expect("profile dir");
    let output = Command::new(chromium())
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-quic",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--disable-extensions",
            "--hide-scrollbars",
            // Let the page's script finish before the DOM is read.
            "--virtual-time-budget=3000",
        ])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .args(extra)
        .arg(url)
        .env("TZ", "UTC")
        .env("LANG", "en_US.UTF-8")
        .output()
        .expect("run chromium");
    assert!(output.status.success(), "chromium failed: {}", String::from_utf8_lossy(&output.stderr));
    output
}

/// The DOM of `url` after its scripts ran, serialized.
pub fn dump_dom(url: &str, extra: &[&str]) -> String {
    let output = run_chromium(&[&["--dump-dom"], extra].concat(), url);
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// A PNG of `url` at `width`×`height`, written to `path`.
pub fn screenshot(url: &str, path: &Path, width: u32, height: u32, extra: &[&str]) {
    let window = format!("--window-size={width},{height}");
    let target = format!("--screenshot={}", path.display());
    run_chromium(&[&[window.as_str(), target.as_str()], extra].concat(), url);
    assert!(path.is_file(), "no screenshot at {}", path.display());
}

/// Runs the Node.js `script` (a file under tests/fixtures) with playwright-core driving Chromium on `url`;
/// returns the JSON object it prints. `scripts/install-test-tools` installs playwright-core (run here when it
/// is missing).
pub fn drive(script: &Path, url: &str, download_dir: &Path) -> serde_json::Value {
    let root = crate::workspace_root();
    let playwright = root.join("target/test-tools/node/node_modules/playwright-core");
    if !playwright.is_dir() {
        crate::install_test_tools();
    }
    let output = Command::new("node")
        .arg(script)
        .arg(&playwright)
        .arg(chromium())
        .arg(url)
        .arg(download_dir)
        .env("TZ", "UTC")
        .output()
        .expect("run node (Node.js 18 or newer is needed)");
    assert!(output.status.success(), "{} failed: {}", script.display(), String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice(&output.stdout)
        .unwrap_or_else(|error| panic!("{error}: {}", String::from_utf8_lossy(&output.stdout)))
}
