//! The HTML export as a reader meets it: a branched fixture session (thinking, a failed tool call, an image, a
//! label, a branch summary, hostile HTML in messages) exported by the `pi` agent's `--export`, served from
//! loopback and opened in headless Chromium. The DOM after the page's script ran shows the rendered markdown,
//! the escaping, the tree and its filters, the figures; the server sees no request but the page's own.

use std::path::PathBuf;
use std::sync::OnceLock;

use pi_gen_tests::browser::{PageServer, drive, dump_dom, screenshot};
use pi_gen_tests::{agent_binary, workspace_root};

fn fixture() -> PathBuf {
    workspace_root().join("runtime/fixtures/export/branched.jsonl")
}

/// The fixture exported once by the generated agent, as a user would: `pi --export FILE OUT`.
fn exported_page() -> &'static [u8] {
    static PAGE: OnceLock<Vec<u8>> = OnceLock::new();
    PAGE.get_or_init(|| {
        let scratch = tempfile::tempdir().expect("scratch dir");
        let out = scratch.path().join("page.html");
        let output = std::process::Command::new(agent_binary("pi"))
            .arg("--export")
            .arg(fixture())
            .arg(&out)
            .env("PI_CODING_AGENT_DIR", scratch.path().join("agent"))
            .current_dir(scratch.path())
            .stdin(std::process::Stdio::null())
            .output()
            .expect("the agent runs");
        assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
        assert!(String::from_utf8_lossy(&output.stdout).contains("page.html"));
        std::fs::read(&out).expect("the page was written")
    })
}

/// The DOM of the page opened at `?query` from a loopback server, and the paths that server was asked for.
fn open(query: &str, extra: &[&str]) -> (String, Vec<String>) {
    let server = PageServer::serve(exported_page().to_vec());
    let dom = dump_dom(&format!("{}/page.html{query}", server.base), extra);
    (dom, server.requests())
}

/// The opening tag of the element with `id`.
fn tag<'a>(dom: &'a str, id: &str) -> &'a str {
    let at = dom.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("no element #{id}"));
    let open = dom[..at].rfind('<').expect("tag start");
    let close = at + dom[at..].find('>').expect("tag end");
    &dom[open..=close]
}

/// The tree rows as (id, class) pairs, in order.
fn tree_rows(dom: &str) -> Vec<(String, String)> {
    let tree = dom.split("<ol id=\"tree\">").nth(1).expect("the tree").split("</ol>").next().unwrap_or_default();
    tree.split("<li ")
        .skip(1)
        .map(|row| {
            let attr = |name: &str| {
                row.split(&format!("{name}=\""))
                    .nth(1)
                    .and_then(|rest| rest.split('"').next())
                    .unwrap_or_default()
                    .to_owned()
            };
            (attr("data-id"), attr("class"))
        })
        .collect()
}

fn tree_count(dom: &str) -> &str {
    dom.split("<div id=\"tree-count\">").nth(1).and_then(|rest| rest.split('<').next()).expect("the entry count")
}

