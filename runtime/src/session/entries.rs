//! Session file lines as pi writes them: the `session` header and the nine entry types, each with `type`,
//! `id`, `parentId` and `timestamp` first, then its own fields under pi's names.

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

use crate::protocol::{AgentMessage, MessageContent};

/// The session file format version this runtime writes.
pub const CURRENT_SESSION_VERSION: u32 = 3;

/// The first line of a session file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionHeader {
    /// Always `"session"`.
    #[serde(rename = "type")]
    pub kind: SessionTag,
    /// Missing in version 1 files.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<u32>,
    pub id: String,
    pub timestamp: String,
    pub cwd: String,
    /// The session file this one was forked from.
    #[serde(rename = "parentSession", default, skip_serializing_if = "Option::is_none")]
    pub parent_session: Option<String>,
}

/// The `"session"` type tag of a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum SessionTag {
    #[serde(rename = "session")]
    Session,
}

impl SessionHeader {
    /// A current-version header.
    pub fn new(id: impl Into<String>, timestamp: impl Into<String>, cwd: impl Into<String>) -> Self {
        Self {
            kind: SessionTag::Session,
            version: Some(CURRENT_SESSION_VERSION),
            id: id.into(),
            timestamp: timestamp.into(),
            cwd: cwd.into(),
            parent_session: None,
        }
    }
}

/// One entry of the session tree.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionEntry {
    /// Eight hex characters, unique in the file.
    pub id: String,
    /// The entry this one follows; `None` at a root.
    pub parent_id: Option<String>,
    /// ISO 8601 with milliseconds, e.g. `2026-03-15T22:40:18.123Z`.
    pub timestamp: String,
    pub kind: EntryKind,
}

/// What an entry records.
// Most entries are messages, the largest variant: boxing it would cost an allocation per entry to save space
// in the rare small ones (model and thinking changes, labels).
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type")]
#[non_exhaustive]
pub enum EntryKind {
    /// A user, assistant, tool result or bash execution message.
    #[serde(rename = "message")]
    Message { message: AgentMessage },
    #[serde(rename = "thinking_level_change")]
    ThinkingLevelChange {
        #[serde(rename = "thinkingLevel")]
        thinking_level: String,
    },
    #[serde(rename = "model_change")]
    ModelChange {
        provider: String,
        #[serde(rename = "modelId")]
        model_id: String,
    },
    /// Everything before `first_kept_entry_id` on this path is replaced by `summary` in the context.
    #[serde(rename = "compaction")]
    Compaction {
        summary: String,
        #[serde(rename = "firstKeptEntryId")]
        first_kept_entry_id: String,
        #[serde(rename = "tokensBefore")]
        tokens_before: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        #[serde(rename = "fromHook", default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
    },
    /// A summary of the branch the leaf moved away from (`from_id` is `"root"` when there was none).
    #[serde(rename = "branch_summary")]
    BranchSummary {
        #[serde(rename = "fromId")]
        from_id: String,
        summary: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
        #[serde(rename = "fromHook", default, skip_serializing_if = "Option::is_none")]
        from_hook: Option<bool>,
    },
    /// Extension data; never part of the LLM context.
    #[serde(rename = "custom")]
    Custom {
        #[serde(rename = "customType")]
        custom_type: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Value>,
    },
    /// An extension message sent to the LLM as user content.
    #[serde(rename = "custom_message")]
    CustomMessage {
        #[serde(rename = "customType")]
        custom_type: String,
        content: MessageContent,
        display: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        details: Option<Value>,
    },
    /// Sets (or, with `None`, clears) the label of `target_id`.
    #[serde(rename = "label")]
    Label {
        #[serde(rename = "targetId")]
        target_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        label: Option<String>,
    },
    /// pi 1.5: from here on the context has `replacement` instead of the message of entry `target_id`, or
    /// nothing when it is null (pi writes one dropping a failed answer before a retry).
    #[serde(rename = "context_edit")]
    ContextEdit {
        #[serde(rename = "targetId")]
        target_id: String,
        #[serde(default)]
        replacement: Option<AgentMessage>,
    },
    #[serde(rename = "session_info")]
    SessionInfo {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<String>,
    },
    /// A line this runtime does not understand (a newer type, or fields of the wrong shape). Kept as it was
    /// so rewriting the file loses nothing; it produces no context.
    #[serde(skip)]
    Unrecognized { type_name: String, fields: Map<String, Value> },
}

impl EntryKind {
    /// The `type` tag.
    pub fn type_name(&self) -> &str {
        match self {
            Self::Message { .. } => "message",
            Self::ThinkingLevelChange { .. } => "thinking_level_change",
            Self::ModelChange { .. } => "model_change",
            Self::Compaction { .. } => "compaction",
            Self::BranchSummary { .. } => "branch_summary",
            Self::Custom { .. } => "custom",
            Self::CustomMessage { .. } => "custom_message",
            Self::Label { .. } => "label",
            Self::SessionInfo { .. } => "session_info",
            Self::ContextEdit { .. } => "context_edit",
            Self::Unrecognized { type_name, .. } => type_name,
        }
    }
}

impl SessionEntry {
    /// The message of a `message` entry.
    pub fn message(&self) -> Option<&AgentMessage> {
        match &self.kind {
            EntryKind::Message { message } => Some(message),
            _ => None,
        }
    }

