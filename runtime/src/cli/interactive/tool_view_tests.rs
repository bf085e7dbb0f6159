//! Snapshots of tool calls as the conversation shows them: running, done, failed, collapsed and expanded.

use pi_tui::text::{strip_escapes, visible_width};
use pi_tui::{ColorDepth, Theme};
use serde_json::json;

use super::*;

fn shown(view: &ToolView, width: usize, expanded: bool) -> String {
    let theme = Theme::dark(ColorDepth::Ansi256);
    let lines = view.render(width, expanded, &theme);
    for line in &lines {
        assert_eq!(visible_width(line), width, "a tool box fills its width: {line:?}");
    }
    lines.iter().map(|line| strip_escapes(line).trim_end().to_owned()).collect::<Vec<_>>().join("\n")
}

fn numbered(count: usize) -> String {
    (1..=count).map(|n| format!("line {n}")).collect::<Vec<_>>().join("\n")
}

#[test]
fn a_running_read_shows_its_path_and_range() {
    let view = ToolView::new("1", "read", json!({"path": "src/main.rs", "offset": 10, "limit": 5}));
    assert_eq!(shown(&view, 40, false), "\n read src/main.rs:10-14\n");
}

#[test]
fn long_output_is_collapsed_to_its_first_lines_until_expanded() {
    let mut view = ToolView::new("1", "read", json!({"path": "notes.txt"}));
    view.output = numbered(14);
    view.state = ToolState::Done;
    insta::assert_snapshot!(shown(&view, 40, false));
    let expanded = shown(&view, 40, true);
    assert!(expanded.contains("line 14") && !expanded.contains("more lines"), "{expanded}");
}

#[test]
fn bash_keeps_the_last_lines_and_failures_are_marked() {
    let mut view = ToolView::new("1", "bash", json!({"command": "cargo test --workspace"}));
    view.output = numbered(13);
    view.state = ToolState::Failed;
    insta::assert_snapshot!(shown(&view, 40, false));
}

#[test]
fn other_tools_show_their_arguments_and_narrow_boxes_cut_lines() {
    let mut view = ToolView::new("1", "run_tests", json!({"filter": "parser"}));
    view.output = "a very long output line that cannot fit in a narrow terminal".to_owned();
    view.state = ToolState::Done;
    insta::assert_snapshot!(shown(&view, 24, false));
}

#[test]
fn a_quiet_read_shows_only_its_title_once_done_until_expanded() {
    let mut view = ToolView::new("1", "read", json!({"path": "hello.txt"}));
    view.quiet_when_done = true;
    view.output = "Hello from the fixture file.\nSecond line.".to_owned();
    view.state = ToolState::Done;
    assert_eq!(shown(&view, 40, false), "\n read hello.txt\n");
    assert!(shown(&view, 40, true).contains("Second line."));
    view.state = ToolState::Failed;
    assert!(shown(&view, 40, false).contains("Second line."), "a failure is always shown");
}

#[test]
fn a_sub_agent_call_shows_its_task_then_what_it_did_and_said() {
    let mut view = ToolView::new("1", "explore", json!({"task": "Where is add defined?"}));
    view.output = "→ read\nadd is in calc.py:1.".to_owned();
    assert_eq!(shown(&view, 40, false), "\n explore Where is add defined?\n\n → read\n add is in calc.py:1.\n");
}
