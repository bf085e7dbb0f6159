//! The login's callback server: a listener on the provider's registered port that waits for the browser's
//! redirect (`GET <path>?code=…&state=…`), checks the state, and answers with a short page.

use reqwest::Url;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The code the browser brought back.
pub(crate) struct CallbackCode {
    pub code: String,
    pub state: Option<String>,
}

pub(crate) struct CallbackServer {
    listener: TcpListener,
    path: &'static str,
    expected_state: String,
    provider_name: &'static str,
}

impl CallbackServer {
    /// Listens on `host:port`.
    pub(crate) async fn bind(
        host: &str,
        port: u16,
        path: &'static str,
        expected_state: String,
        provider_name: &'static str,
    ) -> std::io::Result<CallbackServer> {
        let listener = TcpListener::bind((host, port)).await?;
        Ok(CallbackServer { listener, path, expected_state, provider_name })
    }

    /// Answers requests until one brings a code with the right state.
    pub(crate) async fn wait_for_code(&self) -> CallbackCode {
        loop {
            let Ok((socket, _)) = self.listener.accept().await else {
                // Out of file descriptors or the like: try again shortly rather than spin.
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                continue;
            };
            if let Some(code) = self.serve(socket).await {
                return code;
            }
        }
    }

    async fn serve(&self, mut socket: TcpStream) -> Option<CallbackCode> {
        let target = read_request_target(&mut socket).await?;
        let url = Url::parse(&format!("http://localhost{target}")).ok()?;
        let param = |name: &str| url.query_pairs().find(|(key, _)| key == name).map(|(_, value)| value.into_owned());
        let (status, message, code) = if url.path() != self.path {
            (404, "This address is not the login callback.".to_owned(), None)
        } else if let Some(error) = param("error") {
            (400, format!("{} did not complete the login: {error}.", self.provider_name), None)
        } else if param("state").as_deref() != Some(self.expected_state.as_str()) {
            (400, "The login's state does not match; start the login again.".to_owned(), None)
        } else if let Some(code) = param("code") {
            let done = format!("{} login complete. You can close this window.", self.provider_name);
            (200, done, Some(CallbackCode { code, state: param("state") }))
        } else {
            (400, "The callback carries no authorization code.".to_owned(), None)
        };
        let page = format!(
            "<!doctype html><html><head><meta charset=\"utf-8\"><title>pi login</title></head><body><p>{}</p></body></html>",
            escape_html(&message)
        );
        let reason = if status == 200 { "OK" } else { "Error" };
        let response = format!(
            "HTTP/1.1 {status} {reason}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{page}",
            page.len()
        );
        let _ = socket.write_all(response.as_bytes()).await;
        let _ = socket.shutdown().await;
        code
    }
}

/// The request target of an HTTP request line (`GET /callback?… HTTP/1.1`), reading at most 16 KiB.
async fn read_request_target(socket: &mut TcpStream) -> Option<String> {
    let mut buffer = Vec::new();
    let mut chunk = [0u8; 2048];
    while !buffer.windows(2).any(|pair| pair == b"\r\n") && buffer.len() < 16 * 1024 {
        let read = socket.read(&mut chunk).await.ok()?;
        if read == 0 {
            break;
        }
        buffer.extend_from_slice(&chunk[..read]);
    }
    let text = String::from_utf8_lossy(&buffer);
    let line = text.lines().next()?;
    let mut parts = line.split(' ');
    let (Some(_method), Some(target)) = (parts.next(), parts.next()) else { return None };
    Some(target.to_owned())
}

fn escape_html(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}