    /// The entry as one line of JSON (no newline): `type`, `id`, `parentId`, `timestamp`, then the entry's own
    /// fields. Numbers keep their JavaScript form, so a line pi wrote re-serializes to the same text.
    pub fn to_line(&self) -> Result<String, serde_json::Error> {
        let own = match &self.kind {
            EntryKind::Unrecognized { fields, .. } => {
                let mut fields = fields.clone();
                for key in ["type", "id", "parentId", "timestamp"] {
                    fields.remove(key);
                }
                serde_json::to_string(&fields)?
            }
            kind => serde_json::to_string(kind)?,
        };
        // `own` is `{"type":"…",<fields>}` (or `{<fields>}` for unrecognized kinds): keep what follows the tag.
        let tag_prefix = format!("{{\"type\":{}", serde_json::to_string(self.kind.type_name())?);
        let rest = own.strip_prefix(&tag_prefix).or_else(|| own.strip_prefix('{')).unwrap_or("}");
        let rest = rest.strip_prefix(',').unwrap_or(rest);
        let mut line = String::with_capacity(own.len() + 96);
        line.push_str(&tag_prefix);
        line.push_str(",\"id\":");
        line.push_str(&serde_json::to_string(&self.id)?);
        line.push_str(",\"parentId\":");
        line.push_str(&serde_json::to_string(&self.parent_id)?);
        line.push_str(",\"timestamp\":");
        line.push_str(&serde_json::to_string(&self.timestamp)?);
        if rest != "}" {
            line.push(',');
        }
        line.push_str(rest);
        Ok(line)
    }

    /// The entry as a JSON object (see [`SessionEntry::to_line`]).
    pub fn to_json(&self) -> Value {
        self.to_line().ok().and_then(|line| serde_json::from_str(&line).ok()).unwrap_or(Value::Null)
    }

    /// An entry from a parsed line. `None` when the line is not an entry at all (no string `type` or `id`);
    /// an entry whose own fields do not fit its type becomes [`EntryKind::Unrecognized`].
    pub fn from_json(value: Value) -> Option<Self> {
        let Value::Object(mut object) = value else { return None };
        let type_name = object.get("type")?.as_str()?.to_owned();
        let id = object.get("id")?.as_str()?.to_owned();
        let parent_id = object.get("parentId").and_then(Value::as_str).map(str::to_owned);
        let timestamp = object.get("timestamp").and_then(Value::as_str).unwrap_or_default().to_owned();
        let kind = match serde_json::from_value::<EntryKind>(Value::Object(object.clone())) {
            Ok(kind) => kind,
            Err(_) => {
                for key in ["type", "id", "parentId", "timestamp"] {
                    object.remove(key);
                }
                EntryKind::Unrecognized { type_name, fields: object }
            }
        };
        Some(Self { id, parent_id, timestamp, kind })
    }
}

impl Serialize for SessionEntry {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let line = self.to_line().map_err(S::Error::custom)?;
        let raw = serde_json::value::RawValue::from_string(line).map_err(S::Error::custom)?;
        raw.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for SessionEntry {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Self::from_json(value).ok_or_else(|| D::Error::custom("a session entry needs a string `type` and `id`"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn entries_keep_pis_field_names_and_order() {
        let line = r#"{"type":"model_change","id":"75c68d04","parentId":null,"timestamp":"2026-11-22T04:07:01.195Z","provider":"mock","modelId":"mock-model"}"#;
        let entry: SessionEntry = serde_json::from_str(line).unwrap();
        assert_eq!(entry.kind, EntryKind::ModelChange { provider: "mock".into(), model_id: "mock-model".into() });
        assert_eq!(serde_json::to_string(&entry).unwrap(), line);
    }

    #[test]
    fn a_message_entry_round_trips() {
        let line = r#"{"type":"message","id":"a1b2c3d4","parentId":"00ff00ff","timestamp":"2026-03-15T22:40:18.123Z","message":{"role":"user","content":[{"type":"text","text":"hi"}],"timestamp":1773614418123}}"#;
        let entry: SessionEntry = serde_json::from_str(line).unwrap();
        assert_eq!(entry.message().map(AgentMessage::role), Some("user"));
        assert_eq!(entry.parent_id.as_deref(), Some("00ff00ff"));
        assert_eq!(serde_json::to_string(&entry).unwrap(), line);
    }

    #[test]
    fn unknown_types_are_kept_verbatim() {
        let value = json!({"type":"future_thing","id":"0000abcd","parentId":null,"timestamp":"t","payload":{"x":1}});
        let entry = SessionEntry::from_json(value.clone()).unwrap();
        assert!(matches!(&entry.kind, EntryKind::Unrecognized { type_name, .. } if type_name == "future_thing"));
        assert_eq!(entry.to_json(), value);
        assert_eq!(entry.to_line().unwrap(), serde_json::to_string(&value).unwrap());
    }

    #[test]
    fn costs_keep_their_javascript_form() {
        let line = r#"{"type":"message","id":"0badf00d","parentId":null,"timestamp":"t","message":{"role":"assistant","content":[{"type":"text","text":"ok"}],"api":"openai-completions","provider":"mock","model":"m","usage":{"input":10,"output":2,"cacheRead":0,"cacheWrite":0,"totalTokens":12,"cost":{"input":0.000003,"output":0.0000015,"cacheRead":0,"cacheWrite":0,"total":0.0000045}},"stopReason":"stop","timestamp":1}}"#;
        let entry: SessionEntry = serde_json::from_str(line).unwrap();
        assert!(entry.message().is_some(), "{entry:?}");
        assert_eq!(entry.to_line().unwrap(), line);
    }

    #[test]
    fn a_header_round_trips() {
        let line = r#"{"type":"session","version":3,"id":"019a","timestamp":"2026-11-22T04:07:01.195Z","cwd":"/w"}"#;
        let header: SessionHeader = serde_json::from_str(line).unwrap();
        assert_eq!(header.version, Some(3));
        assert_eq!(serde_json::to_string(&header).unwrap(), line);
    }
}
