//! RPC commands as they arrive on stdin (`{"id"?, "type", ...}`), and the replies sent back
//! (`{"id"?, "type": "response", "command", "success", "data"? | "error"?}`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::protocol::ImageContent;

/// Every command type pi's RPC mode knows (pi 0.73's in its order, then those pi 1.5 added).
pub const COMMAND_TYPES: [&str; 34] = [
    "prompt",
    "steer",
    "follow_up",
    "abort",
    "new_session",
    "get_state",
    "set_model",
    "cycle_model",
    "get_available_models",
    "set_thinking_level",
    "cycle_thinking_level",
    "set_steering_mode",
    "set_follow_up_mode",
    "compact",
    "set_auto_compaction",
    "set_auto_retry",
    "abort_retry",
    "bash",
    "abort_bash",
    "get_session_stats",
    "export_html",
    "switch_session",
    "fork",
    "clone",
    "get_fork_messages",
    "get_last_assistant_text",
    "set_session_name",
    "get_messages",
    "get_commands",
    "extension_ui_response",
    "clear_queue",
    "get_available_thinking_levels",
    "get_entries",
    "get_tree",
];

/// One command with its arguments (field names as on the wire).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case", rename_all_fields = "camelCase")]
#[non_exhaustive]
pub enum RpcCommand {
    Prompt {
        message: String,
        #[serde(default)]
        images: Vec<ImageContent>,
        streaming_behavior: Option<String>,
    },
    Steer {
        message: String,
        #[serde(default)]
        images: Vec<ImageContent>,
    },
    FollowUp {
        message: String,
        #[serde(default)]
        images: Vec<ImageContent>,
    },
    Abort,
    GetState,
    GetMessages,
    GetLastAssistantText,
    GetSessionStats,
    GetForkMessages,
    GetCommands,
    SetThinkingLevel {
        level: String,
    },
    CycleThinkingLevel,
    SetSteeringMode {
        mode: String,
    },
    SetFollowUpMode {
        mode: String,
    },
    SetAutoCompaction {
        enabled: bool,
    },
    SetAutoRetry {
        enabled: bool,
    },
    AbortRetry,
    Compact {
        custom_instructions: Option<String>,
    },
    SetSessionName {
        name: String,
    },
    SetModel {
        provider: String,
        model_id: String,
    },
    CycleModel,
    GetAvailableModels,
    Bash {
        command: String,
        /// Keep the output in the session but out of the model's context (pi 1.5).
        exclude_from_context: Option<bool>,
    },
    AbortBash,
    NewSession {
        parent_session: Option<String>,
    },
    SwitchSession {
        session_path: String,
    },
    Fork {
        entry_id: String,
    },
    Clone,
    ExportHtml {
        output_path: Option<String>,
    },
    /// Empties the steering and follow-up queues and returns their texts (pi 1.5).
    ClearQueue,
    /// The thinking levels the current model accepts (pi 1.5).
    GetAvailableThinkingLevels,
    /// The session's entries in append order, all of them or those after `since` (pi 1.5).
    GetEntries {
        /// Present (even as `null`) means "after this entry id".
        #[serde(default, deserialize_with = "present")]
        since: Option<Value>,
    },
    /// The session's entries as a tree, with labels (pi 1.5).
    GetTree,
    /// A known command this agent does not carry out yet (its name).
    #[serde(skip)]
    Unsupported(String),
}

/// Keeps a field that is present, even as `null` (serde's `Option` would read `null` as absent).
fn present<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Option<Value>, D::Error> {
    Value::deserialize(deserializer).map(Some)
}

/// A line that is a command, or the reply that says why it is not.
#[derive(Debug)]
pub enum ParsedLine {
    Command { id: Option<Value>, command: RpcCommand },
    Invalid(RpcReply),
}

/// Reads one stdin line (without its line feed; a trailing carriage return is ignored).
pub fn parse_line(line: &str) -> ParsedLine {
    let line = line.strip_suffix('\r').unwrap_or(line);
    let value: Value = match serde_json::from_str(line) {
        Ok(value) => value,
        Err(error) => {
            return ParsedLine::Invalid(RpcReply::failure(None, Some("parse"), format!("invalid JSON: {error}")));
        }
    };
    let id = value.get("id").cloned();
    let Some(kind) = value.get("type").and_then(Value::as_str).map(str::to_owned) else {
        let error = "a command needs a \"type\" naming it, e.g. {\"type\":\"get_state\"}";
        return ParsedLine::Invalid(RpcReply::failure(id, None, error));
    };
    if !COMMAND_TYPES.contains(&kind.as_str()) {
        let error = format!("unknown command `{kind}`; known commands: {}", COMMAND_TYPES.join(", "));
        return ParsedLine::Invalid(RpcReply::failure(id, Some(&kind), error));
    }
    match serde_json::from_value::<RpcCommand>(value) {
        Ok(command) => ParsedLine::Command { id, command },
        Err(error) if error.to_string().starts_with("unknown variant") => {
            ParsedLine::Command { id, command: RpcCommand::Unsupported(kind) }
        }
        Err(error) => ParsedLine::Invalid(RpcReply::failure(id, Some(&kind), format!("invalid `{kind}`: {error}"))),
    }
}

