//! The JSON the Mistral SDK sends for a chat payload: snake_case names, the SDK's field order, its defaults
//! (`stream: true`, `prefix: false` on assistant messages, `type` and `index: 0` on tool calls) and no
//! fields it does not know. pi hands the SDK a camelCase payload (the one a `before_provider_request` hook
//! sees); this is the step between that payload and the request body.

use serde_json::{Map, Value, json};

/// The request's fields as the SDK writes them: (payload name, wire name), in wire order.
const REQUEST_FIELDS: [(&str, &str); 23] = [
    ("model", "model"),
    ("temperature", "temperature"),
    ("topP", "top_p"),
    ("maxTokens", "max_tokens"),
    ("stream", "stream"),
    ("stop", "stop"),
    ("randomSeed", "random_seed"),
    ("metadata", "metadata"),
    ("messages", "messages"),
    ("responseFormat", "response_format"),
    ("tools", "tools"),
    ("toolChoice", "tool_choice"),
    ("presencePenalty", "presence_penalty"),
    ("frequencyPenalty", "frequency_penalty"),
    ("n", "n"),
    ("prediction", "prediction"),
    ("parallelToolCalls", "parallel_tool_calls"),
    ("reasoningEffort", "reasoning_effort"),
    ("promptMode", "prompt_mode"),
    ("guardrails", "guardrails"),
    ("promptCacheKey", "prompt_cache_key"),
    ("serviceTier", "service_tier"),
    ("safePrompt", "safe_prompt"),
];

/// The request body for `payload`. Values the SDK would reject are passed on as they are.
pub fn to_wire(payload: &Value) -> Value {
    let Some(payload) = payload.as_object() else { return payload.clone() };
    let mut out = Map::new();
    for (name, wire_name) in REQUEST_FIELDS {
        let value = match (payload.get(name), name) {
            (Some(Value::Array(messages)), "messages") => Value::Array(messages.iter().map(message).collect()),
            (Some(Value::Array(tools)), "tools") => Value::Array(tools.iter().map(tool).collect()),
            (Some(value), _) => value.clone(),
            (None, "stream") => json!(true),
            (None, _) => continue,
        };
        out.insert(wire_name.into(), value);
    }
    Value::Object(out)
}

/// Copies `fields` of `from` (payload name, wire name) into a new object in that order, `convert`ing each.
fn pick(
    from: &Map<String, Value>,
    fields: &[(&str, &str)],
    convert: impl Fn(&str, &Value) -> Value,
) -> Map<String, Value> {
    let mut out = Map::new();
    for (name, wire_name) in fields {
        if let Some(value) = from.get(*name) {
            out.insert((*wire_name).into(), convert(name, value));
        }
    }
    out
}

fn message(message: &Value) -> Value {
    let Some(fields) = message.as_object() else { return message.clone() };
    let convert = |name: &str, value: &Value| match (name, value) {
        ("content", content) => content_parts(content),
        ("toolCalls", Value::Array(calls)) => Value::Array(calls.iter().map(tool_call).collect()),
        _ => value.clone(),
    };
    match fields.get("role").and_then(Value::as_str) {
        Some("assistant") => {
            let mut out =
                pick(fields, &[("role", "role"), ("content", "content"), ("toolCalls", "tool_calls")], convert);
            out.insert("prefix".into(), fields.get("prefix").cloned().unwrap_or(json!(false)));
            Value::Object(out)
        }
        Some("tool") => Value::Object(pick(
            fields,
            &[("role", "role"), ("content", "content"), ("toolCallId", "tool_call_id"), ("name", "name")],
            convert,
        )),
        Some("system" | "user") => Value::Object(pick(fields, &[("role", "role"), ("content", "content")], convert)),
        _ => message.clone(),
    }
}

/// Message content: a string as it is, parts with their wire names.
fn content_parts(content: &Value) -> Value {
    let Value::Array(parts) = content else { return content.clone() };
    Value::Array(parts.iter().map(content_part).collect())
}

fn content_part(part: &Value) -> Value {
    let Some(fields) = part.as_object() else { return part.clone() };
    let with_type = |kind: &str, rest: Map<String, Value>| {
        let mut out = Map::new();
        out.insert("type".into(), json!(kind));
        out.extend(rest);
        Value::Object(out)
    };
    match fields.get("type").and_then(Value::as_str) {
        Some("text") => with_type("text", pick(fields, &[("text", "text")], |_, v| v.clone())),
        Some("image_url") => with_type("image_url", pick(fields, &[("imageUrl", "image_url")], |_, v| v.clone())),
        Some("thinking") => with_type(
            "thinking",
            pick(fields, &[("thinking", "thinking"), ("signature", "signature"), ("closed", "closed")], |name, v| {
                if name == "thinking" { content_parts(v) } else { v.clone() }
            }),
        ),
        _ => part.clone(),
    }
}

