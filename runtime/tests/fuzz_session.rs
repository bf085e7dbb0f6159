//! Property tests of session loading (`parse_session_text`, `load_session_file`, `SessionManager::open`):
//! random sessions round-trip; a file cut at any byte (a crash mid-write) keeps every complete entry and
//! can be continued; garbage lines, wrong-shape JSON and invalid UTF-8 lose nothing else; random text and
//! random entry graphs (cycles, dangling parents, duplicate ids) never panic or hang. Bounded for CI;
//! `scripts/fuzz` runs more cases.

mod fuzz_support;

use std::path::Path;

use fuzz_support::{config, json_value, tricky_text, within};
use pi_runtime::protocol::{
    AgentMessage, AssistantContent, AssistantMessage, ToolCall, ToolResultMessage, UserContent, UserMessage,
};
use pi_runtime::session::{
    LoadedSession, SessionEntry, SessionError, SessionManager, find_most_recent_session, load_session_file,
    parse_session_text, read_session_header, session_text,
};
use proptest::prelude::*;
use proptest::sample::Index;
use serde_json::{Value, json};

/// One step of building a session.
#[derive(Debug, Clone)]
enum Op {
    User(String),
    Assistant(String, Value),
    ToolResult(String),
    Model(String),
    Thinking(String),
    Name(String),
    Label(Index, Option<String>),
    Custom(String, Option<Value>),
    Branch(Index),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        3 => tricky_text(12).prop_map(Op::User),
        3 => (tricky_text(12), json_value()).prop_map(|(text, args)| Op::Assistant(text, args)),
        2 => tricky_text(8).prop_map(Op::ToolResult),
        1 => "[a-z0-9-]{1,12}".prop_map(Op::Model),
        1 => prop::sample::select(vec!["off", "low", "medium", "high"])
            .prop_map(|level| Op::Thinking(level.to_owned())),
        1 => tricky_text(4).prop_map(Op::Name),
        1 => (any::<Index>(), proptest::option::of(tricky_text(3))).prop_map(|(at, label)| Op::Label(at, label)),
        // `data: null` reads back as no data (serde's `Option`), so the generator never asks for `Some(null)`.
        1 => ("[a-z-]{1,10}", proptest::option::of(json_value()))
            .prop_map(|(kind, data)| Op::Custom(kind, data.filter(|data| !data.is_null()))),
        1 => any::<Index>().prop_map(Op::Branch),
    ]
}

/// The session the ops build (in memory) as file text, with its entries.
fn build(ops: &[Op]) -> (String, Vec<SessionEntry>) {
    let mut session = SessionManager::in_memory(Path::new("/tmp/fuzz-project"));
    for op in ops {
        let ids: Vec<String> = session.entries().iter().map(|entry| entry.id.clone()).collect();
        let result = match op {
            Op::User(text) => session.append_message(AgentMessage::User(UserMessage::text(text.clone()))),
            Op::Assistant(text, arguments) => session.append_message(AgentMessage::Assistant(AssistantMessage {
                content: vec![
                    AssistantContent::text(text.clone()),
                    AssistantContent::ToolCall(ToolCall {
                        id: "call_1".into(),
                        name: "read".into(),
                        arguments: arguments.clone(),
                        thought_signature: None,
                    }),
                ],
                api: "openai-completions".into(),
                provider: "fuzz".into(),
                model: "mock-model".into(),
                ..AssistantMessage::default()
            })),
            Op::ToolResult(text) => session.append_message(AgentMessage::ToolResult(ToolResultMessage {
                tool_call_id: "call_1".into(),
                tool_name: "read".into(),
                content: vec![UserContent::text(text.clone())],
                details: None,
                is_error: false,
                timestamp: 1,
                duration_ms: None,
            })),
            Op::Model(model) => session.append_model_change("fuzz", model),
            Op::Thinking(level) => session.append_thinking_level_change(level),
            Op::Name(name) => session.append_session_info(name),
            Op::Label(at, label) if !ids.is_empty() => session.append_label(&ids[at.index(ids.len())], label.clone()),
            Op::Custom(kind, data) => session.append_custom(kind, data.clone()),
            Op::Branch(at) if !ids.is_empty() => session.branch(&ids[at.index(ids.len())]).map(|()| String::new()),
            Op::Label(..) | Op::Branch(..) => Ok(String::new()),
        };
        result.expect("an in-memory session takes every op");
    }
    let entries = session.entries().to_vec();
    (session_text(session.header(), &entries).expect("entries encode"), entries)
}