/// A reply to one command, in pi's field order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RpcReply {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    #[serde(rename = "type")]
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    pub success: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl RpcReply {
    /// Success without data.
    pub fn ok(id: Option<Value>, command: &str) -> Self {
        Self { id, kind: "response", command: Some(command.to_owned()), success: true, data: None, error: None }
    }

    /// Success with `data` (which may be JSON `null`).
    pub fn with_data(id: Option<Value>, command: &str, data: Value) -> Self {
        Self { data: Some(data), ..Self::ok(id, command) }
    }

    pub fn failure(id: Option<Value>, command: Option<&str>, error: impl Into<String>) -> Self {
        Self {
            id,
            kind: "response",
            command: command.map(str::to_owned),
            success: false,
            data: None,
            error: Some(error.into()),
        }
    }
}

/// A successful reply whose `data` is JSON text already (session entries, which keep their JavaScript
/// numbers and field order as the session file has them).
#[derive(Debug, Serialize)]
pub struct RawReply {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<Value>,
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub command: &'static str,
    pub success: bool,
    pub data: Box<serde_json::value::RawValue>,
}

impl RawReply {
    /// Success with `data`, which must be one JSON value.
    pub fn new(id: Option<Value>, command: &'static str, data: String) -> Result<Self, serde_json::Error> {
        let data = serde_json::value::RawValue::from_string(data)?;
        Ok(Self { id, kind: "response", command, success: true, data })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn reply_of(line: &str) -> Value {
        match parse_line(line) {
            ParsedLine::Invalid(reply) => serde_json::to_value(reply).expect("serializes"),
            ParsedLine::Command { command, .. } => panic!("parsed as {command:?}"),
        }
    }

    #[test]
    fn commands_parse_with_their_ids_and_camel_case_fields() {
        let ParsedLine::Command { id, command } =
            parse_line("{\"id\":\"p1\",\"type\":\"prompt\",\"message\":\"hi\",\"streamingBehavior\":\"steer\"}\r")
        else {
            panic!("a command")
        };
        assert_eq!(id, Some(json!("p1")));
        assert_eq!(
            command,
            RpcCommand::Prompt { message: "hi".into(), images: vec![], streaming_behavior: Some("steer".into()) }
        );
        let ParsedLine::Command { id, command } = parse_line("{\"id\":42,\"type\":\"compact\"}") else { panic!() };
        assert_eq!((id, command), (Some(json!(42)), RpcCommand::Compact { custom_instructions: None }));
        let ParsedLine::Command { command, .. } =
            parse_line("{\"type\":\"set_model\",\"provider\":\"p\",\"modelId\":\"m\"}")
        else {
            panic!()
        };
        assert_eq!(command, RpcCommand::SetModel { provider: "p".into(), model_id: "m".into() });
        let ParsedLine::Command { command, .. } = parse_line("{\"type\":\"extension_ui_response\"}") else { panic!() };
        assert_eq!(command, RpcCommand::Unsupported("extension_ui_response".into()));
    }

    #[test]
    fn bad_lines_get_a_reply_in_pi_shape() {
        let parse = reply_of("{\"type\": ");
        assert_eq!(parse["command"], "parse");
        assert_eq!(parse["success"], false);
        assert!(parse.get("id").is_none());
        assert_eq!(reply_of("")["command"], "parse", "an empty line is a parse error, as in pi");
        let untyped = reply_of("[1,2]");
        assert!(untyped.get("command").is_none(), "{untyped}");
        let unknown = reply_of("{\"id\":\"x\",\"type\":\"frobnicate\"}");
        assert_eq!(unknown["command"], "frobnicate");
        assert_eq!(unknown["id"], "x", "the id comes back so a client can match the failure");
        assert!(unknown["error"].as_str().is_some_and(|e| e.contains("frobnicate")), "{unknown}");
        let missing = reply_of("{\"id\":1,\"type\":\"set_session_name\"}");
        assert!(missing["error"].as_str().is_some_and(|e| e.contains("missing field `name`")), "{missing}");
        let keys: Vec<String> = missing.as_object().expect("object").keys().cloned().collect();
        assert_eq!(keys, ["id", "type", "command", "success", "error"]);
    }
}
