//! The tools that edit state-derived panels: `todo` (P1), `memory` (P6), `scratchpad` (P9), and the message
//! tools `summarize_messages` and `delete_messages` (a summarized message is sent as its `tl_dr`, a deleted
//! one not at all).

use serde_json::{Value, json};

use super::engine::PanelsCore;
use super::state::{Importance, Memory, MessageEdit, MessageEditAction, ScratchCell, TodoItem, TodoStatus};
use super::tools::{PanelToolSpec, ids_field, list_field, summary, text_field};
use crate::tools::ToolError;

fn status(value: &Value) -> Result<Option<TodoStatus>, ToolError> {
    match text_field(value, "status") {
        None => Ok(None),
        Some("pending") => Ok(Some(TodoStatus::Pending)),
        Some("in_progress") => Ok(Some(TodoStatus::InProgress)),
        Some("done") => Ok(Some(TodoStatus::Done)),
        Some(other) => Err(ToolError::new(format!("unknown status \"{other}\" (use pending, in_progress or done)"))),
    }
}

fn importance(value: &Value) -> Result<Option<Importance>, ToolError> {
    match text_field(value, "importance") {
        None => Ok(None),
        Some("low") => Ok(Some(Importance::Low)),
        Some("medium") => Ok(Some(Importance::Medium)),
        Some("high") => Ok(Some(Importance::High)),
        Some("critical") => Ok(Some(Importance::Critical)),
        Some(other) => {
            Err(ToolError::new(format!("unknown importance \"{other}\" (use low, medium, high or critical)")))
        }
    }
}

fn unknown(kind: &str, ids: &[String]) -> ToolError {
    ToolError::new(format!("no {kind} with id {}; nothing was changed", ids.join(", ")))
}

/// The ids of the `remove` list (bare numbers take `prefix`), refused unless `exists` knows each of them.
fn ids_to_remove(
    args: &Value,
    prefix: &str,
    kind: &str,
    exists: impl Fn(&str) -> bool,
) -> Result<Vec<String>, ToolError> {
    let ids = ids_field(args, "remove", prefix);
    let missing: Vec<String> = ids.iter().filter(|id| !exists(id)).cloned().collect();
    if missing.is_empty() { Ok(ids) } else { Err(unknown(kind, &missing)) }
}

/// `todo`: add, update and remove items.
fn todo_action(core: &mut PanelsCore, args: &Value, _now: i64) -> Result<String, ToolError> {
    let state = &mut core.state;
    let removed = ids_to_remove(args, "T", "todo", |id| state.todos.iter().any(|todo| todo.id == id))?;
    let mut updated = Vec::new();
    for change in list_field(args, "update") {
        let id = text_field(change, "id").ok_or_else(|| ToolError::new("each update needs an id"))?;
        let new_status = status(change)?;
        let todo = state.todos.iter_mut().find(|todo| todo.id == id).ok_or_else(|| unknown("todo", &[id.into()]))?;
        if let Some(text) = text_field(change, "text") {
            todo.text = text.to_owned();
        }
        if let Some(new_status) = new_status {
            todo.status = new_status;
        }
        updated.push(id.to_owned());
    }
    let mut added = Vec::new();
    for item in list_field(args, "add") {
        let text = text_field(item, "text").ok_or_else(|| ToolError::new("each added todo needs a text"))?;
        let new_status = status(item)?.unwrap_or_default();
        let parent = text_field(item, "parent").map(str::to_owned);
        let id = state.allocate_todo();
        state.todos.push(TodoItem { id: id.clone(), text: text.to_owned(), status: new_status, parent });
        added.push(id);
    }
    // Removing an item removes what is nested under it.
    let mut gone = removed.clone();
    while let Some(child) = state
        .todos
        .iter()
        .find(|todo| !gone.contains(&todo.id) && todo.parent.as_ref().is_some_and(|parent| gone.contains(parent)))
    {
        gone.push(child.id.clone());
    }
    state.todos.retain(|todo| !gone.contains(&todo.id));
    core.dirty = true;
    Ok(summary(&[("added", added), ("updated", updated), ("removed", gone)]))
}

