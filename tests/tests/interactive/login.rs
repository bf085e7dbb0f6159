//! `/login` and `/logout` in a real terminal: the ChatGPT (Codex) browser login, with a `$BROWSER` that
//! notes the address and the test following it as a signed-in browser would, then forgetting the login.

use super::*;

/// A `$BROWSER` that writes the address it is given to `seen`.
fn recording_browser(sandbox: &Sandbox, seen: &std::path::Path) -> String {
    use std::os::unix::fs::PermissionsExt;
    let script = sandbox.root.path().join("browser.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\nprintf '%s' \"$1\" > '{}.tmp' && mv '{0}.tmp' '{0}'\n", seen.display()),
    )
    .expect("script");
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    script.to_string_lossy().into_owned()
}

fn stored(sandbox: &Sandbox) -> Value {
    let text = std::fs::read_to_string(sandbox.agent_dir().join("auth.json")).unwrap_or_default();
    serde_json::from_str(&text).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn slash_login_runs_the_chatgpt_browser_login_and_slash_logout_forgets_it() {
    let mock = server(r#"{"responses": []}"#).await;
    let sandbox = Sandbox::new(&mock.base_url());
    let seen = sandbox.root.path().join("browser-address.txt");
    let browser = recording_browser(&sandbox, &seen);
    let origin = mock.oauth_origin();
    let env = [("PI_GEN_OAUTH_SERVER", origin.as_str()), ("BROWSER", browser.as_str())];
    let mut agent = sandbox.spawn_pty_env(&agent_binary("pi"), &MODEL_ARGS, &env, 30, 100);
    agent.wait_for_text("%/");

    agent.type_text("/login");
    agent.send(keys::ENTER);
    agent.wait_for_text("Log in to");
    agent.type_text("ChatGPT");
    agent.send(keys::ENTER);
    agent.wait_for_text("Paste the authorization code");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !seen.exists() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let address = std::fs::read_to_string(&seen).expect("the browser was given the address");
    assert!(address.starts_with(&format!("{origin}/oauth/authorize?")), "{address}");
    assert!(address.contains("originator=pi") && address.contains("codex_cli_simplified_flow=true"), "{address}");
    let page = reqwest::get(&address).await.expect("the callback answers").text().await.expect("page");
    assert!(page.contains("login complete"), "{page}");
    let screen = agent.wait_for_text("Logged in to ChatGPT");
    agent.wait_for_absence("Paste the authorization code");
    assert!(!screen.contains("mock-signature"), "no token on screen");
    let login = &stored(&sandbox)["openai-codex"];
    assert_eq!(login["type"], "oauth");
    assert_eq!(login["accountId"], pi_runtime::testing::TEST_CHATGPT_ACCOUNT_ID);

    agent.type_text("/logout");
    agent.send(keys::ENTER);
    agent.wait_for_text("Log out of");
    agent.send(keys::ENTER);
    agent.wait_for_text("Logged out of ChatGPT");
    assert_eq!(stored(&sandbox).get("openai-codex"), None);
    assert!(mock.model_requests().is_empty(), "logins never reach the model");
    quit(&mut agent);
}