#[test]
fn the_page_renders_in_chromium_with_its_script_and_fetches_nothing() {
    let (dom, requests) = open("", &[]);
    assert_eq!(requests, ["/page.html"], "the page asks for nothing: no favicon, image, font, style or script");
    // The script ran (the CSP allows it by hash) and opened the session's own branch.
    assert!(!tag(&dom, "tree-panel").is_empty());
    assert!(
        dom.contains("<body class=\"\" data-filter=\"default\" data-leaf=\"a0000010\" data-target=\"a0000010\">"),
        "{}",
        &dom[..2000]
    );
    assert!(tag(&dom, "entry-a000000e").ends_with("data-parent=\"a000000d\">"), "on the branch: shown");
    assert!(tag(&dom, "entry-a000000a").contains(" hidden="), "the picture branch is hidden");
    // Markdown rendered, code highlighted, figures counted over both branches.
    assert!(dom.contains("<h2>Summary of notes.md</h2>"));
    assert!(dom.contains("<td>missing.txt</td><td><strong>missing</strong></td>"));
    assert!(dom.contains("<span class=\"hl-k\">fn</span> <span class=\"hl-f\">main</span>"));
    assert!(dom.contains("<dt>Messages</dt><dd>3 user, 5 assistant, 2 tool results (1 failed), 1 branch summary</dd>"));
    assert!(dom.contains("<dt>Tokens</dt><dd>↑17.1K ↓327 R12.3K</dd><dt>Cost</dt><dd>$0.019</dd>"));
    // The model's and the user's HTML is text in the DOM, not elements.
    assert!(!dom.contains("<script>alert"), "no script element from a message");
    assert!(dom.contains("&lt;script&gt;alert('user')&lt;/script&gt;"));
    assert!(dom.contains("&lt;img src=\"/leak-raw.png\" onerror=\"alert('img')\"&gt;"));
    assert!(!dom.contains("<img src=\"/leak"));
    assert!(!dom.contains("href=\"javascript:"));
    assert!(dom.contains("<div class=\"tool tool-bash error\">"), "the failed call is marked");
    // The tree: default filter, the current branch marked, the other one reachable.
    let rows = tree_rows(&dom);
    assert_eq!(tree_count(&dom), format!("{} / 16 entries", rows.len()));
    assert_eq!(rows.len(), 9, "{rows:?}");
    let on_path = |id: &str| rows.iter().any(|(row, class)| row == id && class.contains("on-path"));
    assert!(on_path("a000000f") && !on_path("a000000b"), "{rows:?}");
    assert!(rows.iter().any(|(id, class)| id == "a0000004" && class.contains("tools-only")), "{rows:?}");
}

#[test]
fn a_link_to_an_entry_opens_its_branch() {
    // Opened as a saved file is: from file://, with the entry in the address.
    let saved = tempfile::tempdir().expect("scratch");
    let path = saved.path().join("shared session.html");
    std::fs::write(&path, exported_page()).expect("save the page");
    let url = format!("file://{}?targetId=a000000a", path.display().to_string().replace(' ', "%20"));
    let dom = dump_dom(&url, &[]);
    // The newest leaf under the picture question is its answer; that branch is shown instead.
    assert!(dom.contains("data-leaf=\"a000000b\" data-target=\"a000000a\""), "{}", &dom[..2000]);
    assert!(!tag(&dom, "entry-a000000a").contains(" hidden="));
    assert!(!tag(&dom, "entry-a000000b").contains(" hidden="));
    assert!(tag(&dom, "entry-a000000e").contains(" hidden="), "the French branch is hidden now");
    assert!(dom.contains("<img class=\"attached\" alt=\"attached image\" src=\"data:image/png;base64,"));
    let rows = tree_rows(&dom);
    let selected: Vec<_> = rows.iter().filter(|(_, class)| class.contains("selected")).collect();
    assert_eq!(selected.len(), 1);
    assert_eq!(selected[0].0, "a000000a");
}

#[test]
fn filters_and_search_choose_the_tree_rows() {
    let count = |query: &str| {
        let (dom, _) = open(query, &[]);
        let rows = tree_rows(&dom);
        assert_eq!(tree_count(&dom), format!("{} / 16 entries", rows.len()));
        rows
    };
    let users = count("?filter=user");
    assert_eq!(users.len(), 3);
    assert!(users.iter().all(|(_, class)| class.contains("kind-user")), "{users:?}");
    let labeled = count("?filter=labeled");
    assert_eq!(labeled.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["a0000008"]);
    assert_eq!(count("?filter=all").len(), 16);
    let no_tools = count("?filter=no-tools");
    assert!(!no_tools.iter().any(|(id, _)| id == "a0000004" || id == "a0000006"), "{no_tools:?}");
    assert_eq!(no_tools.len(), 7);
    let found = count("?q=french");
    assert_eq!(found.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(), ["a000000e"]);
    assert!(count("?q=no+such+words").is_empty());
}

#[test]
fn without_scripts_the_current_branch_still_reads() {
    // Served with a policy that forbids every script, as a mail client or a locked-down viewer would.
    let server =
        PageServer::serve_with_headers(exported_page().to_vec(), "Content-Security-Policy: script-src 'none'\r\n");
    let dom = dump_dom(&format!("{}/page.html", server.base), &[]);
    assert_eq!(server.requests(), ["/page.html"]);
    assert!(dom.contains("<body class=\"no-script\">"));
    assert!(!tag(&dom, "entry-a000000f").contains(" hidden="));
    assert!(tag(&dom, "entry-a000000b").contains(" hidden="));
    assert!(dom.contains("Bonjour : la liste compte <strong>60 points</strong>."));
}

