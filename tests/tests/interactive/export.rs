//! `/export` in interactive mode: the same page as `--export`, written from the running session, opened in
//! headless Chromium.

use pi_gen_tests::browser::{PageServer, dump_dom};

use super::*;

#[tokio::test(flavor = "multi_thread")]
async fn slash_export_writes_the_page_of_the_running_session() {
    let mock = server(
        r#"{"responses": [
            {"text": "Here it is:\n\n```python\ndef greet():\n    return 'hi'\n```"},
            {"text": "**Done**, <b>really</b>."}
        ]}"#,
    )
    .await;
    let sandbox = Sandbox::new(&mock.base_url());
    let mut agent = start(&sandbox, &[]);
    agent.type_text("write a greeting");
    agent.send(keys::ENTER);
    agent.wait_for_text("return 'hi'");
    agent.type_text("thanks");
    agent.send(keys::ENTER);
    agent.wait_for_text("really");
    agent.wait_for_absence("Working...");

    agent.type_text("/export shared.html");
    agent.send(keys::ENTER);
    agent.wait_for_text("Exported the session to shared.html");
    quit(&mut agent);

    let page = std::fs::read(sandbox.work_dir().join("shared.html")).expect("the page is in the working directory");
    let server = PageServer::serve(page);
    let dom = dump_dom(&format!("{}/page.html", server.base), &[]);
    assert_eq!(server.requests(), ["/page.html"]);
    assert!(dom.contains("<span class=\"hl-k\">def</span> <span class=\"hl-f\">greet</span>"), "{dom}");
    assert!(dom.contains("<strong>Done</strong>, &lt;b&gt;really&lt;/b&gt;."), "{dom}");
    assert!(dom.contains("<summary>System prompt ("), "the running session's prompt is in the page");
    let tree = dom.split("<ol id=\"tree\">").nth(1).expect("the tree").split("</ol>").next().unwrap_or_default();
    assert_eq!(tree.matches("class=\"kind-user on-path").count(), 2, "{tree}");
    assert_eq!(tree.matches("class=\"kind-assistant on-path").count(), 2, "{tree}");
}
