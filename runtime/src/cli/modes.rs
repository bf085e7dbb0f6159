//! Print (`-p`) and json (`--mode json`) modes: run each message as a prompt, then report. Also the session
//! setup and line output the rpc mode shares.

use std::io::Write;
use std::process::ExitCode;

use std::sync::Arc;

use super::args::OutputMode;
use super::error::CliError;
use super::setup::Prepared;
use crate::agent_session::{AgentSession, PromptExpander, SessionEventSink, SessionExtras};
use crate::extension::{ExtensionErrorEvent, SessionChangeReason, SessionShutdownEvent, SessionStartEvent};
use crate::protocol::{AgentEvent, AgentMessage, AssistantContent, SessionOnlyEvent, StopReason};
use crate::session::SessionHeader;

/// Runs `messages` one after another in `mode` and returns the exit code.
pub async fn run_mode(mode: OutputMode, prepared: Prepared, messages: Vec<String>) -> Result<ExitCode, CliError> {
    let json = mode == OutputMode::Json;
    if json {
        write_line(&session_header(prepared.session.header()));
    }
    let emit: SessionEventSink = Arc::new(move |event: &SessionOnlyEvent| {
        if json {
            write_json(event);
        }
    });
    // Like pi's print and json modes: a failing extension is reported on stderr and the run goes on.
    prepared.extensions.on_error(Arc::new(|error: &ExtensionErrorEvent| {
        eprintln!("Warning: extension {} failed on {}: {}", error.extension_path, error.event, error.error);
    }));
    let session = open_session(prepared, emit)?;
    let agent = session.agent();
    if json {
        session.subscribe(|event: &AgentEvent| write_json(event));
    }
    let runner = session.extensions();
    let start = SessionStartEvent { reason: SessionChangeReason::Startup, previous_session_file: None };
    runner.emit_session_start(&start).await;
    let mut failure = None;
    for message in messages {
        if let Err(error) = session.prompt(message).await {
            failure = Some(CliError::Agent(error.to_string()));
            break;
        }
    }
    let shutdown = SessionShutdownEvent { reason: SessionChangeReason::Quit, target_session_file: None };
    runner.emit_session_shutdown(&shutdown).await;
    if let Some(error) = failure {
        return Err(error);
    }
    let last = agent.state().messages.last().and_then(AgentMessage::as_assistant).cloned();
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

/// The prepared agent bound to its session file, with the extensions, the prompt builder and prompt
/// expansion; session-only events go to `emit`.
pub(super) fn open_session(prepared: Prepared, emit: SessionEventSink) -> Result<AgentSession, CliError> {
    let resources = prepared.resources;
    let expander: PromptExpander = Arc::new(move |text: &str| resources.expand(text));
    let extras = SessionExtras {
        runner: prepared.extensions.clone(),
        prompt_builder: Some(prepared.prompt_builder),
        expander: Some(expander),
        cwd: prepared.cwd,
        require_api_key: true,
    };
    let session = AgentSession::with_extras(
        prepared.agent,
        prepared.session,
        prepared.session_settings,
        prepared.registry,
        Some(prepared.api_key),
        emit,
        extras,
    )?;
    if let Some((model, key)) = prepared.summary_model {
        session.set_summary_model(Some((model, Some(key))));
    }
    Ok(session)
}

/// The first json-mode line: the header of the session file this run writes.
fn session_header(header: &SessionHeader) -> String {
    serde_json::to_string(header).unwrap_or_default()
}

pub(super) fn write_json(value: &impl serde::Serialize) {
    match serde_json::to_string(value) {
        Ok(line) => write_line(&line),
        Err(error) => eprintln!("Error: cannot serialize an event: {error}"),
    }
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