fn tool_call(call: &Value) -> Value {
    let Some(fields) = call.as_object() else { return call.clone() };
    let function = fields.get("function").map(|function| match function.as_object() {
        Some(f) => Value::Object(pick(f, &[("name", "name"), ("arguments", "arguments")], |_, v| v.clone())),
        None => function.clone(),
    });
    let mut out = Map::new();
    out.insert("id".into(), fields.get("id").cloned().unwrap_or(json!("null")));
    out.insert("type".into(), fields.get("type").cloned().unwrap_or(json!("function")));
    if let Some(function) = function {
        out.insert("function".into(), function);
    }
    out.insert("index".into(), fields.get("index").cloned().unwrap_or(json!(0)));
    Value::Object(out)
}

fn tool(tool: &Value) -> Value {
    let Some(fields) = tool.as_object() else { return tool.clone() };
    let function = fields.get("function").map(|function| match function.as_object() {
        Some(f) => Value::Object(pick(
            f,
            &[("name", "name"), ("description", "description"), ("strict", "strict"), ("parameters", "parameters")],
            |_, v| v.clone(),
        )),
        None => function.clone(),
    });
    let mut out = Map::new();
    out.insert("type".into(), fields.get("type").cloned().unwrap_or(json!("function")));
    if let Some(function) = function {
        out.insert("function".into(), function);
    }
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_payload_is_written_as_the_sdk_writes_it() {
        // The same payload through the SDK's own schema (node, @mistralai/mistralai 2.7.0) gave `expected`.
        let payload = json!({
            "model": "m", "stream": true,
            "messages": [
                {"role": "system", "content": "sys"},
                {"role": "user", "content": [{"type": "text", "text": "hi"}, {"type": "image_url", "imageUrl": "data:image/png;base64,AA"}]},
                {"role": "user", "content": "plain"},
                {"role": "assistant", "content": [{"type": "thinking", "thinking": [{"type": "text", "text": "hmm"}]}, {"type": "text", "text": "ok"}],
                 "toolCalls": [{"id": "abc123def", "type": "function", "function": {"name": "read", "arguments": "{\"path\":\"a\"}"}}]},
                {"role": "assistant", "toolCalls": [{"id": "abc123dez", "type": "function", "function": {"name": "read", "arguments": "{}"}}]},
                {"role": "tool", "toolCallId": "abc123def", "name": "read", "content": [{"type": "text", "text": "file"}, {"type": "image_url", "imageUrl": "data:x"}]},
            ],
            "tools": [{"type": "function", "function": {"name": "read", "description": "d", "parameters": {"type": "object", "required": ["path"], "properties": {"path": {"type": "string"}}}, "strict": false}}],
            "temperature": 0.5, "maxTokens": 100, "promptMode": "reasoning", "reasoningEffort": "high", "unknownField": 1,
        });
        let expected = r#"{"model":"m","temperature":0.5,"max_tokens":100,"stream":true,"messages":[{"role":"system","content":"sys"},{"role":"user","content":[{"type":"text","text":"hi"},{"type":"image_url","image_url":"data:image/png;base64,AA"}]},{"role":"user","content":"plain"},{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"hmm"}]},{"type":"text","text":"ok"}],"tool_calls":[{"id":"abc123def","type":"function","function":{"name":"read","arguments":"{\"path\":\"a\"}"},"index":0}],"prefix":false},{"role":"assistant","tool_calls":[{"id":"abc123dez","type":"function","function":{"name":"read","arguments":"{}"},"index":0}],"prefix":false},{"role":"tool","content":[{"type":"text","text":"file"},{"type":"image_url","image_url":"data:x"}],"tool_call_id":"abc123def","name":"read"}],"tools":[{"type":"function","function":{"name":"read","description":"d","strict":false,"parameters":{"type":"object","required":["path"],"properties":{"path":{"type":"string"}}}}}],"reasoning_effort":"high","prompt_mode":"reasoning"}"#;
        assert_eq!(to_wire(&payload).to_string(), expected);
    }

    #[test]
    fn defaults_fill_what_the_payload_leaves_out() {
        let payload = json!({"model": "m", "messages": [{"role": "assistant", "toolCalls": [{"function": {"name": "x", "arguments": {}}}]}]});
        assert_eq!(
            to_wire(&payload),
            json!({"model": "m", "stream": true, "messages": [{"role": "assistant", "tool_calls": [
                {"id": "null", "type": "function", "function": {"name": "x", "arguments": {}}, "index": 0}], "prefix": false}]})
        );
        assert_eq!(to_wire(&json!("odd")), json!("odd"));
    }
}
