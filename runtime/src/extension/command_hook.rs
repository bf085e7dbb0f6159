//! Command hooks: an external program run for one event. The YAML's `hooks:` entries with a `command:`
//! become a [`CommandHook`], an [`Extension`] subscribed to exactly that event. For each event the command
//! runs with `bash -c` in the session's working directory, in its own process group, with the event as
//! JSON on stdin (`{"type": "<event>", ...the event's fields, "cwd", "sessionId"}`) and `PI_HOOK_EVENT` /
//! `PI_SESSION_ID` in its environment. Exit 0 with empty stdout changes nothing; otherwise stdout must be
//! the event's JSON answer (see `command_hook_answer.rs` and docs/hooks.md). A non-zero exit, a signal, a
//! timeout (default 30 s; the whole process group is killed) or an invalid answer is an error, which the
//! runner reports as an `extension_error` (for `tool_call`: the call is blocked).

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::api::{EventKind, EventSet, Extension, ExtensionError, HookResult};
use super::context::ExtensionContext;
use super::declarative::TextMatcher;
use super::events::*;
use super::hook_definition::{HookAction, HookDefinition};
use super::results::*;
use super::session_events::*;
use crate::protocol::AgentMessage;

#[path = "command_hook_answer.rs"]
mod answer;
#[path = "command_hook_process.rs"]
mod process;

/// Seconds a hook may run when the YAML gives no `timeout`.
pub const DEFAULT_TIMEOUT_SECS: u64 = 30;
/// Lines of stderr quoted in the error of a failed run.
const STDERR_LINES: usize = 20;

/// The events a `tool` filter applies to.
const TOOL_EVENTS: &[EventKind] = &[
    EventKind::ToolCall,
    EventKind::ToolResult,
    EventKind::ToolExecutionStart,
    EventKind::ToolExecutionUpdate,
    EventKind::ToolExecutionEnd,
];

/// An event as a command hook sees it: its JSON, and the tool it is about (for the `tool` filter).
trait HookEvent: Serialize + Sync {
    fn tool_name(&self) -> Option<&str> {
        None
    }
}

macro_rules! plain_events {
    ($($event:ty),* $(,)?) => { $( impl HookEvent for $event {} )* };
}

plain_events!(
    InputEvent,
    BeforeAgentStartEvent,
    ContextEvent,
    BeforeProviderRequestEvent,
    AgentStartEvent,
    AgentEndEvent,
    TurnStartEvent,
    TurnEndEvent,
    MessageEvent,
    MessageUpdateEvent,
    ModelSelectEvent,
    SessionStartEvent,
    SessionShutdownEvent,
    SessionBeforeSwitchEvent,
    SessionSwitchEvent,
    SessionBeforeForkEvent,
    SessionForkEvent,
    SessionBeforeCompactEvent,
    SessionCompactEvent,
    SessionBeforeTreeEvent,
    SessionTreeEvent,
    ResourcesDiscoverEvent,
    SessionDirectoryEvent,
);

macro_rules! tool_events {
    ($($event:ty),* $(,)?) => {
        $(
            impl HookEvent for $event {
                fn tool_name(&self) -> Option<&str> {
                    Some(&self.tool_name)
                }
            }
        )*
    };
}

tool_events!(ToolCallEvent, ToolResultEvent, ToolExecutionStartEvent, ToolExecutionUpdateEvent, ToolExecutionEndEvent);

/// A YAML hook that runs an external command for one event.
#[derive(Debug, Clone)]
pub struct CommandHook {
    name: String,
    kind: EventKind,
    /// The command line given to `bash -c` (with an embedded script's first word replaced).
    command: String,
    timeout: Duration,
    tool: Option<TextMatcher>,
    shell: PathBuf,
}

