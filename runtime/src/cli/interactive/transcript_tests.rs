//! Tests for the transcript's kept frame: after any change, the lines it rebuilds from the first changed item
//! are the lines a frame drawn from scratch has, and the stable prefix it reports is the last frame's.

use pi_tui::{ColorDepth, Role, Theme};

use super::*;
use crate::protocol::{AssistantContent, AssistantMessage, StopReason};

fn theme() -> Theme {
    Theme::dark(ColorDepth::None)
}

fn answer(text: &str) -> AssistantMessage {
    AssistantMessage { content: vec![AssistantContent::text(text)], ..Default::default() }
}

/// Draws a frame and checks it against one drawn from scratch and against the last frame's stable lines.
fn check(transcript: &mut Transcript, last: &[String], width: usize, below: &[&str]) -> Vec<String> {
    let below: Vec<String> = below.iter().map(|line| (*line).to_owned()).collect();
    let theme = theme();
    let (lines, stable) = {
        let frame = transcript.frame(width, &theme, below.clone());
        (frame.lines.to_vec(), frame.stable)
    };
    assert!(stable <= last.len() && stable <= lines.len(), "stable {stable} of {} / {}", last.len(), lines.len());
    assert_eq!(lines[..stable], last[..stable], "the stable lines are the last frame's");
    transcript.stale(0);
    let scratch = transcript.frame(width, &theme, below).lines.to_vec();
    assert_eq!(lines, scratch, "the kept frame is the frame drawn from scratch");
    lines
}

#[test]
fn the_kept_frame_follows_every_change_to_the_conversation() {
    let theme = theme();
    let mut transcript = Transcript::new();
    transcript.push(Item::Static(vec!["header".to_owned()]));
    let mut last = check(&mut transcript, &[], 40, &["editor"]);
    transcript.push(Item::User("first question".to_owned()));
    transcript.push(Item::Assistant(AssistantView::new()));
    last = check(&mut transcript, &last, 40, &["editor", "footer"]);
    // The answer streams: the lines before it stay, the frame follows it.
    for text in ["The", "The answer", "The answer\n\n- one\n- two"] {
        if let Some(view) = transcript.last_assistant() {
            view.update(&answer(text), &theme);
        }
        last = check(&mut transcript, &last, 40, &["editor", "footer"]);
    }
    assert!(last.iter().any(|line| line.contains("two")), "{last:?}");
    // A tool call runs and finishes, then a later item changes before it.
    transcript.push(Item::Tool(ToolView::new("call_1", "read", serde_json::json!({"path": "notes.txt"}))));
    transcript.notice("a notice after the tool", Role::Muted);
    last = check(&mut transcript, &last, 40, &["editor"]);
    if let Some(view) = transcript.tool("call_1") {
        view.output = "line one\nline two".to_owned();
        view.state = ToolState::Done;
    }
    last = check(&mut transcript, &last, 40, &["editor"]);
    assert!(last.iter().any(|line| line.contains("line two")), "{last:?}");
    // A failed answer leaves the screen before its retry.
    transcript.push(Item::Assistant(AssistantView::new()));
    if let Some(view) = transcript.last_assistant() {
        view.update(&AssistantMessage { stop_reason: StopReason::Error, ..answer("half") }, &theme);
    }
    last = check(&mut transcript, &last, 40, &["editor"]);
    transcript.drop_failed_answer();
    last = check(&mut transcript, &last, 40, &[]);
    assert!(!last.iter().any(|line| line.contains("half")), "{last:?}");
    // Toggles and widths draw everything again.
    transcript.expand_tools = true;
    last = check(&mut transcript, &last, 40, &["editor"]);
    last = check(&mut transcript, &last, 25, &["editor"]);
    // A new session keeps only the header.
    transcript.clear_conversation();
    last = check(&mut transcript, &last, 25, &["editor"]);
    assert_eq!(last, ["header", "editor"]);
}