/// `memory`: add, update and remove memories.
fn memory_action(core: &mut PanelsCore, args: &Value, _now: i64) -> Result<String, ToolError> {
    let state = &mut core.state;
    let removed = ids_to_remove(args, "M", "memory", |id| state.memories.iter().any(|memory| memory.id == id))?;
    let mut updated = Vec::new();
    for change in list_field(args, "update") {
        let id = text_field(change, "id").ok_or_else(|| ToolError::new("each update needs an id"))?;
        let new_importance = importance(change)?;
        let memory =
            state.memories.iter_mut().find(|memory| memory.id == id).ok_or_else(|| unknown("memory", &[id.into()]))?;
        if let Some(text) = text_field(change, "text") {
            memory.text = text.to_owned();
        }
        if let Some(new_importance) = new_importance {
            memory.importance = new_importance;
        }
        updated.push(id.to_owned());
    }
    let mut added = Vec::new();
    for item in list_field(args, "add") {
        let text = text_field(item, "text").ok_or_else(|| ToolError::new("each added memory needs a text"))?;
        let level = importance(item)?.unwrap_or_default();
        let id = state.allocate_memory();
        state.memories.push(Memory { id: id.clone(), text: text.to_owned(), importance: level });
        added.push(id);
    }
    state.memories.retain(|memory| !removed.contains(&memory.id));
    core.dirty = true;
    Ok(summary(&[("added", added), ("updated", updated), ("removed", removed)]))
}

/// `scratchpad`: write cells (new ones without an id) and remove cells.
fn scratchpad_action(core: &mut PanelsCore, args: &Value, _now: i64) -> Result<String, ToolError> {
    let state = &mut core.state;
    let removed = ids_to_remove(args, "C", "cell", |id| state.scratchpad.iter().any(|cell| cell.id == id))?;
    let (mut written, mut added) = (Vec::new(), Vec::new());
    for cell in list_field(args, "write") {
        let content = text_field(cell, "content").ok_or_else(|| ToolError::new("each cell needs a content"))?;
        let title = text_field(cell, "title").map(str::to_owned);
        match text_field(cell, "id") {
            Some(id) => {
                let existing =
                    state.scratchpad.iter_mut().find(|c| c.id == id).ok_or_else(|| unknown("cell", &[id.into()]))?;
                existing.content = content.to_owned();
                if let Some(title) = title {
                    existing.title = title;
                }
                written.push(id.to_owned());
            }
            None => {
                let id = state.allocate_cell();
                let title = title.unwrap_or_default();
                state.scratchpad.push(ScratchCell { id: id.clone(), title, content: content.to_owned() });
                added.push(id);
            }
        }
    }
    state.scratchpad.retain(|cell| !removed.contains(&cell.id));
    core.dirty = true;
    Ok(summary(&[("added", added), ("rewrote", written), ("removed", removed)]))
}

/// A message number as the model gives it: `12`, `"12"` or `"#12"`.
fn message_number(value: &Value) -> Option<usize> {
    match value {
        Value::Number(number) => number.as_u64().and_then(|n| usize::try_from(n).ok()),
        Value::String(text) => text.trim().trim_start_matches('#').parse().ok(),
        _ => None,
    }
}

/// The timestamp of message `#number` as the last request numbered it.
fn numbered_message(core: &PanelsCore, value: &Value) -> Result<(usize, i64), ToolError> {
    let number = message_number(value).ok_or_else(|| ToolError::new(format!("{value} is not a message number")))?;
    let timestamp = number.checked_sub(1).and_then(|index| core.numbered.get(index)).copied();
    let last = core.numbered.len();
    timestamp.map(|timestamp| (number, timestamp)).ok_or_else(|| {
        ToolError::new(format!("there is no message #{number}; the conversation's messages are #1 to #{last}"))
    })
}

fn edit_messages(core: &mut PanelsCore, edits: Vec<(usize, i64, MessageEditAction)>) -> Vec<String> {
    let numbers = edits.iter().map(|(number, ..)| format!("#{number}")).collect();
    for (number, timestamp, action) in edits {
        core.state.message_edits.retain(|edit| edit.number != number);
        core.state.message_edits.push(MessageEdit { number, timestamp, action });
    }
    core.dirty = true;
    numbers
}

/// `summarize_messages`: later requests carry each message's `tl_dr` instead.
fn summarize_action(core: &mut PanelsCore, args: &Value, _now: i64) -> Result<String, ToolError> {
    let mut edits = Vec::new();
    for item in list_field(args, "summaries") {
        let (number, timestamp) = numbered_message(core, item.get("message").unwrap_or(&Value::Null))?;
        let tl_dr = text_field(item, "tl_dr").filter(|text| !text.trim().is_empty());
        let tl_dr = tl_dr.ok_or_else(|| ToolError::new(format!("message #{number} needs a non-empty tl_dr")))?;
        edits.push((number, timestamp, MessageEditAction::Summarize { tl_dr: tl_dr.to_owned() }));
    }
    Ok(summary(&[("summarized", edit_messages(core, edits))]))
}

