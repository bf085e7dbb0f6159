//! `<agent> serve`'s own flags (address, token, roots, limits); every other flag is the agent's and applies
//! to each session, as it would to a run on the command line.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use super::engine::normalize_lexically;
use crate::cli::CliArgs;

/// What `serve` was asked for.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    pub listen: SocketAddr,
    /// The bearer token every route but `/healthz` requires; `None`: no token (loopback only).
    pub token: Option<String>,
    /// The directories sessions may work in (resolved, symbolic links followed).
    pub roots: Vec<PathBuf>,
    /// Prompts that may run at once, over all sessions.
    pub max_turns: usize,
    /// The largest request body, in bytes.
    pub max_body_bytes: usize,
    /// The largest image in a prompt, in bytes once decoded.
    pub max_image_bytes: usize,
    /// The agent's own flags, given to every session.
    pub agent_args: Vec<String>,
}

/// A mistake on `serve`'s command line.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeOptionsError {
    #[error("{flag} needs a value")]
    MissingValue { flag: String },
    #[error("{flag} {value}: {problem}")]
    BadValue { flag: String, value: String, problem: String },
    #[error("cannot read the token file {path}: {source}")]
    TokenFile { path: PathBuf, source: std::io::Error },
    #[error("the token file {0} is empty")]
    EmptyToken(PathBuf),
    #[error(
        "--listen {0} is reachable from other machines, and no --token-file is given; pass --token-file FILE \
         (a secret on one line), or listen on 127.0.0.1"
    )]
    OpenWithoutToken(SocketAddr),
    #[error("--root {path}: {source}")]
    Root { path: PathBuf, source: std::io::Error },
    #[error("`{0}` chooses a session or a mode; `serve` takes them from each API request, so leave it out")]
    SessionFlag(String),
    #[error("`{0}`: serve takes no messages; send prompts through the API")]
    Message(String),
}

/// The help for `<agent> serve --help`.
pub fn help_text(agent: &str) -> String {
    format!(
        "Usage: {agent} serve [options] [agent options]\n\n\
         Runs many {agent} sessions behind an HTTP API (see the README's \"Server mode\").\n\n\
         Options:\n  \
         --listen ADDR        address to listen on (default 127.0.0.1:8080; port 0 picks a free one)\n  \
         --token-file FILE    bearer token every route but /healthz requires (needed off loopback)\n  \
         --root DIR           a directory sessions may work in (repeatable; default: the current one)\n  \
         --max-turns N        prompts running at once over all sessions (default 64); more get 429\n  \
         --max-body BYTES     largest request body (default 16777216)\n  \
         --max-image BYTES    largest image in a prompt, decoded (default 5242880)\n  \
         --engine NAME        what runs the sessions: embedded (default), or temporal in an agent built\n                       \
         with --features temporal (see the README's \"Scale-out\")\n  \
         -h, --help           this help\n\n\
         Any other option is the agent's own (--provider, --model, --thinking, --tools, ...) and applies to\n\
         every session unless the session's request says otherwise.\n"
    )
}

/// Refuses agent flags that choose a session or a mode, and messages: the API does that.
pub fn check_agent_args(args: &CliArgs) -> Result<(), ServeOptionsError> {
    let chosen = [
        (args.session.is_some(), "--session"),
        (args.session_id.is_some(), "--session-id"),
        (args.continue_session, "--continue"),
        (args.resume, "--resume"),
        (args.fork.is_some(), "--fork"),
        (args.no_session, "--no-session"),
        (args.mode.is_some(), "--mode"),
        (args.print, "--print"),
        (args.export.is_some(), "--export"),
    ];
    if let Some((_, flag)) = chosen.iter().find(|(given, _)| *given) {
        return Err(ServeOptionsError::SessionFlag((*flag).to_owned()));
    }
    match args.messages.first() {
        Some(message) => Err(ServeOptionsError::Message(message.clone())),
        None => Ok(()),
    }
}