fn sessions() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 0..12)
}

/// Writes `bytes` as a session file in a fresh folder and runs `work` on it, guarded against hangs.
fn with_file<T: Send + 'static>(bytes: Vec<u8>, work: impl FnOnce(&Path) -> T + Send + 'static) -> T {
    let shown = bytes.clone();
    within(
        move || String::from_utf8_lossy(&shown).into_owned(),
        move || {
            let dir = tempfile::tempdir().expect("temp dir");
            let path = dir.path().join("2026-01-01T00-00-00-000Z_fuzz.jsonl");
            std::fs::write(&path, bytes).expect("write the session file");
            work(&path)
        },
    )
}

fn parse_guarded(text: String) -> Option<LoadedSession> {
    let shown = text.clone();
    within(move || shown, move || parse_session_text(&text))
}

fn ids(entries: &[SessionEntry]) -> Vec<&str> {
    entries.iter().map(|entry| entry.id.as_str()).collect()
}

/// Every non-blank line after the header is either an entry or counted as skipped.
fn assert_every_line_counted(text: &str, loaded: &LoadedSession) -> Result<(), TestCaseError> {
    let lines = text.lines().filter(|line| !line.trim().is_empty()).count();
    prop_assert_eq!(loaded.entries.len() + loaded.skipped_lines, lines.saturating_sub(1));
    Ok(())
}

/// Opens, reads and walks the session at `path` every way the agent does; none of it may panic.
fn exercise(path: &Path) {
    let _ = read_session_header(path);
    let _ = path.parent().map(find_most_recent_session);
    if let Ok(session) = SessionManager::open(path) {
        let tree = session.tree();
        let _ = session.context();
        let _ = tree.get_tree();
        let _ = tree.current_path();
        for entry in session.entries() {
            let _ = tree.path_to(&entry.id);
            let _ = tree.children(&entry.id);
            let _ = tree.context_at(Some(&entry.id));
        }
    }
}

