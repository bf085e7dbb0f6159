//! The entry ids of a step, named before it runs so that a repeated step writes the same entries: the
//! announced messages take the ids the workflow named, messages the session adds itself take ids derived
//! from the answer's, and a retried model step finds what its first attempt stored by those ids.

use std::collections::{HashMap, VecDeque};

use pi_runtime::protocol::AgentMessage;
use pi_runtime::session::PlannedIds;

use super::activities::ModelStep;
use crate::flow::{Announcements, ToolResultSlot, UserInput};

/// The ids of a tool step's entries: the announced messages', in order, and the tool results by call.
pub(super) fn planned(announce: &Announcements, results: &[ToolResultSlot]) -> PlannedIds {
    let in_order: VecDeque<String> = announce.messages.iter().map(|input| input.entry_id.clone()).collect();
    let tool_results = results.iter().map(|slot| (slot.tool_call_id.clone(), slot.entry_id.clone())).collect();
    PlannedIds { in_order, tool_results }
}

/// The ids of the messages a model step records, in order, then its answer's: user messages take the
/// announced ids in order; messages the session adds itself (pi 1.5's opening system message) take ids
/// derived from the answer's, so a repeated step names them alike; custom messages become custom entries
/// and take none.
pub(super) fn model_step_ids(messages: &[AgentMessage], announced: &[UserInput], answer_id: &str) -> PlannedIds {
    let mut announced = announced.iter().map(|input| input.entry_id.clone());
    let mut in_order = VecDeque::new();
    for (index, message) in messages.iter().enumerate() {
        match message {
            AgentMessage::Custom(_) | AgentMessage::ToolResult(_) => {}
            AgentMessage::User(_) => {
                in_order.push_back(announced.next().unwrap_or_else(|| derived_entry_id(answer_id, index)));
            }
            _ => in_order.push_back(derived_entry_id(answer_id, index)),
        }
    }
    in_order.push_back(answer_id.to_owned());
    PlannedIds { in_order, tool_results: HashMap::new() }
}

/// An entry id (eight hex digits, as pi's) that only `answer_id` and `index` decide.
fn derived_entry_id(answer_id: &str, index: usize) -> String {
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(format!("{answer_id}/{index}").as_bytes());
    digest.iter().take(4).map(|byte| format!("{byte:02x}")).collect()
}

/// The message entries a model step whose work was saved recorded, in order: the block of entries that
/// ends with its answer and starts with the first of its announced or derived ids.
pub(super) fn stored_step_entries(stored: &crate::store::SessionLines, step: &ModelStep) -> Vec<String> {
    let lines = &stored.entries;
    let Some(answer_at) = lines.iter().position(|line| line.id == step.answer_entry_id) else { return Vec::new() };
    let mut ours: Vec<String> = step.announce.messages.iter().map(|input| input.entry_id.clone()).collect();
    ours.extend((0..DERIVED_IDS_CHECKED).map(|index| derived_entry_id(&step.answer_entry_id, index)));
    let start = lines[..answer_at].iter().position(|line| ours.contains(&line.id)).unwrap_or(answer_at);
    lines[start..=answer_at].iter().filter(|line| line.is_run_message()).map(|line| line.id.clone()).collect()
}

/// How many of a step's derived ids a retried step looks for (more messages than a step's opening ever has).
const DERIVED_IDS_CHECKED: usize = 64;

#[cfg(test)]
mod tests {
    use pi_runtime::agent::PromptInput;

    use super::super::activities::StepTarget;
    use super::*;

    fn input(id: &str) -> UserInput {
        UserInput::user(id.to_owned(), "hi".to_owned(), Vec::new())
    }

    #[test]
    fn a_model_step_names_the_session_s_own_messages_apart_from_the_announced_ones() {
        let user = |text: &str| PromptInput::Text { text: text.to_owned(), images: Vec::new() }.into_messages();
        let message = |json: serde_json::Value| -> AgentMessage { serde_json::from_value(json).expect("a message") };
        let system = message(serde_json::json!({"role": "system", "content": "You are pi.", "timestamp": 1}));
        let custom = message(serde_json::json!({
            "role": "custom", "customType": "note", "content": "from a hook", "display": true, "timestamp": 1
        }));
        assert!(matches!(system, AgentMessage::System(_)) && matches!(custom, AgentMessage::Custom(_)));
        let mut messages = vec![system];
        messages.extend(user("hi"));
        messages.push(custom);
        messages.extend(user("steer"));
        let ids = model_step_ids(&messages, &[input("prompt01")], "answer01");
        let derived = |index| derived_entry_id("answer01", index);
        assert_eq!(Vec::from(ids.in_order), [derived(0), "prompt01".to_owned(), derived(3), "answer01".to_owned()]);
        assert_ne!(derived(0), derived(3));
        assert_eq!(derived(0), derived_entry_id("answer01", 0), "a repeated step names them alike");
        assert!(derived(0).len() == 8 && derived(0).chars().all(|c| c.is_ascii_hexdigit()));
    }

    #[test]
    fn a_retried_model_step_finds_the_entries_its_first_attempt_recorded() {
        let system_id = derived_entry_id("answer01", 0);
        let line = |id: &str, kind: &str| format!(r#"{{"type":"{kind}","id":"{id}","parentId":null,"timestamp":"t"}}"#);
        let text = [
            r#"{"type":"session","version":3,"id":"s1","timestamp":"t","cwd":"/w"}"#.to_owned(),
            line("old00001", "message"),
            line(&system_id, "message"),
            line("prompt01", "message"),
            line("custom01", "custom_message"),
            line("answer01", "message"),
        ]
        .join("\n");
        let stored = crate::store::SessionLines::parse(&text).expect("lines");
        let announce =
            Announcements { agent_start: true, messages: vec![input("prompt01")], ..Announcements::default() };
        let target =
            StepTarget { session_id: "s1".into(), argv: Vec::new(), event_base: 0, aborted: false, fallback: None };
        let step =
            ModelStep { target, announce, answer_entry_id: "answer01".into(), system_prompt: None, retry_attempt: 0 };
        let expected = [system_id, "prompt01".to_owned(), "custom01".to_owned(), "answer01".to_owned()];
        assert_eq!(stored_step_entries(&stored, &step), expected, "a hook's custom message is the run's too");
    }
}
