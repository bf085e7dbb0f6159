//! Tests of the panels pipeline: the request's shape, sorting, the conversation's cleaning, detachment's
//! four limits, and cache accounting over three requests.

use serde_json::json;

use super::*;
use crate::ai::{Model, ModelCost};
use crate::protocol::{
    AgentMessage, AssistantContent, AssistantMessage, Message, MessageContent, ToolCall, ToolResultMessage,
    UserContent, UserMessage,
};

fn item(id: &str, header: &str, content: &str, last_refresh_ms: i64) -> ContextItem {
    ContextItem { id: id.into(), header: header.into(), content: content.into(), last_refresh_ms }
}

fn user(text: &str, timestamp: i64) -> Message {
    Message::User(UserMessage { content: MessageContent::Blocks(vec![UserContent::text(text)]), timestamp })
}

fn answer(content: Vec<AssistantContent>) -> Message {
    Message::Assistant(AssistantMessage { content, timestamp: 5, ..AssistantMessage::default() })
}

fn call(id: &str) -> AssistantContent {
    AssistantContent::ToolCall(ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: json!({"path": "a"}),
        thought_signature: None,
    })
}

fn result(id: &str) -> Message {
    Message::ToolResult(ToolResultMessage {
        tool_call_id: id.into(),
        tool_name: "read".into(),
        content: vec![UserContent::text("file text")],
        details: None,
        is_error: false,
        timestamp: 6,
        duration_ms: None,
    })
}

/// Each message as JSON, the way the session and the providers see it.
fn shapes(messages: &[Message]) -> Vec<serde_json::Value> {
    messages.iter().map(|message| serde_json::to_value(message).unwrap()).collect()
}

#[test]
fn panels_come_first_most_stable_first_then_the_footer_the_repeated_prompt_and_the_conversation() {
    let items = [
        item("P5", "Tree", "src/\n  main.rs", 2_000),
        item("chat", "Conversation", "never sent as a panel", 0),
        item("P1", "Todo List", "- [ ] tests", 1_000),
    ];
    let conversation = [user("Hello!", 1_773_614_400_000)];
    let texts = PanelTexts::default();
    let request = PanelRequest {
        items: &items,
        conversation: &conversation,
        numbers: &[],
        system_prompt: "Be brief.",
        reinject_system_prompt: true,
        now_ms: 1_773_614_418_123,
        join_texts: false,
        texts: &texts,
    };
    let messages = shapes(&assemble_request(&request));
    assert_eq!(messages.len(), 2 * 2 + 2 + 2 + 1);
    assert_eq!(messages[0]["role"], "assistant");
    assert_eq!(messages[0]["content"][0]["text"], texts.header.as_str());
    assert_eq!(messages[0]["content"][1]["text"], "Panel automatically generated at 1970-01-01T00:00:01.000Z");
    assert_eq!(
        messages[0]["content"][2],
        json!({"type": "toolCall", "id": "panel_P1", "name": "dynamic_panel", "arguments": {"id": "P1"}})
    );
    assert_eq!(messages[0]["stopReason"], "toolUse");
    assert_eq!(messages[1]["role"], "toolResult");
    assert_eq!(messages[1]["toolCallId"], "panel_P1");
    assert_eq!(messages[1]["toolName"], "dynamic_panel");
    assert_eq!(messages[1]["content"][0]["text"], "======= [P1] Todo List =======\n- [ ] tests");
    assert_eq!(messages[2]["content"].as_array().map(Vec::len), Some(2), "only the first panel has the header");
    assert_eq!(messages[2]["content"][1]["id"], "panel_P5");
    assert_eq!(messages[3]["content"][0]["text"], "======= [P5] Tree =======\nsrc/\n  main.rs");
    let footer = messages[4]["content"][0]["text"].as_str().unwrap_or_default();
    assert_eq!(
        footer,
        "End of dynamic panel displays.\nMessage timestamps:\n- #1 user: 2026-03-15T22:40:00.000Z\n\
         Current datetime: 2026-03-15T22:40:18.123Z"
    );
    assert_eq!(messages[4]["content"][1]["arguments"], json!({"action": "end_panels"}));
    assert_eq!(messages[5]["toolCallId"], "panel_footer");
    assert_eq!(messages[5]["content"][0]["text"], "Panel display complete. Proceeding with conversation.");
    assert_eq!(messages[6]["role"], "user");
    assert_eq!(messages[6]["content"][0]["text"], "System instructions (repeated for emphasis):\n\nBe brief.");
    assert_eq!(messages[7]["content"][0]["text"], "Understood. I will follow these instructions.");
    assert_eq!(messages[8]["content"][0]["text"], "Hello!");

    let joined = shapes(&assemble_request(&PanelRequest { join_texts: true, ..request }));
    let first = joined[0]["content"].as_array().expect("blocks");
    assert_eq!(first.len(), 2, "header and timestamp in one text block, then the call");
    assert_eq!(
        first[0]["text"],
        format!("{}\nPanel automatically generated at 1970-01-01T00:00:01.000Z", texts.header).as_str()
    );
    assert_eq!(joined[2]["content"].as_array().map(Vec::len), Some(2), "later panels are unchanged");

    let without = assemble_request(&PanelRequest { reinject_system_prompt: false, ..request });
    assert_eq!(without.len(), 7, "no repeated prompt for APIs that do not take it");
}

