//! Tests of the select list: filtering and ranking, keys, the scrolling window and what it draws.

use super::{SelectItem, SelectList, SelectOutcome};
use crate::component::Component;
use crate::text::{strip_escapes, visible_width};
use crate::theme::{ColorDepth, Role, Theme};
use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

fn commands() -> Vec<SelectItem> {
    let pairs = [
        ("settings", "Open settings menu"),
        ("model", "Select model (opens selector UI)"),
        ("scoped-models", "Enable/disable models for Ctrl+P cycling"),
        ("export", "Export session (HTML default, or specify path: .html/.jsonl)"),
        ("import", "Import and resume a session from a JSONL file"),
        ("share", "Share session as a secret GitHub gist"),
        ("copy", "Copy last agent message to clipboard"),
        ("name", "Set session display name"),
        ("session", "Show session info and stats"),
        ("changelog", "Show changelog entries"),
        ("hotkeys", "Show all keyboard shortcuts"),
        ("fork", "Create a new fork from a previous message"),
        ("tree", "Navigate session tree (switch branches)"),
        ("login", "Login with OAuth provider"),
        ("logout", "Logout from OAuth provider"),
        ("new", "Start a new session"),
        ("compact", "Manually compact the session context"),
        ("resume", "Resume a different session"),
        ("reload", "Reload extensions, skills, prompts and themes"),
        ("debug", "Write debug information to a file"),
        ("quit", "Quit pi"),
    ];
    pairs.iter().map(|(name, description)| SelectItem::new(*name, *name).with_description(*description)).collect()
}

fn list(items: Vec<SelectItem>, max_visible: usize) -> SelectList {
    SelectList::new(items, max_visible, Theme::dark(ColorDepth::TrueColor))
}

fn plain(list: &mut SelectList, width: usize) -> String {
    let lines = list.render(width);
    for line in &lines {
        assert!(visible_width(line) <= width, "{line:?} is wider than {width}");
    }
    lines.iter().map(|line| strip_escapes(line)).collect::<Vec<_>>().join("\n")
}

fn press(list: &mut SelectList, code: KeyCode) -> SelectOutcome {
    list.handle_key(&KeyEvent::new(code, KeyModifiers::NONE))
}

fn filtered_labels(list: &SelectList) -> Vec<String> {
    list.filtered.iter().map(|&index| list.items[index].label.clone()).collect()
}

#[test]
fn the_pi_command_list() {
    let mut commands = list(commands(), 5);
    insta::assert_snapshot!(plain(&mut commands, 100));
}

#[test]
fn prefix_beats_substring_beats_subsequence() {
    let items = ["a-model-b", "mdl", "modal", "model-x", "xmodel", "m-o-d-e-l"]
        .iter()
        .map(|label| SelectItem::new(*label, *label))
        .collect();
    let mut models = list(items, 10);
    models.set_filter("MODEL");
    assert_eq!(filtered_labels(&models), ["model-x", "a-model-b", "xmodel", "m-o-d-e-l"]);
    models.set_filter("mdl");
    assert_eq!(filtered_labels(&models), ["mdl", "a-model-b", "modal", "model-x", "xmodel", "m-o-d-e-l"]);
    models.set_filter("");
    assert_eq!(models.filtered_len(), 6);
}

#[test]
fn every_word_must_match_somewhere() {
    let items = vec![
        SelectItem::new("claude-sonnet-4-5", "claude-sonnet-4-5").with_hint("[anthropic]").with_description("fast"),
        SelectItem::new("gpt-5", "gpt-5").with_hint("[openai]").with_description("sonnet-free"),
        SelectItem::new("claude-opus-4-1", "claude-opus-4-1").with_hint("[anthropic]"),
    ];
    let mut models = list(items, 10);
    models.set_filter("claude son");
    assert_eq!(filtered_labels(&models), ["claude-sonnet-4-5"]);
    // A description match counts, after a label match of the same kind.
    models.set_filter("sonnet");
    assert_eq!(filtered_labels(&models), ["gpt-5", "claude-sonnet-4-5"]);
    models.set_filter("opus fast");
    assert_eq!(models.filtered_len(), 0);
    assert_eq!(models.selected(), None);
    assert_eq!(press(&mut models, KeyCode::Enter), SelectOutcome::Ignored);
    assert_eq!(press(&mut models, KeyCode::Down), SelectOutcome::Ignored);
    assert_eq!(plain(&mut models, 40), "  No matches");
}

