//! The page for the branched fixture session: every entry rendered, the current branch shown, hostile text
//! inert, the figures counted over all branches, the script allowed by its hash alone.

use super::*;
use crate::session::SessionEntry;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/fixtures/export/branched.jsonl");

fn fixture_page() -> (String, Vec<SessionEntry>) {
    let loaded = load_session_file(Path::new(FIXTURE)).unwrap();
    let jsonl = std::fs::read(FIXTURE).unwrap();
    let tree = SessionTree::from_entries(loaded.entries);
    let info = ExportInfo {
        agent: "pi",
        header: &loaded.header,
        entries: tree.entries(),
        leaf_id: tree.leaf_id(),
        session_name: tree.session_name(),
        jsonl: &jsonl,
        jsonl_name: "branched.jsonl".into(),
        system_prompt: Some("You are <careful>."),
        tools: vec![("read".into(), "Reads a file".into())],
    };
    let page = session_html(&info);
    if let Ok(dir) = std::env::var("PI_GEN_EXPORT_SAMPLE") {
        std::fs::write(Path::new(&dir).join("sample.html"), &page).unwrap();
    }
    (page, tree.entries().to_vec())
}

/// The opening tag of the entry element for `id`.
fn entry_tag<'a>(page: &'a str, id: &str) -> &'a str {
    let start = page.find(&format!("id=\"entry-{id}\"")).unwrap_or_else(|| panic!("no entry {id}"));
    let open = page[..start].rfind('<').unwrap();
    let end = start + page[start..].find('>').unwrap();
    &page[open..=end]
}

#[test]
fn every_entry_is_on_the_page_and_only_the_current_branch_is_shown() {
    let (page, entries) = fixture_page();
    assert_eq!(entries.len(), 16);
    for entry in &entries {
        let tag = entry_tag(&page, &entry.id);
        // The French branch (the file's last entries) is the current one; the picture branch is hidden.
        let on_other_branch = ["a000000a", "a000000b"].contains(&entry.id.as_str());
        assert_eq!(tag.ends_with(" hidden>"), on_other_branch, "{tag}");
    }
    // The tool result is shown inside its call's entry, which the script scrolls to.
    assert!(entry_tag(&page, "a0000005").contains("data-shown-in=\"entry-a0000004\""));
    assert!(page.contains("<img class=\"attached\" alt=\"attached image\" src=\"data:image/png;base64,iVBOR"));
}

#[test]
fn hostile_text_stays_text_and_nothing_can_load() {
    let (page, _) = fixture_page();
    let (head, rest) = page.split_once("</head>").unwrap();
    let conversation = rest.split("<script type=\"application/json\"").next().unwrap();
    assert!(!conversation.contains("<script"), "no script element from a message");
    // The model's tag is text: its `<` is escaped, so its attributes are only words.
    assert!(conversation.contains("&lt;img src=\"/leak-raw.png\" onerror=\"alert('img')\"&gt;"));
    assert!(!conversation.contains("<img src=\"/leak"), "no remote image");
    assert!(conversation.contains("<span class=\"unlinked-image\" title=\"/leak-markdown.png\">remote image</span>"));
    assert!(conversation.contains("&lt;script&gt;alert('user')&lt;/script&gt;"));
    assert!(
        conversation
            .contains("<span class=\"unlinked-link\" title=\"javascript:alert(&apos;link&apos;)\">hostile link</span>")
    );
    // The embedded tree data can't close its element either.
    let index = rest.split("<script type=\"application/json\" id=\"tree-index\">").nth(1).unwrap();
    let index = index.split("</script>").next().unwrap();
    assert!(index.contains("\\u003cscript\\u003e"));
    serde_json::from_str::<serde_json::Value>(index).unwrap();
    // Only the page's own script runs, and nothing is fetched.
    let hash = base64::engine::general_purpose::STANDARD.encode(sha2::Sha256::digest(SCRIPT.as_bytes()));
    assert!(head.contains(&format!(
        "default-src 'none'; img-src data: blob:; style-src 'unsafe-inline'; script-src 'sha256-{hash}'"
    )));
    assert_eq!(page.matches("<script>").count(), 1);
}

#[test]
fn markdown_code_and_tools_are_rendered() {
    let (page, _) = fixture_page();
    assert!(page.contains("<h2>Summary of notes.md</h2>"));
    assert!(page.contains("<table>"));
    assert!(page.contains("<pre class=\"code\" data-language=\"rust\"><code><span class=\"hl-k\">fn</span>"));
    assert!(page.contains("<pre class=\"code\" data-language=\"python\">"));
    assert!(page.contains("<span class=\"tool-name\">read</span> <span class=\"path\">notes.md</span>"));
    assert!(page.contains("<div class=\"output clip\" data-lines=\"60\">"), "60 lines are clipped");
    assert!(page.contains("<div class=\"tool tool-bash error\">"));
    assert!(page.contains("<div class=\"thinking md\">"));
    assert!(page.contains("<span class=\"label\">good summary</span>"));
    assert!(
        page.contains("<summary>System prompt (1 line)</summary><pre class=\"plain\">You are &lt;careful&gt;.</pre>")
    );
}

#[test]
fn the_figures_count_every_branch() {
    let (page, _) = fixture_page();
    assert!(page.contains("<dt>Models</dt><dd>mock/mock-model, mock/other-model</dd>"), "{}", &page[..3000]);
    assert!(
        page.contains("<dt>Messages</dt><dd>3 user, 5 assistant, 2 tool results (1 failed), 1 branch summary</dd>")
    );
    assert!(page.contains("<dt>Tool calls</dt><dd>2</dd>"));
    assert!(page.contains("<dt>Tokens</dt><dd>↑17.1K ↓327 R12.3K</dd>"));
    assert!(page.contains("<dt>Cost</dt><dd>$0.019</dd>"));
    assert!(page.contains("<dt>Branches</dt><dd>2</dd>"));
    assert!(page.contains("<h1>Release notes review</h1>"));
}

#[test]
fn the_session_file_is_embedded_byte_for_byte() {
    let (page, _) = fixture_page();
    let encoded = page.split("id=\"session-jsonl\" data-name=\"branched.jsonl\">").nth(1).unwrap();
    let encoded = encoded.split("</script>").next().unwrap();
    let decoded = base64::engine::general_purpose::STANDARD.decode(encoded).unwrap();
    assert_eq!(decoded, std::fs::read(FIXTURE).unwrap());
}