#[test]
fn panels_refreshed_at_the_same_moment_keep_their_order_and_a_changed_panel_moves_last() {
    let texts = PanelTexts::default();
    let ids = |items: &[ContextItem]| -> Vec<String> {
        let request = PanelRequest {
            items,
            conversation: &[],
            numbers: &[],
            system_prompt: "",
            reinject_system_prompt: false,
            now_ms: 0,
            join_texts: false,
            texts: &texts,
        };
        assemble_request(&request)
            .iter()
            .filter_map(|message| match message {
                Message::ToolResult(result) => Some(result.tool_call_id.clone()),
                _ => None,
            })
            .collect()
    };
    let mut items = vec![item("P2", "Library", "a", 10), item("P1", "Todo", "b", 10), item("P3", "Stats", "c", 5)];
    assert_eq!(ids(&items), ["panel_P3", "panel_P2", "panel_P1", "panel_footer"]);
    items[2] = item("P3", "Stats", "changed", 20);
    assert_eq!(ids(&items), ["panel_P2", "panel_P1", "panel_P3", "panel_footer"]);
}

#[test]
fn tool_calls_without_results_are_skipped_and_roles_keep_alternating() {
    let conversation = [
        user("first", 1),
        answer(vec![AssistantContent::text("Reading."), call("t1"), call("orphan")]),
        result("t1"),
        result("no-call"),
        answer(vec![call("only-orphan")]),
        answer(vec![AssistantContent::text("Done.")]),
        user("", 7),
        user("second", 8),
        user("third", 9),
    ];
    let cleaned = shapes(&clean_conversation(&conversation));
    let roles: Vec<&str> = cleaned.iter().map(|m| m["role"].as_str().unwrap_or_default()).collect();
    assert_eq!(roles, ["user", "assistant", "toolResult", "assistant", "user"]);
    let ids: Vec<&serde_json::Value> = cleaned[1]["content"].as_array().unwrap().iter().map(|b| &b["id"]).collect();
    assert_eq!(ids, [&json!(null), &json!("t1")], "the orphan call is gone");
    assert_eq!(cleaned[2]["toolCallId"], "t1");
    assert_eq!(cleaned[3]["content"], json!([{"type": "text", "text": "Done."}]), "the empty answer is gone");
    let merged: Vec<&str> =
        cleaned[4]["content"].as_array().unwrap().iter().map(|b| b["text"].as_str().unwrap_or_default()).collect();
    assert_eq!(merged, ["second", "third"], "the empty user message is dropped and the next two merge");
}

fn agent_user(chars: usize) -> AgentMessage {
    AgentMessage::User(UserMessage { content: MessageContent::Text("u".repeat(chars)), timestamp: 1 })
}

