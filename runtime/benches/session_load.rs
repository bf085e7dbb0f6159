//! Loading a long session: a 100,000-entry session file (users, assistants with usage and tool calls, tool
//! results, a few model and thinking changes) parsed from memory into typed entries, and written back out.
//! The text is built once, outside the timed part.
//!
//! Run: `cargo bench -p pi-runtime --bench session_load`

use std::sync::LazyLock;

use divan::Bencher;
use pi_runtime::session::{LoadedSession, build_session_context, parse_session_text, session_text};

fn main() {
    let text = &*SESSION_TEXT;
    eprintln!("session: {ENTRY_COUNT} entries, {:.1} MB", text.len() as f64 / 1_000_000.0);
    divan::main();
}

const ENTRY_COUNT: usize = 100_000;

static SESSION_TEXT: LazyLock<String> = LazyLock::new(build_session_text);
static LOADED: LazyLock<LoadedSession> =
    LazyLock::new(|| parse_session_text(&SESSION_TEXT).unwrap_or_else(|| panic!("the generated session has a header")));

fn build_session_text() -> String {
    let mut text = String::with_capacity(ENTRY_COUNT * 700);
    text.push_str(
        r#"{"type":"session","version":3,"id":"01a20a08-0f83-71ad-b03d-7a8be24283cd","timestamp":"2026-11-23T20:10:30.148Z","cwd":"/home/dev/project"}"#,
    );
    text.push('\n');
    let mut parent = String::from("null");
    for index in 0..ENTRY_COUNT {
        let id = format!("{:08x}", index as u64 * 2_654_435_761 % (1 << 32));
        let timestamp =
            format!("2026-11-23T20:{:02}:{:02}.{:03}Z", index / 60_000 % 60, index / 1000 % 60, index % 1000);
        let ms = 1_795_464_630_000_u64 + index as u64;
        let body = match index % 1000 {
            0 => r#""provider":"anthropic","modelId":"claude-sonnet-4-5""#.to_owned(),
            500 => r#""thinkingLevel":"medium""#.to_owned(),
            _ => message_body(index, ms),
        };
        let kind = match index % 1000 {
            0 => "model_change",
            500 => "thinking_level_change",
            _ => "message",
        };
        text.push_str(&format!(
            r#"{{"type":"{kind}","id":"{id}","parentId":{parent},"timestamp":"{timestamp}",{body}}}"#
        ));
        text.push('\n');
        parent = format!("\"{id}\"");
    }
    text
}

fn message_body(index: usize, ms: u64) -> String {
    let message = match index % 4 {
        0 => format!(
            r#"{{"role":"user","content":[{{"type":"text","text":"Please look at src/module_{index}.rs and fix the failing test; it panics with an index out of bounds."}}],"timestamp":{ms}}}"#
        ),
        1 => format!(
            r#"{{"role":"assistant","content":[{{"type":"thinking","thinking":"The test indexes past the end; read the file first.","thinkingSignature":"sig_{index}"}},{{"type":"toolCall","id":"toolu_{index}","name":"read","arguments":{{"path":"src/module_{index}.rs","offset":1,"limit":200}}}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":{input},"output":87,"cacheRead":41230,"cacheWrite":512,"totalTokens":{total},"cost":{{"input":0.000036,"output":0.001305,"cacheRead":0.012369,"cacheWrite":0.00192,"total":0.01563}}}},"stopReason":"toolUse","timestamp":{ms},"responseId":"msg_{index}"}}"#,
            input = 12 + index % 97,
            total = 41_841 + index % 97,
        ),
        2 => format!(
            r#"{{"role":"toolResult","toolCallId":"toolu_{}","toolName":"read","content":[{{"type":"text","text":"pub fn get(items: &[u32], i: usize) -> u32 {{\n    items[i + 1]\n}}\n\n#[test]\nfn gets() {{\n    assert_eq!(get(&[1, 2], 1), 2);\n}}\n"}}],"isError":false,"timestamp":{ms}}}"#,
            index - 1
        ),
        _ => format!(
            r#"{{"role":"assistant","content":[{{"type":"text","text":"The function reads `items[i + 1]`; it should read `items[i]`. Fixed in module {index}."}}],"api":"anthropic-messages","provider":"anthropic","model":"claude-sonnet-4-5","usage":{{"input":230,"output":41,"cacheRead":41800,"cacheWrite":0,"totalTokens":42071,"cost":{{"input":0.00069,"output":0.000615,"cacheRead":0.01254,"cacheWrite":0,"total":0.013845}}}},"stopReason":"stop","timestamp":{ms}}}"#
        ),
    };
    format!(r#""message":{message}"#)
}

/// Text → header and typed entries.
#[divan::bench(sample_count = 10)]
fn parse_100k_entries(bencher: Bencher) {
    let text = &*SESSION_TEXT;
    bencher.bench(|| {
        let loaded = parse_session_text(divan::black_box(text));
        assert!(loaded.is_some_and(|loaded| loaded.entries.len() == ENTRY_COUNT && loaded.skipped_lines == 0));
    });
}

/// Typed entries → file text (a migration rewrite or a fork).
#[divan::bench(sample_count = 10)]
fn write_100k_entries(bencher: Bencher) {
    let loaded = &*LOADED;
    bencher.bench(|| session_text(&loaded.header, divan::black_box(&loaded.entries)).map(|text| text.len()));
}

/// Typed entries → the agent's context: the leaf-to-root walk of `build_session_context`.
#[divan::bench(sample_count = 10)]
fn build_context_100k_entries(bencher: Bencher) {
    let loaded = &*LOADED;
    let leaf = loaded.entries.last().map(|entry| entry.id.clone());
    bencher.bench(|| build_session_context(divan::black_box(&loaded.entries), leaf.as_deref()).messages.len());
}

/// What `--session FILE` does before the first request: parse the file and build the context.
#[divan::bench(sample_count = 10)]
fn load_and_build_context_100k_entries(bencher: Bencher) {
    let text = &*SESSION_TEXT;
    bencher.bench(|| {
        let loaded = parse_session_text(divan::black_box(text)).map(|loaded| loaded.entries).unwrap_or_default();
        let leaf = loaded.last().map(|entry| entry.id.as_str());
        build_session_context(&loaded, leaf).messages.len()
    });
}
