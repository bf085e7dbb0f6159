//! Reads a request body of each API back into one list of parts (text, tool call, tool result) so the
//! panel assertions are written once, and checks each API's own rules for tool calls and roles on the raw
//! body.

use serde_json::Value;

/// One piece of a request's conversation, in the order it was sent (the system prompt left out).
#[derive(Debug, Clone, PartialEq)]
pub enum Part {
    /// `role` is `user` or `assistant` (Google's `model` is read as `assistant`).
    Text {
        role: String,
        text: String,
    },
    /// Google sends no ids: its calls get `<name>#<n>` (the n-th call of that name), and its results the
    /// same, so they pair in order.
    Call {
        id: String,
        name: String,
        args: Value,
    },
    Result {
        id: String,
        text: String,
    },
}

pub fn text(role: &str, text: &str) -> Part {
    Part::Text { role: role.to_owned(), text: text.to_owned() }
}

pub fn call(id: &str, name: &str, args: Value) -> Part {
    Part::Call { id: id.to_owned(), name: name.to_owned(), args }
}

pub fn result(id: &str, text: &str) -> Part {
    Part::Result { id: id.to_owned(), text: text.to_owned() }
}

/// The text of a content value: a string, or the `text` of each block (joined), or nothing.
fn text_of(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        Value::Array(blocks) => blocks.iter().filter_map(|block| block["text"].as_str()).collect(),
        _ => String::new(),
    }
}

/// Each text block of a content value as its own part.
fn texts(role: &str, content: &Value, parts: &mut Vec<Part>) {
    match content {
        Value::String(value) if !value.is_empty() => parts.push(text(role, value)),
        Value::Array(blocks) => {
            for block in blocks.iter().filter_map(|block| block["text"].as_str()) {
                parts.push(text(role, block));
            }
        }
        _ => {}
    }
}

fn parse_arguments(value: &Value) -> Value {
    value.as_str().map_or_else(|| value.clone(), |text| serde_json::from_str(text).expect("JSON arguments"))
}

/// The array of messages, items or contents of a body.
pub fn messages<'a>(api: &str, body: &'a Value) -> &'a Vec<Value> {
    let key = match api {
        "openai-responses" => "input",
        "google-generative-ai" => "contents",
        _ => "messages",
    };
    body[key].as_array().unwrap_or_else(|| panic!("{api}: no {key} in {body}"))
}

/// The system prompt as the API carries it.
pub fn system_prompt(api: &str, body: &Value) -> String {
    match api {
        "anthropic-messages" => text_of(&body["system"]),
        "google-generative-ai" => text_of(&body["systemInstruction"]["parts"]),
        _ => text_of(&messages(api, body)[0]["content"]),
    }
}

/// The body's conversation as parts.
pub fn parts(api: &str, body: &Value) -> Vec<Part> {
    let mut parts = Vec::new();
    let mut google_ids = std::collections::HashMap::<(bool, String), usize>::new();
    let mut google_id = |is_call: bool, name: &str| {
        let count = google_ids.entry((is_call, name.to_owned())).or_default();
        *count += 1;
        format!("{name}#{}", *count - 1)
    };
    for message in messages(api, body) {
        let role = message["role"].as_str().unwrap_or_default();
        match api {
            "openai-completions" if role == "tool" => {
                let id = message["tool_call_id"].as_str().expect("tool_call_id");
                parts.push(result(id, &text_of(&message["content"])));
            }
            "openai-completions" if role != "system" => {
                texts(role, &message["content"], &mut parts);
                for tool_call in message["tool_calls"].as_array().into_iter().flatten() {
                    let function = &tool_call["function"];
                    let (id, name) = (tool_call["id"].as_str().expect("id"), function["name"].as_str().expect("name"));
                    parts.push(call(id, name, parse_arguments(&function["arguments"])));
                }
            }
            "anthropic-messages" => match &message["content"] {
                Value::Array(blocks) => {
                    for block in blocks {
                        match block["type"].as_str() {
                            Some("text") => parts.push(text(role, block["text"].as_str().expect("text"))),
                            Some("tool_use") => parts.push(call(
                                block["id"].as_str().expect("id"),
                                block["name"].as_str().expect("name"),
                                block["input"].clone(),
                            )),
                            Some("tool_result") => parts.push(result(
                                block["tool_use_id"].as_str().expect("tool_use_id"),
                                &text_of(&block["content"]),
                            )),
                            other => panic!("unexpected block {other:?}: {block}"),
                        }
                    }
                }
                content => texts(role, content, &mut parts),
            },
            "openai-responses" => match message["type"].as_str() {
                Some("function_call") => parts.push(call(
                    message["call_id"].as_str().expect("call_id"),
                    message["name"].as_str().expect("name"),
                    parse_arguments(&message["arguments"]),
                )),
                Some("function_call_output") => {
                    parts.push(result(message["call_id"].as_str().expect("call_id"), &text_of(&message["output"])))
                }
                _ if role == "system" || role == "developer" => {}
                _ => texts(role, &message["content"], &mut parts),
            },
            "google-generative-ai" => {
                let role = if role == "model" { "assistant" } else { role };
                for part in message["parts"].as_array().expect("parts") {
                    if let Some(value) = part["text"].as_str() {
                        parts.push(text(role, value));
                    } else if let Some(function) = part.get("functionCall") {
                        let name = function["name"].as_str().expect("name");
                        parts.push(call(&google_id(true, name), name, function["args"].clone()));
                    } else if let Some(response) = part.get("functionResponse") {
                        let name = response["name"].as_str().expect("name");
                        let output = &response["response"]["output"];
                        parts.push(result(&google_id(false, name), &text_of(output)));
                    }
                }
            }
            _ => {}
        }
    }
    parts
}