proptest! {
    #![proptest_config(config(48))]

    /// A session file reads back as written; cut at any byte it keeps every complete entry, and continuing it
    /// drops the torn line and puts the next entry on a line of its own.
    #[test]
    fn a_torn_file_keeps_every_complete_entry_and_can_be_continued(ops in sessions(), cut in any::<Index>()) {
        let (text, entries) = build(&ops);
        let whole = parse_guarded(text.clone()).expect("a written session parses");
        prop_assert_eq!(&whole.entries, &entries);
        prop_assert_eq!(whole.skipped_lines, 0);

        let cut = cut.index(text.len() + 1);
        let line_ends: Vec<usize> = text.match_indices('\n').map(|(at, _)| at).collect();
        let complete_lines = line_ends.iter().filter(|&&end| end <= cut).count();
        let line_start = line_ends.iter().rev().find(|&&end| end < cut).map_or(0, |end| end + 1);
        let torn = cut > line_start && !line_ends.contains(&cut);
        let (loaded, reloaded) = with_file(text.as_bytes()[..cut].to_vec(), |path| {
            let loaded = load_session_file(path);
            let appended = SessionManager::open(path).map(|mut session| {
                session.append_message(AgentMessage::User(UserMessage::text("after the crash"))).expect("append")
            });
            (loaded, appended.map(|id| (id, load_session_file(path))))
        });
        if complete_lines == 0 {
            prop_assert!(matches!(loaded, Err(SessionError::NoHeader { .. })), "{loaded:?}");
            return Ok(());
        }
        let loaded = loaded.map_err(|error| TestCaseError::fail(error.to_string()))?;
        let kept = complete_lines - 1;
        prop_assert_eq!(&loaded.entries, &entries[..kept].to_vec());
        prop_assert_eq!(loaded.skipped_lines, usize::from(torn));

        let (new_id, reloaded) = reloaded.map_err(|error| TestCaseError::fail(error.to_string()))?;
        let reloaded = reloaded.map_err(|error| TestCaseError::fail(error.to_string()))?;
        prop_assert_eq!(&reloaded.entries[..kept], &entries[..kept]);
        prop_assert_eq!(ids(&reloaded.entries[kept..]), vec![new_id.as_str()]);
        // Continuing the file cut the torn line off: only whole lines are left.
        prop_assert_eq!(reloaded.skipped_lines, 0);
    }

    /// Garbage lines (not JSON, JSON of the wrong shape, a second header, blank) anywhere after the header:
    /// every real entry is kept in order and every line is accounted for.
    #[test]
    fn garbage_lines_lose_no_entry(
        ops in sessions(),
        garbage in prop::collection::vec((any::<Index>(), garbage_line()), 1..8),
    ) {
        let (text, entries) = build(&ops);
        let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
        for (at, line) in &garbage {
            lines.insert(1 + at.index(lines.len()), line.clone());
        }
        let damaged = lines.join("\n") + "\n";
        let loaded = parse_guarded(damaged.clone()).expect("the header is intact");
        let original: Vec<&str> = ids(&entries);
        let kept: Vec<SessionEntry> =
            loaded.entries.iter().filter(|entry| original.contains(&entry.id.as_str())).cloned().collect();
        prop_assert_eq!(&kept, &entries);
        assert_every_line_counted(&damaged, &loaded)?;
        let file = with_file(damaged.into_bytes(), load_session_file)
            .map_err(|error| TestCaseError::fail(error.to_string()))?;
        prop_assert_eq!(file, loaded);
    }

    /// Invalid UTF-8 bytes in one entry's line: the other entries are kept unchanged.
    #[test]
    fn invalid_utf8_in_a_line_spares_the_others(
        ops in sessions(),
        line in any::<Index>(),
        offset in any::<Index>(),
        bad in prop::collection::vec(0x80u8..=0xFF, 1..4),
    ) {
        let ops: Vec<Op> = std::iter::once(Op::User("first".into())).chain(ops).collect();
        let (text, entries) = build(&ops);
        let mut lines: Vec<Vec<u8>> = text.lines().map(|line| line.as_bytes().to_vec()).collect();
        let damaged_line = 1 + line.index(lines.len() - 1);
        let at = offset.index(lines[damaged_line].len() + 1);
        lines[damaged_line].splice(at..at, bad);
        let bytes = lines.join(&b'\n');
        let loaded = with_file(bytes, load_session_file).map_err(|error| TestCaseError::fail(error.to_string()))?;
        let damaged_id = entries[damaged_line - 1].id.clone();
        let spared: Vec<&SessionEntry> = entries.iter().filter(|entry| entry.id != damaged_id).collect();
        let kept: Vec<&SessionEntry> =
            loaded.entries.iter().filter(|entry| spared.iter().any(|spared| spared.id == entry.id)).collect();
        prop_assert_eq!(kept, spared);
        prop_assert_eq!(loaded.entries.len() + loaded.skipped_lines, entries.len());
    }

    /// Random lines, after a current, old or missing header.
    #[test]
    fn random_lines_never_panic(header in header_line(), lines in prop::collection::vec(garbage_line(), 0..10)) {
        let text = std::iter::once(header).chain(lines).collect::<Vec<_>>().join("\n");
        if let Some(loaded) = parse_guarded(text.clone()) {
            assert_every_line_counted(&text, &loaded)?;
        }
        with_file(text.into_bytes(), exercise);
    }

    /// Random bytes as a session file.
    #[test]
    fn random_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..400)) {
        with_file(bytes, exercise);
    }

    /// Entries whose ids and parents come from a handful of names: duplicates, cycles, self-parents,
    /// dangling parents, labels and compactions pointing anywhere.
    #[test]
    fn any_entry_graph_loads_and_walks(header in header_line(), lines in prop::collection::vec(graph_entry(), 0..12)) {
        let text = std::iter::once(header).chain(lines).collect::<Vec<_>>().join("\n");
        with_file(text.into_bytes(), exercise);
    }
}

fn garbage_line() -> impl Strategy<Value = String> {
    let second_header = json!({"type": "session", "version": 3, "id": "2nd", "timestamp": "2026-01-01T00:00:00.000Z"});
    let kinds = vec!["message", "model_change", "label", "compaction", "custom", "branch_summary"];
    prop_oneof![
        any::<String>().prop_map(|text| text.replace('\n', " ")),
        tricky_text(8).prop_map(|text| text.replace('\n', " ")),
        json_value().prop_map(|value| value.to_string()),
        Just(String::new()),
        Just("   \t".to_owned()),
        Just(second_header.to_string()),
        (json_value(), json_value()).prop_map(|(kind, id)| json!({"type": kind, "id": id}).to_string()),
        (prop::sample::select(kinds), json_value()).prop_map(|(kind, body)| {
            json!({"type": kind, "id": "zz", "parentId": null, "timestamp": "x", "message": body, "data": body})
                .to_string()
        }),
        // A line cut short, as a crash leaves it.
        json_value().prop_map(|value| {
            let chars: Vec<char> = value.to_string().chars().collect();
            chars[..chars.len() / 2].iter().collect()
        }),
    ]
}