/// `delete_messages`: later requests leave the messages out.
fn delete_action(core: &mut PanelsCore, args: &Value, _now: i64) -> Result<String, ToolError> {
    let mut edits = Vec::new();
    for value in list_field(args, "messages") {
        let (number, timestamp) = numbered_message(core, value)?;
        edits.push((number, timestamp, MessageEditAction::Delete));
    }
    Ok(summary(&[("deleted", edit_messages(core, edits))]))
}

fn id_list(description: &str) -> Value {
    json!({ "type": "array", "items": { "type": "string" }, "description": description })
}

pub(super) fn todo_tool() -> PanelToolSpec {
    PanelToolSpec {
        name: "todo",
        label: "Todo",
        description: "Plan and track work in the Todo panel (P1). Add items (nest one under another with `parent`), \
                      update their text or status (pending, in_progress, done), or remove them (with what is nested \
                      under them).",
        snippet: "Add, update and remove items of the Todo panel",
        parameters: json!({
            "type": "object",
            "properties": {
                "add": { "type": "array", "items": { "type": "object", "properties": {
                    "text": { "type": "string" },
                    "parent": { "type": "string", "description": "Id of the item to nest under" },
                    "status": { "type": "string", "enum": ["pending", "in_progress", "done"] }
                }, "required": ["text"] } },
                "update": { "type": "array", "items": { "type": "object", "properties": {
                    "id": { "type": "string" },
                    "text": { "type": "string" },
                    "status": { "type": "string", "enum": ["pending", "in_progress", "done"] }
                }, "required": ["id"] } },
                "remove": id_list("Ids of items to remove")
            }
        }),
        action: todo_action,
    }
}

pub(super) fn memory_tool() -> PanelToolSpec {
    PanelToolSpec {
        name: "memory",
        label: "Memory",
        description: "Keep facts worth remembering for the rest of the session in the Memories panel (P6): add, \
                      update or remove memories, each with an importance (low, medium, high, critical).",
        snippet: "Add, update and remove entries of the Memories panel",
        parameters: json!({
            "type": "object",
            "properties": {
                "add": { "type": "array", "items": { "type": "object", "properties": {
                    "text": { "type": "string" },
                    "importance": { "type": "string", "enum": ["low", "medium", "high", "critical"] }
                }, "required": ["text"] } },
                "update": { "type": "array", "items": { "type": "object", "properties": {
                    "id": { "type": "string" },
                    "text": { "type": "string" },
                    "importance": { "type": "string", "enum": ["low", "medium", "high", "critical"] }
                }, "required": ["id"] } },
                "remove": id_list("Ids of memories to remove")
            }
        }),
        action: memory_action,
    }
}

pub(super) fn scratchpad_tool() -> PanelToolSpec {
    PanelToolSpec {
        name: "scratchpad",
        label: "Scratchpad",
        description: "Write cells in the Scratchpad panel (P9): notes, plans, intermediate results. A cell without \
                      an id is new; with an id it is rewritten. Remove cells by id.",
        snippet: "Write and remove cells of the Scratchpad panel",
        parameters: json!({
            "type": "object",
            "properties": {
                "write": { "type": "array", "items": { "type": "object", "properties": {
                    "id": { "type": "string" },
                    "title": { "type": "string" },
                    "content": { "type": "string" }
                }, "required": ["content"] } },
                "remove": id_list("Ids of cells to remove")
            }
        }),
        action: scratchpad_action,
    }
}

pub(super) fn summarize_messages_tool() -> PanelToolSpec {
    PanelToolSpec {
        name: "summarize_messages",
        label: "Summarize messages",
        description: "Replace conversation messages by short summaries in every later request, to save context. \
                      Messages are numbered #1, #2, ... from the start of the conversation; the panel footer lists \
                      the latest numbers. A summarized assistant message loses its tool calls (and their results).",
        snippet: "Replace conversation messages by their tl_dr",
        parameters: json!({
            "type": "object",
            "properties": {
                "summaries": { "type": "array", "items": { "type": "object", "properties": {
                    "message": { "type": ["integer", "string"], "description": "The message number, e.g. 12 or \"#12\"" },
                    "tl_dr": { "type": "string" }
                }, "required": ["message", "tl_dr"] } }
            },
            "required": ["summaries"]
        }),
        action: summarize_action,
    }
}

pub(super) fn delete_messages_tool() -> PanelToolSpec {
    PanelToolSpec {
        name: "delete_messages",
        label: "Delete messages",
        description: "Leave conversation messages out of every later request (the session keeps them). Messages \
                      are numbered #1, #2, ... from the start of the conversation; the panel footer lists the \
                      latest numbers.",
        snippet: "Leave conversation messages out of later requests",
        parameters: json!({
            "type": "object",
            "properties": {
                "messages": { "type": "array", "items": { "type": ["integer", "string"] } }
            },
            "required": ["messages"]
        }),
        action: delete_action,
    }
}