fn agent_answer(chars: usize) -> AgentMessage {
    AgentMessage::Assistant(AssistantMessage {
        content: vec![AssistantContent::text("a".repeat(chars))],
        ..AssistantMessage::default()
    })
}

/// `turns` user/assistant pairs, each message `tokens` tokens long.
fn turns(count: usize, tokens: usize) -> Vec<AgentMessage> {
    (0..count).flat_map(|_| [agent_user(tokens * 4), agent_answer(tokens * 4)]).collect()
}

#[test]
fn detachment_needs_all_four_limits_and_cuts_where_a_turn_starts() {
    let limits = DetachLimits::default();
    // 60 messages of 300 tokens: the first boundary with >= 25 messages and >= 5,000 tokens is 26.
    assert_eq!(detach_point(&turns(30, 300), &limits), Some(26));
    // What stays live: 40 messages of 1,000 tokens; the first cut (26) would leave 14.
    assert_eq!(detach_point(&turns(20, 1_000), &limits), None, "14 left live: under 25 messages");
    // Chunk tokens: 100 messages of 10 tokens never reach 5,000 in a chunk that leaves 25.
    assert_eq!(detach_point(&turns(50, 10), &limits), None);
    // Live tokens: a chunk of 5,000+ tokens, then 25+ short messages under 7,500 tokens.
    let mut messages = turns(13, 200);
    messages.extend(turns(20, 10));
    assert_eq!(detach_point(&messages, &limits), None, "what stays live is under 7,500 tokens");
    messages.extend(turns(20, 400));
    assert_eq!(detach_point(&messages, &limits), Some(26));
    // Chunk messages: one huge turn first, then many small ones.
    let mut messages = turns(1, 10_000);
    messages.extend(turns(40, 200));
    assert_eq!(detach_point(&messages, &limits), Some(26), "not at 2, where the chunk has 2 messages");
    // A cut never separates a tool call from its result: it falls where a user message starts.
    let mut odd = vec![agent_user(4)];
    odd.extend(turns(40, 300));
    assert!(detach_point(&odd, &limits).is_some_and(|cut| matches!(odd[cut], AgentMessage::User(_))));
}

#[test]
fn cache_hits_follow_the_unchanged_prefix_over_three_requests() {
    let mut model = Model::new("p", "m", crate::ai::anthropic_messages::API, "http://127.0.0.1:9");
    model.cost = ModelCost { input: 3.0, output: 15.0, cache_read: 0.3, cache_write: 3.75 };
    let prices = CachePrices::for_model(&model);
    assert_eq!(prices, CachePrices { hit: 0.3, miss: 3.75 });
    let openai = Model { api: "openai-completions".into(), ..model.clone() };
    assert_eq!(CachePrices::for_model(&openai), CachePrices { hit: 0.3, miss: 3.0 });

    let mut tracker = CacheTracker::new();
    let four_thousand = "x".repeat(4_000);
    let first = [item("P1", "", &four_thousand, 1), item("P2", "", &four_thousand, 2), item("P3", "", "abcd", 3)];
    let hits = |costs: &[PanelCacheCost]| costs.iter().map(|cost| cost.hit).collect::<Vec<_>>();
    let costs = tracker.track(&first, prices);
    assert_eq!(hits(&costs), [false, false, false], "nothing is cached before the first request");
    assert_eq!(costs[0].tokens, 1_000);
    assert!((costs[0].cost - 1_000.0 * 3.75 / 1e6).abs() < 1e-12);
    let costs = tracker.track(&first, prices);
    assert_eq!(hits(&costs), [true, true, true]);
    assert!((costs[1].cost - 1_000.0 * 0.3 / 1e6).abs() < 1e-12);
    // P2 changed (and so moved last): P1 still hits; everything from the change on misses.
    let third = [item("P1", "", &four_thousand, 1), item("P3", "", "abcd", 3), item("P2", "", "new", 4)];
    assert_eq!(hits(&tracker.track(&third, prices)), [true, false, false]);
}
