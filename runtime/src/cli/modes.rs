//! Print (`-p`) and json (`--mode json`) modes: run each message as a prompt, then report.

use std::io::Write;
use std::process::ExitCode;

use serde_json::json;

use super::args::OutputMode;
use super::error::CliError;
use super::setup::Prepared;
use crate::protocol::{AgentEvent, AgentMessage, AssistantContent, AssistantMessage, StopReason};

/// Runs `messages` one after another in `mode` and returns the exit code.
pub async fn run_mode(mode: OutputMode, prepared: Prepared, messages: Vec<String>) -> Result<ExitCode, CliError> {
    let agent = prepared.agent;
    let _subscription = if mode == OutputMode::Json {
        write_line(&session_header(&prepared.cwd));
        Some(agent.subscribe(|event: &AgentEvent| match serde_json::to_string(event) {
            Ok(line) => write_line(&line),
            Err(error) => eprintln!("Error: cannot serialize an event: {error}"),
        }))
    } else {
        None
    };
    for message in messages {
        let message = prepared.resources.expand(&message);
        agent.prompt(message).await.map_err(|error| CliError::Agent(error.to_string()))?;
    }
    let last = last_assistant(&agent.state().messages);
    // Like pi, only print mode turns a failed or aborted answer into exit code 1; json mode has
    // already reported it as events.
    if mode == OutputMode::Text
        && let Some(message) =
            last.as_ref().filter(|m| matches!(m.stop_reason, StopReason::Error | StopReason::Aborted))
    {
        let reason = if message.stop_reason == StopReason::Aborted { "aborted" } else { "failed" };
        let text = message.error_message.clone().unwrap_or_else(|| format!("the request {reason}"));
        eprintln!("{text}");
        return Ok(ExitCode::from(1));
    }
    if mode == OutputMode::Text
        && let Some(message) = last
    {
        let mut out = String::new();
        for content in &message.content {
            if let AssistantContent::Text(text) = content {
                out.push_str(&text.text);
                out.push('\n');
            }
        }
        write_raw(&out);
    }
    Ok(ExitCode::SUCCESS)
}

fn last_assistant(messages: &[AgentMessage]) -> Option<AssistantMessage> {
    match messages.last() {
        Some(AgentMessage::Assistant(message)) => Some(message.clone()),
        _ => None,
    }
}

/// The first json-mode line: a session header like the one a session file starts with.
fn session_header(cwd: &std::path::Path) -> String {
    let header = json!({
        "type": "session",
        "version": 3,
        "id": uuid::Uuid::now_v7().to_string(),
        "timestamp": chrono::Utc::now().format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string(),
        "cwd": cwd.to_string_lossy(),
    });
    header.to_string()
}

fn write_line(line: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(line.as_bytes());
    let _ = stdout.write_all(b"\n");
    let _ = stdout.flush();
}

fn write_raw(text: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(text.as_bytes());
    let _ = stdout.flush();
}