impl CommandHook {
    /// The hook `definition` describes, which must be a [`HookAction::Command`]. `resources_dir` is where the
    /// agent's embedded files were unpacked; it is required when the command names an embedded script,
    /// whose unpacked copy then replaces the command's first word.
    pub fn new(definition: &HookDefinition, resources_dir: Option<&Path>) -> Result<Self, String> {
        let name = &definition.name;
        let HookAction::Command { event, command, timeout_secs, tool, script } = &definition.action else {
            return Err(format!("hook `{name}` does not run a command"));
        };
        let kind = EventKind::from_name(event).ok_or_else(|| format!("hook `{name}`: unknown event `{event}`"))?;
        let tool = match tool {
            Some(_) if !TOOL_EVENTS.contains(&kind) => {
                return Err(format!(
                    "hook `{name}`: a tool filter only applies to tool_call, tool_result and tool_execution_* \
                     events, not `{event}`"
                ));
            }
            Some(pattern) => Some(TextMatcher::new(pattern).map_err(|error| format!("hook `{name}`: {error}"))?),
            None => None,
        };
        let secs = timeout_secs.unwrap_or(DEFAULT_TIMEOUT_SECS);
        if secs == 0 {
            return Err(format!("hook `{name}`: the timeout must be at least 1 second"));
        }
        let command = match script {
            Some(script) => with_script(name, command, script, resources_dir)?,
            None => command.clone(),
        };
        if command.trim().is_empty() {
            return Err(format!("hook `{name}`: the command is empty"));
        }
        Ok(Self {
            name: name.clone(),
            kind,
            command,
            timeout: Duration::from_secs(secs),
            tool,
            shell: crate::tools::bash::ShellCommand::new(".").shell,
        })
    }

    /// Runs the command with `shell` instead of the default bash (settings `shellPath`, as the bash tool).
    pub fn with_shell(mut self, shell: Option<&Path>) -> Self {
        if let Some(shell) = shell.filter(|shell| !shell.as_os_str().is_empty()) {
            self.shell = shell.to_path_buf();
        }
        self
    }

    /// The event this hook runs for.
    pub fn event(&self) -> EventKind {
        self.kind
    }

    /// The command line the shell runs.
    pub fn command(&self) -> &str {
        &self.command
    }

    /// Runs the command for `event` unless the hook is not for it (another event, a tool the filter does not
    /// match); the trimmed stdout when it is not empty.
    async fn call<E: HookEvent>(
        &self,
        kind: EventKind,
        event: &E,
        ctx: &ExtensionContext,
    ) -> HookResult<Option<String>> {
        if kind != self.kind {
            return Ok(None);
        }
        if let (Some(filter), Some(tool)) = (&self.tool, event.tool_name())
            && !filter.is_match(tool)
        {
            return Ok(None);
        }
        let session_id = ctx.session_id();
        let stdin = self.event_json(kind, event, ctx, &session_id)?;
        let invocation = process::Invocation {
            shell: &self.shell,
            command: &self.command,
            cwd: ctx.cwd(),
            env: vec![("PI_HOOK_EVENT", kind.as_str().to_owned()), ("PI_SESSION_ID", session_id)],
            stdin,
            timeout: self.timeout,
        };
        let finished = match process::run(invocation).await {
            Ok(finished) => finished,
            Err(process::RunError::TimedOut) => {
                return Err(ExtensionError::new(format!(
                    "hook `{}` timed out after {}s",
                    self.name,
                    self.timeout.as_secs()
                )));
            }
            Err(process::RunError::Io(error)) => {
                return Err(ExtensionError::new(format!("hook `{}` could not run: {error}", self.name)));
            }
        };
        if !finished.status.success() {
            let mut message = format!("hook `{}` {}", self.name, process::describe_failure(finished.status));
            let stderr = stderr_tail(&finished.stderr.text());
            if !stderr.is_empty() {
                message.push_str(": ");
                message.push_str(&stderr);
            }
            return Err(ExtensionError::new(message));
        }
        if !expects_answer(kind) {
            return Ok(None);
        }
        if finished.stdout.dropped() > 0 {
            return Err(ExtensionError::new(format!(
                "hook `{}` printed more than {} bytes on stdout (the answer to {} must be one JSON object)",
                self.name,
                process::OUTPUT_CAP,
                kind.as_str()
            )));
        }
        let stdout = finished.stdout.text();
        let stdout = stdout.trim();
        Ok((!stdout.is_empty()).then(|| stdout.to_owned()))
    }

