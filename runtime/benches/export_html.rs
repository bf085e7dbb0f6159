//! Exporting a long session as a page: 200 turns, each a question, an answer with thinking and a `read` of a
//! 150-line Rust file (highlighted), its result, and a markdown answer with a table and a code block. The
//! first export pays for loading the grammars; the timed ones show the steady cost of rendering.
//!
//! Run: `cargo bench -p pi-runtime --bench export_html`

use std::fmt::Write as _;
use std::sync::LazyLock;

use pi_runtime::export_html::{ExportInfo, session_html};
use pi_runtime::session::{LoadedSession, parse_session_text};

fn main() {
    let started = std::time::Instant::now();
    let page = export();
    eprintln!(
        "session: {} entries, {:.1} MB; page {:.1} MB; first export (grammars loaded) {:?}",
        LOADED.entries.len(),
        SESSION_TEXT.len() as f64 / 1e6,
        page.len() as f64 / 1e6,
        started.elapsed()
    );
    divan::main();
}

const TURNS: usize = 200;

static SESSION_TEXT: LazyLock<String> = LazyLock::new(build_session_text);
static LOADED: LazyLock<LoadedSession> =
    LazyLock::new(|| parse_session_text(&SESSION_TEXT).unwrap_or_else(|| panic!("the generated session has a header")));

fn line(text: &mut String, id: usize, kind_and_fields: &str) {
    let parent = if id == 0 { "null".to_owned() } else { format!("\"{:08x}\"", id - 1) };
    let _ = writeln!(
        text,
        r#"{{"type":{kind_and_fields},"id":"{id:08x}","parentId":{parent},"timestamp":"2026-11-23T20:{:02}:{:02}.000Z"}}"#,
        id / 60 % 60,
        id % 60
    );
}

fn build_session_text() -> String {
    let source: String =
        (0..150).map(|n| format!("    let value_{n} = compute({n}, \\\"text {n}\\\"); // step {n}\\n")).collect();
    let source = format!("fn main() {{\\n{source}}}\\n");
    let usage = r#""usage":{"input":1200,"output":300,"cacheRead":800,"cacheWrite":0,"totalTokens":2300,"cost":{"input":0.0036,"output":0.0045,"cacheRead":0.0002,"cacheWrite":0,"total":0.0083}}"#;
    let mut text = String::new();
    text.push_str(r#"{"type":"session","version":3,"id":"01a20a08-0f83-71ad-b03d-7a8be24283cd","timestamp":"2026-11-23T20:10:30.148Z","cwd":"/home/dev/project"}"#);
    text.push('\n');
    let mut id = 0;
    for turn in 0..TURNS {
        let user = format!(
            r#""message","message":{{"role":"user","content":"Please fix **module {turn}**: it panics.","timestamp":1}}"#
        );
        line(&mut text, id, &user);
        id += 1;
        let call = format!(
            r#""message","message":{{"role":"assistant","content":[{{"type":"thinking","thinking":"Read the module first."}},{{"type":"toolCall","id":"c{turn}","name":"read","arguments":{{"path":"src/module_{turn}.rs"}}}}],"api":"openai-completions","provider":"mock","model":"m",{usage},"stopReason":"toolUse","timestamp":1}}"#
        );
        line(&mut text, id, &call);
        id += 1;
        let result = format!(
            r#""message","message":{{"role":"toolResult","toolCallId":"c{turn}","toolName":"read","content":[{{"type":"text","text":"{source}"}}],"isError":false,"timestamp":1}}"#
        );
        line(&mut text, id, &result);
        id += 1;
        let answer = format!(
            r#""message","message":{{"role":"assistant","content":[{{"type":"text","text":"Fixed in **module {turn}**:\n\n| before | after |\n|---|---|\n| panic | ok |\n\n```rust\nfn fixed_{turn}() -> usize {{\n    let items = vec![1, 2, 3];\n    items.get(3).copied().unwrap_or(0)\n}}\n```"}}],"api":"openai-completions","provider":"mock","model":"m",{usage},"stopReason":"stop","timestamp":1}}"#
        );
        line(&mut text, id, &answer);
        id += 1;
    }
    text
}

fn export() -> String {
    let loaded = &*LOADED;
    let info = ExportInfo {
        agent: "pi",
        header: &loaded.header,
        entries: &loaded.entries,
        leaf_id: loaded.entries.last().map(|entry| entry.id.as_str()),
        session_name: None,
        jsonl: SESSION_TEXT.as_bytes(),
        jsonl_name: "session.jsonl".to_owned(),
        system_prompt: None,
        tools: Vec::new(),
    };
    session_html(&info)
}

#[divan::bench(sample_count = 10)]
fn page_of_200_turns() -> usize {
    export().len()
}
