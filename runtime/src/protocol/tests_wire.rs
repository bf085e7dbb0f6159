//! Round trips of real pi lines: json-mode events and session message entries recorded from pi 0.73.1
//! (run against the mock server), plus hand-written lines for every agent-only role and content kind.
//! Each line must parse into our types and re-serialize to the same JSON, key order included.

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{AgentEvent, AgentMessage, AssistantMessageEvent, Message};

const JSON_MODE: &str = include_str!("../../fixtures/pi-0.73.1/json-mode-events.jsonl");
const SESSION: &str = include_str!("../../fixtures/pi-0.73.1/session-lines.jsonl");
const AGENT_MESSAGES: &str = include_str!("../../fixtures/agent-messages.jsonl");

/// Parses `original` as `T`, writes it back, and compares with the original (both normalized
/// through `serde_json::Value`, which keeps key order).
fn assert_round_trip<T: DeserializeOwned + Serialize>(original: &Value, what: &str) {
    let typed: T = match serde_json::from_value(original.clone()) {
        Ok(typed) => typed,
        Err(error) => panic!("{what} does not parse: {error}\n{original}"),
    };
    let written = serde_json::to_value(&typed).expect("serializes");
    assert_eq!(written.to_string(), original.to_string(), "{what} changed in the round trip");
}

fn lines(text: &str) -> impl Iterator<Item = Value> + '_ {
    text.lines().filter(|l| !l.trim().is_empty()).map(|l| serde_json::from_str(l).expect("fixture line is JSON"))
}

#[test]
fn every_json_mode_event_line_round_trips() {
    let mut kinds = std::collections::BTreeSet::new();
    for line in lines(JSON_MODE) {
        let kind = line["type"].as_str().expect("type").to_owned();
        assert_round_trip::<AgentEvent>(&line, &format!("json-mode {kind} line"));
        if kind == "message_update" {
            let inner = line["assistantMessageEvent"]["type"].as_str().unwrap_or("?").to_owned();
            assert_round_trip::<AssistantMessageEvent>(&line["assistantMessageEvent"], &inner);
            kinds.insert(format!("message_update/{inner}"));
        }
        kinds.insert(kind);
    }
    for expected in [
        "agent_start",
        "agent_end",
        "turn_start",
        "turn_end",
        "message_start",
        "message_end",
        "tool_execution_start",
        "tool_execution_update",
        "tool_execution_end",
        "message_update/text_delta",
        "message_update/thinking_delta",
        "message_update/toolcall_end",
    ] {
        assert!(kinds.contains(expected), "the fixture lacks {expected}: {kinds:?}");
    }
}

#[test]
fn json_mode_lines_come_back_byte_for_byte() {
    for line in JSON_MODE.lines().filter(|l| !l.trim().is_empty()) {
        let event: AgentEvent = serde_json::from_str(line).expect("parses");
        assert_eq!(serde_json::to_string(&event).expect("serializes"), line);
    }
}

#[test]
fn session_message_entries_round_trip() {
    let mut roles = std::collections::BTreeSet::new();
    for entry in lines(SESSION).filter(|entry| entry["type"] == "message") {
        let message = &entry["message"];
        let role = message["role"].as_str().expect("role").to_owned();
        assert_round_trip::<AgentMessage>(message, &format!("session {role} message"));
        assert_round_trip::<Message>(message, &format!("session {role} LLM message"));
        roles.insert(role);
    }
    assert_eq!(roles.into_iter().collect::<Vec<_>>(), ["assistant", "toolResult", "user"]);
}

#[test]
fn every_agent_message_role_and_content_kind_round_trips() {
    let mut roles = Vec::new();
    for message in lines(AGENT_MESSAGES) {
        let role = message["role"].as_str().expect("role").to_owned();
        assert_round_trip::<AgentMessage>(&message, &format!("{role} message"));
        roles.push(role);
    }
    roles.dedup();
    assert_eq!(
        roles,
        ["user", "assistant", "toolResult", "bashExecution", "custom", "branchSummary", "compactionSummary"]
    );
}

#[test]
fn pi_number_text_survives_the_round_trip_byte_for_byte() {
    // Costs are the only floats pi writes; they must come back as the same text, not just the same value.
    for line in JSON_MODE.lines().chain(SESSION.lines()).filter(|l| l.contains("\"cost\"")) {
        let value: Value = serde_json::from_str(line).expect("json");
        let Some(message) = value.get("message").filter(|m| m["role"] == "assistant") else { continue };
        let typed: AgentMessage = serde_json::from_value(message.clone()).expect("parses");
        let written = serde_json::to_string(&typed).expect("serializes");
        let original_cost = &line[line.find("\"cost\"").unwrap_or(0)..];
        let original_cost = &original_cost[..original_cost.find('}').map(|i| i + 1).unwrap_or(0)];
        assert!(written.contains(original_cost), "{original_cost} not in {written}");
    }
}

#[test]
fn unknown_roles_and_tags_are_rejected_not_guessed() {
    for bad in [
        r#"{"role":"developer","content":"x","timestamp":1}"#,
        r#"{"role":"user","content":[{"type":"video","url":"x"}],"timestamp":1}"#,
        r#"{"role":"assistant","content":[],"api":"a","provider":"p","model":"m","usage":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"totalTokens":0,"cost":{"input":0,"output":0,"cacheRead":0,"cacheWrite":0,"total":0}},"stopReason":"sleepy","timestamp":1}"#,
    ] {
        assert!(serde_json::from_str::<AgentMessage>(bad).is_err(), "accepted {bad}");
    }
}

#[test]
fn pi_1_5_system_messages_round_trip_with_their_fields_in_order() {
    let line = r#"{"role":"system","content":"","sections":{"preamble":"You help.","cwd":"<cwd>\n/w\n</cwd>","docs":null},"timestamp":7,"toolsAdded":[{"name":"read","description":"d","parameters":{"type":"object"},"constrainedSampling":{"type":"json_schema","strict":"prefer"}}],"toolsRemoved":[{"name":"ls"}]}"#;
    let message: AgentMessage = serde_json::from_str(line).unwrap();
    assert_eq!(message.role(), "system");
    assert_eq!(serde_json::to_string(&message).unwrap(), line);
    assert!(message.as_llm_message().is_none(), "the record is never sent as a message");
}