    /// The JSON the command reads: `type`, the event's fields, `cwd` and `sessionId` (an event's own field
    /// of that name wins).
    fn event_json<E: HookEvent>(
        &self,
        kind: EventKind,
        event: &E,
        ctx: &ExtensionContext,
        session_id: &str,
    ) -> HookResult<Vec<u8>> {
        let mut object = serde_json::Map::new();
        object.insert("type".to_owned(), Value::String(kind.as_str().to_owned()));
        match serde_json::to_value(event)? {
            Value::Object(fields) => object.extend(fields),
            other => {
                object.insert("event".to_owned(), other);
            }
        }
        object.entry("cwd").or_insert_with(|| Value::String(ctx.cwd().to_string_lossy().into_owned()));
        object.entry("sessionId").or_insert_with(|| Value::String(session_id.to_owned()));
        let mut bytes = serde_json::to_vec(&Value::Object(object))?;
        bytes.push(b'\n');
        Ok(bytes)
    }

    /// An answer that does not parse, as an error naming the hook and the event.
    fn invalid_answer(&self, kind: EventKind, error: serde_json::Error) -> ExtensionError {
        ExtensionError::new(format!("hook `{}` gave an invalid answer to {}: {error}", self.name, kind.as_str()))
    }
}

/// Whether the event takes an answer on stdout (the others only inform: their stdout is ignored).
fn expects_answer(kind: EventKind) -> bool {
    matches!(
        kind,
        EventKind::Input
            | EventKind::BeforeAgentStart
            | EventKind::Context
            | EventKind::BeforeProviderRequest
            | EventKind::ToolCall
            | EventKind::ToolResult
            | EventKind::MessageEnd
            | EventKind::SessionBeforeSwitch
            | EventKind::SessionBeforeFork
            | EventKind::SessionBeforeCompact
            | EventKind::SessionBeforeTree
            | EventKind::ResourcesDiscover
            | EventKind::SessionDirectory
    )
}

/// `command` with its first shell word replaced by the quoted path of the unpacked `script`.
fn with_script(name: &str, command: &str, script: &str, resources_dir: Option<&Path>) -> Result<String, String> {
    let dir = resources_dir.ok_or_else(|| {
        format!("hook `{name}`: its script `{script}` is built in, but the built-in files could not be unpacked")
    })?;
    let relative = Path::new(script);
    let inside = relative.components().all(|component| matches!(component, Component::Normal(_) | Component::CurDir));
    if !inside || relative.as_os_str().is_empty() {
        return Err(format!("hook `{name}`: the script path `{script}` leaves the unpack directory"));
    }
    let path = dir.join(relative);
    let rest = &command.trim_start()[first_word_len(command.trim_start())..];
    Ok(format!("{}{rest}", shell_quote(&path.to_string_lossy())))
}

/// The length of the first shell word of `text` (which starts with it): up to the first whitespace that is
/// not quoted or escaped.
fn first_word_len(text: &str) -> usize {
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (index, c) in text.char_indices() {
        if escaped {
            escaped = false;
            continue;
        }
        match (quote, c) {
            (Some('\''), '\'') => quote = None,
            (Some('\''), _) => {}
            (_, '\\') => escaped = true,
            (Some('"'), '"') => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"') => quote = Some(c),
            (None, c) if c.is_whitespace() || matches!(c, ';' | '&' | '|' | '<' | '>' | '(' | ')') => return index,
            (None, _) => {}
        }
    }
    text.len()
}

/// `text` as one single-quoted shell word.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

/// The last [`STDERR_LINES`] non-empty-trimmed lines of `stderr`.
fn stderr_tail(stderr: &str) -> String {
    let trimmed = stderr.trim();
    let lines: Vec<&str> = trimmed.lines().collect();
    let start = lines.len().saturating_sub(STDERR_LINES);
    lines[start..].join("\n")
}