/// Every tool call has exactly one result after it and every result a call before it, and the API's own
/// rules hold where a tool call meets its results.
pub fn assert_tool_pairing(api: &str, body: &Value) {
    let parts = parts(api, body);
    for (index, part) in parts.iter().enumerate() {
        match part {
            Part::Call { id, .. } => {
                let answers = parts[index..].iter().filter(|p| matches!(p, Part::Result { id: r, .. } if r == id));
                assert_eq!(answers.count(), 1, "{api}: call {id} needs one result after it: {body}");
            }
            Part::Result { id, .. } => {
                let calls = parts[..index].iter().filter(|p| matches!(p, Part::Call { id: c, .. } if c == id));
                assert_eq!(calls.count(), 1, "{api}: result {id} without its call: {body}");
            }
            Part::Text { .. } => {}
        }
    }
    let list = messages(api, body);
    for (index, message) in list.iter().enumerate() {
        let rest = &list[index + 1..];
        match api {
            // The tool messages answering an assistant's calls follow it directly, in order.
            "openai-completions" => {
                let ids: Vec<&Value> =
                    message["tool_calls"].as_array().into_iter().flatten().map(|c| &c["id"]).collect();
                let answered: Vec<&Value> = rest.iter().take(ids.len()).map(|m| &m["tool_call_id"]).collect();
                assert_eq!(answered, ids, "{api}: message {index}'s calls are not answered next: {body}");
            }
            // The next message is the user's, starting with a tool_result for each tool_use; no two assistant
            // messages in a row.
            "anthropic-messages" => {
                let blocks = message["content"].as_array().cloned().unwrap_or_default();
                let ids: Vec<Value> =
                    blocks.iter().filter(|b| b["type"] == "tool_use").map(|b| b["id"].clone()).collect();
                if message["role"] == "assistant" {
                    assert_ne!(rest.first().map(|m| &m["role"]), Some(&Value::from("assistant")), "{api}: {body}");
                }
                if !ids.is_empty() {
                    let next = rest.first().expect("a message after tool calls");
                    assert_eq!(next["role"], "user", "{api}: {body}");
                    let answered: Vec<Value> =
                        next["content"].as_array().expect("blocks").iter().map(|b| b["tool_use_id"].clone()).collect();
                    assert_eq!(answered[..ids.len()], ids[..], "{api}: message {index}: {body}");
                }
            }
            // A run of function_call items is followed by their outputs before any message item.
            "openai-responses" if message["type"] == "function_call" => {
                let until_message =
                    rest.iter().take_while(|item| item["type"] != "message" && item.get("role").is_none());
                let outputs = until_message.filter(|item| item["type"] == "function_call_output");
                assert_eq!(
                    outputs.filter(|item| item["call_id"] == message["call_id"]).count(),
                    1,
                    "{api}: item {index}'s output is not before the next message: {body}"
                );
            }
            // Roles are user and model; a model content's function calls are answered, by name and in order, by
            // the next content (a user one holding only the responses); no two model contents in a row.
            "google-generative-ai" => {
                let role = message["role"].as_str().unwrap_or_default();
                assert!(role == "user" || role == "model", "{api}: role {role}: {body}");
                let names = |content: &Value, key: &str| -> Vec<Value> {
                    let parts = content["parts"].as_array().cloned().unwrap_or_default();
                    parts.iter().filter_map(|part| part.get(key)).map(|f| f["name"].clone()).collect()
                };
                if role == "model" {
                    assert_ne!(rest.first().map(|m| &m["role"]), Some(&Value::from("model")), "{api}: {body}");
                }
                let calls = names(message, "functionCall");
                if !calls.is_empty() {
                    let next = rest.first().expect("a content after function calls");
                    assert_eq!(next["role"], "user", "{api}: {body}");
                    assert_eq!(names(next, "functionResponse"), calls, "{api}: content {index}: {body}");
                    assert_eq!(next["parts"].as_array().map(Vec::len), Some(calls.len()), "{api}: {body}");
                }
            }
            _ => {}
        }
    }
}
