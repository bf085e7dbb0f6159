//! Print (`-p`) and json (`--mode json`) modes: run each message as a prompt, then report. Also the session
//! setup and line output the rpc mode shares.

use std::io::Write;
use std::process::ExitCode;

use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::args::OutputMode;
use super::error::CliError;
use super::setup::Prepared;
use super::signals::{SETTLE_TIMEOUT, StopSignals};
use super::yaml_commands::{YamlCommandOutcome, notify_request, run_command_definition, session_yaml_command};
use crate::agent_session::{AgentSession, PromptOptions, SessionEventSink, SessionExtras};
use crate::extension::{ExtensionErrorEvent, SessionChangeReason, SessionShutdownEvent, SessionStartEvent};
use crate::protocol::{AgentEvent, AgentMessage, AssistantContent, SessionOnlyEvent, StopReason, WireEvent};
use crate::session::SessionHeader;
use std::time::Duration;

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
    let (commands, tool_env) = (prepared.resources.commands.clone(), prepared.tool_env.clone());
    let level = prepared.pi_compat;
    let session = open_session(prepared, emit).await?;
    let agent = session.agent();
    if json {
        session.subscribe(move |event: &AgentEvent| write_json(&WireEvent::new(event, level)));
    }
    let runner = session.extensions();
    let start = SessionStartEvent { reason: SessionChangeReason::Startup, previous_session_file: None };
    runner.emit_session_start(&start).await;
    let mut signals = StopSignals::install().map_err(CliError::Runtime)?;
    let stop = CancellationToken::new();
    let run = run_messages(&session, &commands, &tool_env, messages, json, &stop);
    tokio::pin!(run);
    let (failure, prompted) = tokio::select! {
        outcome = &mut run => outcome,
        code = signals.next() => {
            // Stop now: the abort ends the stream and kills running tools (and a running YAML command); what
            // finished is saved on the way. The abort is repeated until the run ends, in case the signal came
            // while a prompt was starting (a new prompt begins with fresh cancellation).
            stop.cancel();
            let settle = async {
                loop {
                    session.abort();
                    if tokio::time::timeout(Duration::from_millis(100), &mut run).await.is_ok() {
                        break;
                    }
                }
            };
            tokio::select! {
                _ = tokio::time::timeout(SETTLE_TIMEOUT, settle) => {}
                code = signals.next() => return Ok(ExitCode::from(code)),
            }
            let shutdown = SessionShutdownEvent { reason: SessionChangeReason::Quit, target_session_file: None };
            runner.emit_session_shutdown(&shutdown).await;
            return Ok(ExitCode::from(code));
        }
    };
    let shutdown = SessionShutdownEvent { reason: SessionChangeReason::Quit, target_session_file: None };
    runner.emit_session_shutdown(&shutdown).await;
    if let Some(error) = failure {
        return Err(error);
    }
    if !prompted {
        // Only commands that showed their output ran (or nothing at all): there is no answer to print.
        return Ok(ExitCode::SUCCESS);
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
        && let Some(schema) = session.output_schema()
        && let Some(message) = &last
    {
        // The JSON alone, on one line.
        let value = schema.check_answer(message).map_err(|problems| CliError::OutputMismatch(problems.join("; ")))?;
        write_raw(&format!("{value}\n"));
        return Ok(ExitCode::SUCCESS);
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

/// Runs each message in turn (a YAML command, or a prompt); stops at the first failure or once `stop` is
/// cancelled (which also cancels a running command). Returns the failure and whether any prompt ran.
async fn run_messages(
    session: &AgentSession,
    commands: &[crate::definition::CommandDefinition],
    tool_env: &crate::tools::ToolEnvironment,
    messages: Vec<String>,
    json: bool,
    stop: &CancellationToken,
) -> (Option<CliError>, bool) {
    let mut prompted = false;
    for message in messages {
        if stop.is_cancelled() {
            break;
        }
        // The YAML's commands run first, as pi runs extension commands; their output is shown here.
        let (prompt, expand) = match session_yaml_command(session, commands, &message) {
            None => (message, true),
            Some((command, args)) => match run_command_definition(command, args, tool_env, stop).await {
                YamlCommandOutcome::Prompt(text) => (text, false),
                YamlCommandOutcome::Show(output) => {
                    show_output(json, &output);
                    continue;
                }
                YamlCommandOutcome::Error(error) => return (Some(CliError::Command(error)), prompted),
            },
        };
        prompted = true;
        let options = PromptOptions { expand, ..PromptOptions::default() };
        if let Err(error) = session.prompt_with(prompt, options).await {
            return (Some(CliError::Agent(error.to_string())), prompted);
        }
    }
    (None, prompted)
}

/// The prepared agent bound to its session file, with the extensions, the prompt builder and prompt
/// expansion; session-only events go to `emit`.
pub(super) async fn open_session(prepared: Prepared, emit: SessionEventSink) -> Result<AgentSession, CliError> {
    let mcp = prepared.mcp.clone();
    let expander = prepared.resources.into_expander();
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
    session.set_fallbacks(prepared.fallbacks);
    session.set_output_schema(prepared.output_schema);
    if let Some((model, key)) = prepared.summary_model {
        session.set_summary_model(Some((model, Some(key))));
    }
    // The user's later choices (model, thinking level, queue modes, ...) are kept as pi keeps them.
    session.set_preference_store(Some(Arc::new(super::settings_store::SettingsFileStore::new(&prepared.agent_dir))));
    if let Some(run) = &mcp {
        super::mcp::attach(&session, run).await?;
    }
    Ok(session)
}

/// A YAML command's output: as it is in print mode, as pi's `notify` request in json mode.
fn show_output(json: bool, output: &str) {
    if json {
        write_json(&notify_request(output, false));
    } else if !output.is_empty() {
        write_raw(&format!("{output}\n"));
    }
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

pub(super) fn write_line(line: &str) {
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