#[test]
fn keys_move_wrap_select_and_cancel() {
    let mut commands = list(commands(), 5);
    assert_eq!(press(&mut commands, KeyCode::Up), SelectOutcome::Moved);
    assert_eq!(commands.selected().map(|item| item.value.as_str()), Some("quit"));
    assert_eq!(press(&mut commands, KeyCode::Down), SelectOutcome::Moved);
    assert_eq!(commands.selected_index(), Some(0));
    assert_eq!(press(&mut commands, KeyCode::PageDown), SelectOutcome::Moved);
    assert_eq!(commands.selected_index(), Some(5));
    assert_eq!(press(&mut commands, KeyCode::PageUp), SelectOutcome::Moved);
    assert_eq!(press(&mut commands, KeyCode::PageUp), SelectOutcome::Moved);
    assert_eq!(commands.selected_index(), Some(0));
    assert_eq!(press(&mut commands, KeyCode::End), SelectOutcome::Moved);
    assert_eq!(commands.selected_index(), Some(20));
    assert_eq!(press(&mut commands, KeyCode::PageDown), SelectOutcome::Moved);
    assert_eq!(commands.selected_index(), Some(20));
    assert_eq!(press(&mut commands, KeyCode::Home), SelectOutcome::Moved);
    assert_eq!(commands.selected_index(), Some(0));
    assert_eq!(press(&mut commands, KeyCode::Char('x')), SelectOutcome::Ignored);
    assert_eq!(press(&mut commands, KeyCode::Esc), SelectOutcome::Cancelled);
    commands.set_filter("exp");
    assert_eq!(press(&mut commands, KeyCode::Enter), SelectOutcome::Selected(3));
}

#[test]
fn the_window_follows_the_selection() {
    let mut commands = list(commands(), 5);
    assert!(commands.set_selected_value("fork"));
    insta::assert_snapshot!("window_middle", plain(&mut commands, 100));
    press(&mut commands, KeyCode::End);
    insta::assert_snapshot!("window_end", plain(&mut commands, 100));
    assert!(!commands.set_selected_value("missing"));
    assert_eq!(commands.selected().map(|item| item.value.as_str()), Some("quit"));
}

#[test]
fn no_counter_when_everything_fits() {
    let mut commands = list(commands(), 5);
    commands.set_filter("log");
    insta::assert_snapshot!(plain(&mut commands, 100));
}

#[test]
fn hints_marks_and_narrow_widths() {
    let items = vec![
        SelectItem::new("claude-sonnet-4-5", "claude-sonnet-4-5").with_hint("[anthropic]"),
        SelectItem::new("gpt-5", "gpt-5").with_hint("[openai]").with_description("line one\nline two"),
        SelectItem::new("qwen", "通义千问").with_hint("[qwen]"),
    ];
    let mut models = list(items, 3);
    models.set_marked_value(Some("gpt-5".to_owned()));
    models.set_selected_value("gpt-5");
    insta::assert_snapshot!("hints_wide", plain(&mut models, 80));
    insta::assert_snapshot!("hints_narrow", plain(&mut models, 20));
    for width in 0..30 {
        plain(&mut models, width);
    }
}

#[test]
fn the_selected_row_is_accent_and_bold() {
    let theme = Theme::dark(ColorDepth::TrueColor);
    let mut commands = list(commands(), 5);
    let lines = commands.render(100);
    let accent = theme.fg(Role::Accent, "").replace("\x1b[39m", "");
    assert!(lines[0].starts_with(&accent) && lines[0].contains("\x1b[1m"), "{:?}", lines[0]);
    assert!(lines[0].contains(&theme.fg(Role::Muted, "Open settings menu")), "{:?}", lines[0]);
    assert!(lines[1].starts_with("  model"), "{:?}", lines[1]);
    assert_eq!(lines[5], theme.fg(Role::Muted, "  (1/21)"));
}

#[test]
fn new_items_keep_the_filter_and_the_selection() {
    let mut picker = list(commands(), 5);
    picker.set_filter("s");
    assert!(picker.set_selected_value("session"));
    let mut more = commands();
    more.insert(0, SelectItem::new("search", "search"));
    picker.set_items(more);
    assert_eq!(picker.filter(), "s");
    assert_eq!(picker.selected().map(|item| item.value.as_str()), Some("session"));
    assert_eq!(picker.items().len(), 22);
}

#[test]
fn an_empty_label_shows_the_value_and_a_zero_window_shows_one_row() {
    let mut bare = list(vec![SelectItem::new("value-only", ""), SelectItem::new("second", "second")], 0);
    assert_eq!(plain(&mut bare, 40), "→ value-only\n  (1/2)");
}

#[test]
fn an_opaque_value_is_not_searched() {
    // Tree entries are keyed by random ids: a query must not rank an entry up because its id starts with a
    // letter of the query.
    let items = vec![
        SelectItem::new("f00d", "• assistant: Answer A.").with_opaque_value(),
        SelectItem::new("a11ce", "• assistant: Answer B.").with_opaque_value(),
    ];
    assert_eq!(super::filter::filter_items(&items, "answer a"), [0, 1]);
    let searched = vec![SelectItem::new("zzz", "one"), SelectItem::new("abc", "two")];
    assert_eq!(super::filter::filter_items(&searched, "abc"), [1], "a plain value is still searched");
}