#[test]
fn screenshots_at_desktop_and_phone_width() {
    let server = PageServer::serve(exported_page().to_vec());
    let dir = tempfile::tempdir().expect("scratch");
    for (name, width, height) in [("desktop.png", 1200, 800), ("phone.png", 390, 844)] {
        let path = dir.path().join(name);
        screenshot(&format!("{}/page.html", server.base), &path, width, height, &[]);
        let png = std::fs::read(&path).expect("png");
        assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "{name} is a PNG");
        // The IHDR chunk: width and height as asked.
        assert_eq!(u32::from_be_bytes(png[16..20].try_into().unwrap()), width);
        assert_eq!(u32::from_be_bytes(png[20..24].try_into().unwrap()), height);
        assert!(png.len() > 20_000, "{name} shows a page, not a blank ({} bytes)", png.len());
        if let Ok(keep) = std::env::var("PI_GEN_KEEP_SCREENSHOTS") {
            std::fs::copy(&path, PathBuf::from(keep).join(name)).expect("keep the screenshot");
        }
    }
    assert!(server.requests().iter().all(|path| path == "/page.html"), "{:?}", server.requests());
}

#[test]
fn a_reader_clicks_types_toggles_and_downloads() {
    let server = PageServer::serve(exported_page().to_vec());
    let downloads = tempfile::tempdir().expect("download dir");
    let script = workspace_root().join("tests/fixtures/export/drive-page.cjs");
    let seen = drive(&script, &format!("{}/page.html", server.base), downloads.path());
    assert_eq!(seen["errors"], serde_json::json!([]), "no script error: {seen}");
    let page_url = format!("{}/page.html", server.base);
    assert!(
        seen["requests"].as_array().unwrap().iter().all(|url| url.as_str().unwrap().starts_with(&page_url)),
        "{seen}"
    );
    assert!(server.requests().iter().all(|path| path == "/page.html"), "{:?}", server.requests());

    let click = &seen["afterClick"];
    assert_eq!(click["leaf"], "a000000b", "a click opens the newest leaf under the entry: {seen}");
    assert_eq!(click["target"], "a000000a");
    assert_eq!(click["imageVisible"], true);
    assert_eq!(click["frenchVisible"], false);
    assert_eq!(click["query"], "?leafId=a000000b&targetId=a000000a");
    assert_eq!(seen["afterKeys"]["target"], "a000000b", "ArrowDown then Enter opens the next row");

    assert_eq!(seen["userRows"], serde_json::json!(["a0000003", "a000000a", "a000000e"]));
    assert_eq!(seen["allRows"], 16);
    assert_eq!(seen["searchRows"], serde_json::json!(["a000000e"]));
    assert_eq!(seen["count"], "1 / 16 entries");

    assert_eq!(seen["thinkingAfterButton"], false);
    assert_eq!(seen["thinkingAfterKey"], true);
    assert_eq!(seen["toolOutputAfterKey"], false);
    assert_eq!(seen["toolOutputAfterButton"], true);
    assert_eq!(seen["clippedBefore"], true, "60 lines are cut at first: {seen}");
    assert_eq!(seen["clippedAfter"], false);

    assert_eq!(seen["downloadName"], "branched.jsonl");
    let downloaded = std::fs::read(downloads.path().join("branched.jsonl")).expect("the download");
    assert_eq!(downloaded, std::fs::read(fixture()).expect("fixture"), "the session file, byte for byte");

    assert_ne!(seen["lightBackground"], seen["darkBackground"], "{seen}");
    assert_eq!(seen["darkBackground"], "rgb(23, 25, 28)");
    assert_eq!(seen["phoneTreeVisible"], false, "{seen}");
    assert_eq!(seen["phoneOverflow"], false, "nothing wider than a phone");
    assert_eq!(seen["phoneTreeOpened"], true);
    assert_eq!(seen["phoneTreeClosed"], true);
}