/// Parses `serve`'s arguments (after `serve`); `cwd` is the default root. With `roots_elsewhere` (an engine
/// whose sessions run on other machines), a root missing here is kept as its text instead of refused.
pub fn parse_serve_args(raw: &[String], cwd: &Path, roots_elsewhere: bool) -> Result<ServeOptions, ServeOptionsError> {
    let mut listen: SocketAddr = SocketAddr::from(([127, 0, 0, 1], 8080));
    let mut token_file = None;
    let mut roots = Vec::new();
    let (mut max_turns, mut max_body_bytes, mut max_image_bytes) = (64, 16 * 1024 * 1024, 5 * 1024 * 1024);
    let mut agent_args = Vec::new();
    let mut index = 0;
    while let Some(arg) = raw.get(index) {
        index += 1;
        let (flag, inline) = match arg.split_once('=') {
            Some((flag, value)) if flag.starts_with("--") => (flag, Some(value.to_owned())),
            _ => (arg.as_str(), None),
        };
        let mut value = || -> Result<String, ServeOptionsError> {
            if let Some(value) = inline.clone() {
                return Ok(value);
            }
            let value = raw.get(index).cloned().ok_or_else(|| ServeOptionsError::MissingValue { flag: flag.into() })?;
            index += 1;
            Ok(value)
        };
        match flag {
            "--listen" => listen = parse_value(flag, &value()?, "expected HOST:PORT, e.g. 127.0.0.1:8080")?,
            "--token-file" => token_file = Some(PathBuf::from(value()?)),
            "--root" => roots.push(PathBuf::from(value()?)),
            "--max-turns" => max_turns = parse_count(flag, &value()?)?,
            "--max-body" => max_body_bytes = parse_count(flag, &value()?)?,
            "--max-image" => max_image_bytes = parse_count(flag, &value()?)?,
            "--engine" => {
                let engine = value()?;
                if engine != "embedded" {
                    return Err(ServeOptionsError::BadValue {
                        flag: flag.to_owned(),
                        value: engine,
                        problem: "this agent runs its sessions in this process (`embedded`); `temporal` needs \
                                  an agent built with `pi-gen build --features temporal`"
                            .to_owned(),
                    });
                }
            }
            _ => agent_args.push(arg.clone()),
        }
    }
    let token = token_file.map(|path| read_token(&path)).transpose()?;
    if token.is_none() && !listen.ip().is_loopback() {
        return Err(ServeOptionsError::OpenWithoutToken(listen));
    }
    if roots.is_empty() {
        roots.push(cwd.to_path_buf());
    }
    let roots = roots
        .into_iter()
        .map(|root| {
            let root = if root.is_absolute() { root } else { cwd.join(root) };
            std::fs::canonicalize(&root).or_else(|source| {
                let as_text = roots_elsewhere.then(|| normalize_lexically(&root)).flatten();
                as_text.ok_or(ServeOptionsError::Root { path: root, source })
            })
        })
        .collect::<Result<_, _>>()?;
    Ok(ServeOptions { listen, token, roots, max_turns, max_body_bytes, max_image_bytes, agent_args })
}

fn parse_value<T: std::str::FromStr>(flag: &str, value: &str, expected: &str) -> Result<T, ServeOptionsError> {
    value.parse().map_err(|_| ServeOptionsError::BadValue {
        flag: flag.to_owned(),
        value: value.to_owned(),
        problem: expected.to_owned(),
    })
}

fn parse_count(flag: &str, value: &str) -> Result<usize, ServeOptionsError> {
    match parse_value::<usize>(flag, value, "expected a whole number above 0")? {
        0 => Err(ServeOptionsError::BadValue {
            flag: flag.to_owned(),
            value: value.to_owned(),
            problem: "expected a whole number above 0".to_owned(),
        }),
        count => Ok(count),
    }
}

fn read_token(path: &Path) -> Result<String, ServeOptionsError> {
    let text = std::fs::read_to_string(path)
        .map_err(|source| ServeOptionsError::TokenFile { path: path.to_path_buf(), source })?;
    let token = text.trim();
    if token.is_empty() {
        return Err(ServeOptionsError::EmptyToken(path.to_path_buf()));
    }
    Ok(token.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|arg| (*arg).to_owned()).collect()
    }

    #[test]
    fn serve_flags_are_taken_and_the_rest_goes_to_every_session() {
        let dir = tempfile::tempdir().expect("dir");
        let token = dir.path().join("token");
        std::fs::write(&token, "s3cret\n").expect("token");
        let raw = args(&[
            "--listen=0.0.0.0:9000",
            "--token-file",
            token.to_str().expect("utf-8"),
            "--provider",
            "mock",
            "--model",
            "m",
            "--max-turns",
            "3",
            "--no-tools",
        ]);
        let options = parse_serve_args(&raw, dir.path(), false).expect("valid");
        assert_eq!(options.listen.to_string(), "0.0.0.0:9000");
        assert_eq!(options.token.as_deref(), Some("s3cret"));
        assert_eq!(options.max_turns, 3);
        assert_eq!(options.agent_args, args(&["--provider", "mock", "--model", "m", "--no-tools"]));
        assert_eq!(options.roots, vec![std::fs::canonicalize(dir.path()).expect("canonical")]);
    }

    #[test]
    fn mistakes_are_refused_with_what_to_do() {
        let dir = tempfile::tempdir().expect("dir");
        let refuse = |list: &[&str]| parse_serve_args(&args(list), dir.path(), false).expect_err("refused").to_string();
        assert_eq!(
            refuse(&["--listen", "0.0.0.0:8080"]),
            "--listen 0.0.0.0:8080 is reachable from other machines, and no --token-file is given; pass \
             --token-file FILE (a secret on one line), or listen on 127.0.0.1"
        );
        assert_eq!(refuse(&["--listen", "localhost"]), "--listen localhost: expected HOST:PORT, e.g. 127.0.0.1:8080");
        assert_eq!(refuse(&["--max-turns", "0"]), "--max-turns 0: expected a whole number above 0");
        assert_eq!(refuse(&["--max-turns"]), "--max-turns needs a value");
        assert!(refuse(&["--root", "/no/such/dir"]).starts_with("--root /no/such/dir: "));
        let empty = dir.path().join("empty");
        std::fs::write(&empty, " \n").expect("write");
        assert!(refuse(&["--token-file", empty.to_str().expect("utf-8")]).ends_with("is empty"));
    }
}
