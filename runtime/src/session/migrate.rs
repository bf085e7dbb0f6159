//! Upgrading old session files on the raw JSON lines, before they become typed entries:
//! v1 → v2 gives every entry an id and a linear `parentId` chain (a compaction's `firstKeptEntryIndex` becomes
//! `firstKeptEntryId`); v2 → v3 renames the message role `hookMessage` to `custom`.

use std::collections::HashSet;

use serde_json::{Map, Value};

use super::entries::CURRENT_SESSION_VERSION;
use super::ids::new_entry_id;

/// The version a header declares; a header without one is version 1.
pub fn header_version(header: &Value) -> u64 {
    header.get("version").and_then(Value::as_u64).unwrap_or(1)
}

/// Brings `header` and the `entries` after it to [`CURRENT_SESSION_VERSION`] in place. Returns whether anything
/// was migrated (the file then needs rewriting).
pub fn migrate_to_current(header: &mut Value, entries: &mut [Value]) -> bool {
    let version = header_version(header);
    if version >= u64::from(CURRENT_SESSION_VERSION) {
        return false;
    }
    if version < 2 {
        migrate_v1_to_v2(entries);
        set_version(header, 2);
    }
    if version < 3 {
        migrate_v2_to_v3(entries);
        set_version(header, 3);
    }
    true
}

fn set_version(header: &mut Value, version: u32) {
    if let Value::Object(fields) = header {
        fields.insert("version".to_owned(), Value::from(version));
    }
}

/// Assigns fresh ids chained in file order. `firstKeptEntryIndex` counted the lines of the file with the
/// header at index 0 (pi indexes its list of file entries), so entry `i` of `entries` is index `i + 1`.
fn migrate_v1_to_v2(entries: &mut [Value]) {
    let mut taken = HashSet::with_capacity(entries.len());
    let mut previous_id: Option<String> = None;
    for position in 0..entries.len() {
        let id = new_entry_id(|candidate| taken.contains(candidate));
        taken.insert(id.clone());
        let Value::Object(fields) = &mut entries[position] else { continue };
        fields.insert("id".to_owned(), Value::String(id.clone()));
        fields.insert("parentId".to_owned(), previous_id.map_or(Value::Null, Value::String));
        previous_id = Some(id);

        if fields.get("type").and_then(Value::as_str) != Some("compaction") {
            continue;
        }
        let Some(index) = fields.get("firstKeptEntryIndex").and_then(Value::as_f64) else { continue };
        fields.remove("firstKeptEntryIndex");
        if let Some(kept_id) = kept_entry_id(entries, index, position)
            && let Value::Object(fields) = &mut entries[position]
        {
            fields.insert("firstKeptEntryId".to_owned(), Value::String(kept_id));
        }
    }
}

/// The id already given to the entry at file index `index` (header = 0), if that index names an earlier or
/// the same entry. Like pi, a fractional or negative index, the header, or an entry not yet numbered gives
/// nothing.
fn kept_entry_id(entries: &[Value], index: f64, current: usize) -> Option<String> {
    if index < 1.0 || index.fract() != 0.0 || index > current as f64 + 1.0 {
        return None;
    }
    let target: &Map<String, Value> = entries.get(index as usize - 1)?.as_object()?;
    target.get("id")?.as_str().map(str::to_owned)
}

fn migrate_v2_to_v3(entries: &mut [Value]) {
    for entry in entries {
        if entry.get("type").and_then(Value::as_str) != Some("message") {
            continue;
        }
        if let Some(Value::Object(message)) = entry.get_mut("message")
            && message.get("role").and_then(Value::as_str) == Some("hookMessage")
        {
            message.insert("role".to_owned(), Value::String("custom".to_owned()));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn v1_entries_get_a_chain_and_compactions_an_id() {
        let mut header = json!({"type":"session","id":"s","timestamp":"t","cwd":"/w"});
        let mut entries = vec![
            json!({"type":"message","timestamp":"t","message":{"role":"user","content":"a","timestamp":1}}),
            json!({"type":"message","timestamp":"t","message":{"role":"user","content":"b","timestamp":2}}),
            json!({"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":2,"tokensBefore":9}),
            json!({"type":"compaction","timestamp":"t","summary":"s","firstKeptEntryIndex":0.5,"tokensBefore":9}),
        ];
        assert!(migrate_to_current(&mut header, &mut entries));
        assert_eq!(header["version"], 3);
        assert_eq!(entries[0]["parentId"], Value::Null);
        for pair in entries.windows(2) {
            assert_eq!(pair[1]["parentId"], pair[0]["id"]);
        }
        assert_eq!(entries[2]["firstKeptEntryId"], entries[1]["id"]);
        assert!(entries[2].get("firstKeptEntryIndex").is_none());
        assert!(entries[3].get("firstKeptEntryIndex").is_none());
        assert!(entries[3].get("firstKeptEntryId").is_none());
    }

    #[test]
    fn v2_hook_messages_become_custom_and_v3_is_left_alone() {
        let mut header = json!({"type":"session","version":2,"id":"s","timestamp":"t","cwd":"/w"});
        let mut entries = vec![json!({"type":"message","id":"a","parentId":null,"timestamp":"t",
            "message":{"role":"hookMessage","customType":"x","content":"c","display":true,"timestamp":1}})];
        assert!(migrate_to_current(&mut header, &mut entries));
        assert_eq!(entries[0]["message"]["role"], "custom");
        assert_eq!(entries[0]["id"], "a");
        assert!(!migrate_to_current(&mut header, &mut entries));
    }
}