fn header_line() -> impl Strategy<Value = String> {
    let version =
        prop_oneof![Just(Value::Null), Just(json!(1)), Just(json!(2)), Just(json!(3)), Just(json!(99)), json_value()];
    (version, any::<bool>()).prop_map(|(version, with_version)| {
        let mut header =
            json!({"type": "session", "id": "fuzz", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/tmp/fuzz"});
        if with_version {
            header["version"] = version;
        }
        header.to_string()
    })
}

fn graph_entry() -> impl Strategy<Value = String> {
    let name = || prop::sample::select(vec!["a", "b", "c", "d", "e"]);
    let parent = prop_oneof![Just(Value::Null), name().prop_map(Value::from)];
    let kind = prop::sample::select(vec![
        "message",
        "model_change",
        "label",
        "compaction",
        "branch_summary",
        "session_info",
        "custom",
    ]);
    (name(), parent, kind, name(), "20[0-9]{2}-0[1-9]-1[0-9]T0[0-9]:00:00.000Z|x|").prop_map(
        |(id, parent, kind, other, timestamp)| {
            json!({
                "type": kind, "id": id, "parentId": parent, "timestamp": timestamp,
                "message": {"role": "user", "content": "hello", "timestamp": 1},
                "provider": "p", "modelId": "m", "targetId": other, "label": "L", "name": "n",
                "summary": "s", "firstKeptEntryId": other, "tokensBefore": 5, "fromId": other, "customType": "c",
            })
            .to_string()
        },
    )
}

/// A 12 MB line of garbage and a 4 MB message in the middle of a session: both read, nothing else lost.
#[test]
fn huge_lines_are_read_or_skipped_without_losing_entries() {
    let ops = vec![Op::User("before".into()), Op::User("x".repeat(4 << 20)), Op::User("after".into())];
    let (text, entries) = build(&ops);
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.insert(2, "{\"unterminated\": \"".to_owned() + &"é".repeat(6 << 20));
    let loaded = parse_guarded(lines.join("\n")).expect("the header is intact");
    assert_eq!(loaded.entries, entries);
    assert_eq!(loaded.skipped_lines, 1);
}

/// pi's own session lines (pi 0.73.1) cut at every byte: no panic, and the entries before the cut are kept.
#[test]
fn pis_own_session_cut_at_every_byte() {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/pi-0.73.1/session-lines.jsonl"))
            .expect("fixture");
    let first_session: String = text.lines().take(8).map(|line| format!("{line}\n")).collect();
    let whole = parse_guarded(first_session.clone()).expect("pi's session parses");
    assert_eq!(whole.entries.len(), 7);
    within(
        || "pi's session".to_owned(),
        move || {
            for cut in (0..=first_session.len()).filter(|&cut| first_session.is_char_boundary(cut)) {
                let complete = first_session[..cut].matches('\n').count();
                match parse_session_text(&first_session[..cut]) {
                    Some(loaded) => assert!(loaded.entries.len() >= complete.saturating_sub(1), "cut at {cut}"),
                    None => assert!(complete == 0, "cut at {cut}"),
                }
            }
        },
    );
}

/// A long linear session (100,000 entries, each the parent of the next) as pi's tree (`get_tree`, which the
/// `/tree` selector shows): building, walking and dropping it must not recurse once per entry.
#[test]
fn a_long_linear_session_builds_its_tree() {
    let mut text =
        String::from(r#"{"type":"session","version":3,"id":"long","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/x"}"#);
    text.push('\n');
    for n in 0..100_000 {
        let parent = if n == 0 { "null".to_owned() } else { format!("\"e{}\"", n - 1) };
        text.push_str(&format!(
            r#"{{"type":"model_change","id":"e{n}","parentId":{parent},"timestamp":"{at}","provider":"p","modelId":"m"}}"#,
            at = "2026-01-01T00:00:00.000Z",
        ));
        text.push('\n');
    }
    let depth = with_file(text.into_bytes(), |path| {
        let session = SessionManager::open(path).expect("the session opens");
        let tree = session.tree().get_tree();
        let mut depth = 0;
        let mut level = tree.first();
        while let Some(node) = level {
            depth += 1;
            level = node.children.first();
        }
        depth
    });
    assert_eq!(depth, 100_000);
}