/// Handlers for every event: each runs the command when the event is the hook's own, and parses the answer
/// with the matching function of `answer`.
macro_rules! command_handlers {
    ($( $method:ident, $kind:ident, $event:ty => $result:ty = $parse:path; )*) => {
        impl Extension for CommandHook {
            fn name(&self) -> &str {
                &self.name
            }

            fn subscriptions(&self) -> EventSet {
                EventSet::empty().with(self.kind)
            }

            $(
                async fn $method(&self, event: &$event, ctx: &ExtensionContext) -> HookResult<$result> {
                    match self.call(EventKind::$kind, event, ctx).await? {
                        Some(stdout) => {
                            $parse(&stdout, ctx.cwd()).map_err(|error| self.invalid_answer(EventKind::$kind, error))
                        }
                        None => Ok(<$result>::default()),
                    }
                }
            )*
        }
    };
}

command_handlers! {
    input, Input, InputEvent => InputAction = answer::input;
    before_agent_start, BeforeAgentStart, BeforeAgentStartEvent => BeforeAgentStartResult = answer::before_agent_start;
    context, Context, ContextEvent => Option<Vec<AgentMessage>> = answer::context;
    before_provider_request, BeforeProviderRequest, BeforeProviderRequestEvent => Option<Value>
        = answer::before_provider_request;
    tool_call, ToolCall, ToolCallEvent => ToolCallDecision = answer::tool_call;
    tool_result, ToolResult, ToolResultEvent => ToolResultPatch = answer::tool_result;
    agent_start, AgentStart, AgentStartEvent => () = answer::ignore;
    agent_end, AgentEnd, AgentEndEvent => () = answer::ignore;
    turn_start, TurnStart, TurnStartEvent => () = answer::ignore;
    turn_end, TurnEnd, TurnEndEvent => () = answer::ignore;
    message_start, MessageStart, MessageEvent => () = answer::ignore;
    message_update, MessageUpdate, MessageUpdateEvent => () = answer::ignore;
    message_end, MessageEnd, MessageEvent => Option<AgentMessage> = answer::message_end;
    tool_execution_start, ToolExecutionStart, ToolExecutionStartEvent => () = answer::ignore;
    tool_execution_update, ToolExecutionUpdate, ToolExecutionUpdateEvent => () = answer::ignore;
    tool_execution_end, ToolExecutionEnd, ToolExecutionEndEvent => () = answer::ignore;
    model_select, ModelSelect, ModelSelectEvent => () = answer::ignore;
    session_start, SessionStart, SessionStartEvent => () = answer::ignore;
    session_shutdown, SessionShutdown, SessionShutdownEvent => () = answer::ignore;
    session_before_switch, SessionBeforeSwitch, SessionBeforeSwitchEvent => CancelResult = answer::cancel;
    session_switch, SessionSwitch, SessionSwitchEvent => () = answer::ignore;
    session_before_fork, SessionBeforeFork, SessionBeforeForkEvent => ForkDecision = answer::session_before_fork;
    session_fork, SessionFork, SessionForkEvent => () = answer::ignore;
    session_before_compact, SessionBeforeCompact, SessionBeforeCompactEvent => CompactDecision
        = answer::session_before_compact;
    session_compact, SessionCompact, SessionCompactEvent => () = answer::ignore;
    session_before_tree, SessionBeforeTree, SessionBeforeTreeEvent => CancelResult = answer::cancel;
    session_tree, SessionTree, SessionTreeEvent => () = answer::ignore;
    resources_discover, ResourcesDiscover, ResourcesDiscoverEvent => DiscoveredResources
        = answer::resources_discover;
    session_directory, SessionDirectory, SessionDirectoryEvent => Option<PathBuf> = answer::session_directory;
}

#[cfg(test)]
#[path = "command_hook_tests.rs"]
mod tests;
