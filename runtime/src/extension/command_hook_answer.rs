//! What a command hook may print on stdout for each event, and how it becomes the event's result. Every
//! answer is one JSON object; unknown top-level fields are refused (a typo should not pass silently).

use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::extension::{
    BeforeAgentStartResult, CancelResult, CompactDecision, DiscoveredResources, ExtensionCompaction, ExtensionMessage,
    ForkDecision, InputAction, ToolCallDecision, ToolResultPatch,
};
use crate::protocol::{AgentMessage, ImageContent, UserContent};

/// Parses `stdout` as `T`.
fn parse<T: DeserializeOwned>(stdout: &str) -> Result<T, serde_json::Error> {
    serde_json::from_str(stdout)
}

/// Observers: whatever was printed is ignored.
pub(super) fn ignore(_stdout: &str, _cwd: &Path) -> Result<(), serde_json::Error> {
    Ok(())
}

#[derive(Deserialize)]
#[serde(tag = "action", rename_all = "lowercase", deny_unknown_fields)]
enum InputWire {
    // Struct variants, not unit ones: serde ignores unknown fields next to a unit variant's tag.
    Continue {},
    Transform {
        text: String,
        #[serde(default)]
        images: Option<Vec<ImageContent>>,
    },
    Handled {},
}

/// `input`: `{"action":"continue"}`, `{"action":"transform","text":...,"images":[...]?}`, `{"action":"handled"}`.
pub(super) fn input(stdout: &str, _cwd: &Path) -> Result<InputAction, serde_json::Error> {
    Ok(match parse::<InputWire>(stdout)? {
        InputWire::Continue {} => InputAction::Continue,
        InputWire::Transform { text, images } => InputAction::Transform { text, images },
        InputWire::Handled {} => InputAction::Handled,
    })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct BeforeAgentStartWire {
    #[serde(default)]
    message: Option<ExtensionMessage>,
    #[serde(default)]
    system_prompt: Option<String>,
}

/// `before_agent_start`: `{"message": {...}?, "systemPrompt": "..."?}`.
pub(super) fn before_agent_start(stdout: &str, _cwd: &Path) -> Result<BeforeAgentStartResult, serde_json::Error> {
    let wire = parse::<BeforeAgentStartWire>(stdout)?;
    Ok(BeforeAgentStartResult { message: wire.message, system_prompt: wire.system_prompt })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContextWire {
    #[serde(default)]
    messages: Option<Vec<AgentMessage>>,
}

/// `context`: `{"messages": [...]}`; without `messages` the messages stay as they are.
pub(super) fn context(stdout: &str, _cwd: &Path) -> Result<Option<Vec<AgentMessage>>, serde_json::Error> {
    Ok(parse::<ContextWire>(stdout)?.messages)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PayloadWire {
    #[serde(default)]
    payload: Option<Value>,
}

/// `before_provider_request`: `{"payload": {...}}`; without `payload` the request stays as it is.
pub(super) fn before_provider_request(stdout: &str, _cwd: &Path) -> Result<Option<Value>, serde_json::Error> {
    Ok(parse::<PayloadWire>(stdout)?.payload)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolCallWire {
    #[serde(default)]
    block: bool,
    #[serde(default)]
    reason: Option<String>,
}

/// `tool_call`: `{"block": true, "reason": "..."}` refuses the call; `{"block": false}` or `{}` allows it.
pub(super) fn tool_call(stdout: &str, _cwd: &Path) -> Result<ToolCallDecision, serde_json::Error> {
    let wire = parse::<ToolCallWire>(stdout)?;
    Ok(if wire.block { ToolCallDecision::Block { reason: wire.reason } } else { ToolCallDecision::Allow })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ToolResultWire {
    #[serde(default)]
    content: Option<Vec<UserContent>>,
    #[serde(default)]
    details: Option<Value>,
    #[serde(default)]
    is_error: Option<bool>,
}

/// `tool_result`: `{"content": [...]?, "details": ...?, "isError": bool?}`; each field given replaces the
/// result's.
pub(super) fn tool_result(stdout: &str, _cwd: &Path) -> Result<ToolResultPatch, serde_json::Error> {
    let wire = parse::<ToolResultWire>(stdout)?;
    Ok(ToolResultPatch { content: wire.content, details: wire.details, is_error: wire.is_error })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageWire {
    #[serde(default)]
    message: Option<AgentMessage>,
}

/// `message_end`: `{"message": {...}}` replaces the message; `{}` keeps it.
pub(super) fn message_end(stdout: &str, _cwd: &Path) -> Result<Option<AgentMessage>, serde_json::Error> {
    Ok(parse::<MessageWire>(stdout)?.message)
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CancelWire {
    #[serde(default)]
    cancel: bool,
}

/// `session_before_switch`, `session_before_tree`: `{"cancel": bool}`.
pub(super) fn cancel(stdout: &str, _cwd: &Path) -> Result<CancelResult, serde_json::Error> {
    Ok(CancelResult { cancel: parse::<CancelWire>(stdout)?.cancel })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct ForkWire {
    #[serde(default)]
    cancel: bool,
    #[serde(default)]
    skip_conversation_restore: bool,
}

/// `session_before_fork`: `{"cancel": bool?, "skipConversationRestore": bool?}`.
pub(super) fn session_before_fork(stdout: &str, _cwd: &Path) -> Result<ForkDecision, serde_json::Error> {
    let wire = parse::<ForkWire>(stdout)?;
    Ok(ForkDecision { cancel: wire.cancel, skip_conversation_restore: wire.skip_conversation_restore })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CompactWire {
    #[serde(default)]
    cancel: bool,
    #[serde(default)]
    compaction: Option<ExtensionCompaction>,
}

/// `session_before_compact`: `{"cancel": bool?, "compaction": {"summary", "firstKeptEntryId",
/// "tokensBefore", "details"?}?}`.
pub(super) fn session_before_compact(stdout: &str, _cwd: &Path) -> Result<CompactDecision, serde_json::Error> {
    let wire = parse::<CompactWire>(stdout)?;
    Ok(CompactDecision { cancel: wire.cancel, compaction: wire.compaction })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct DiscoverWire {
    #[serde(default)]
    skill_paths: Vec<PathBuf>,
    #[serde(default)]
    prompt_paths: Vec<PathBuf>,
}

/// `resources_discover`: `{"skillPaths": [...]?, "promptPaths": [...]?}`; relative paths are taken from
/// the directory the hook ran in.
pub(super) fn resources_discover(stdout: &str, cwd: &Path) -> Result<DiscoveredResources, serde_json::Error> {
    let wire = parse::<DiscoverWire>(stdout)?;
    let absolute = |paths: Vec<PathBuf>| paths.into_iter().map(|path| cwd.join(path)).collect();
    Ok(DiscoveredResources { skill_paths: absolute(wire.skill_paths), prompt_paths: absolute(wire.prompt_paths) })
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct SessionDirectoryWire {
    #[serde(default)]
    session_dir: Option<PathBuf>,
}

/// `session_directory`: `{"sessionDir": "..."}` (relative to the directory the hook ran in); `{}` chooses
/// nothing.
pub(super) fn session_directory(stdout: &str, cwd: &Path) -> Result<Option<PathBuf>, serde_json::Error> {
    Ok(parse::<SessionDirectoryWire>(stdout)?.session_dir.map(|dir| cwd.join(dir)))
}
