//! End to end for the `panels` context strategy (Context Pilot's pipeline) with agents/pilot.yaml: every
//! request carries the panels as `dynamic_panel` call/result pairs sorted most stable first, then a footer,
//! the repeated system prompt (Anthropic only) and the conversation, in each API's own wire shape; the
//! panel state survives `-c`; summarized and deleted messages leave later requests; the Spine wakes the
//! agent once for a console that exited; `--mode json` and RPC report the panels and their cache hits.

use std::process::Output;

use pi_gen_tests::{Sandbox, agent_binary, stderr, stdout};
use pi_runtime::testing::{MockLlmServer, MockScript};
use serde_json::{Value, json};
use wire::{Part, call, result, text};

mod interactive;
mod report;
mod spine;
mod state;
mod wire;

const APIS: [&str; 4] = ["openai-completions", "anthropic-messages", "openai-responses", "google-generative-ai"];
const GOOGLE: &str = "google-generative-ai";
const MODEL_ARGS: [&str; 4] = ["--provider", "mock", "--model", "m"];
const HEADER: &str = "Beginning of dynamic panel display. All content displayed below may be considered up to date.";
const STAMP: &str = "Panel automatically generated at ";
const FOOTER: &str = "End of dynamic panel displays.\nMessage timestamps:\n";
const FOOTER_ACK: &str = "Panel display complete. Proceeding with conversation.";
const REINJECTION: &str = "System instructions (repeated for emphasis):\n\n";
const REINJECTION_ACK: &str = "Understood. I will follow these instructions.";

async fn server(script: Value) -> MockLlmServer {
    let script = MockScript::from_json_str(&script.to_string()).expect("valid script");
    MockLlmServer::start(script).await.expect("mock server starts")
}

/// The base URL a user would write in models.json for `api` at the mock server.
fn base_url(api: &str, mock: &MockLlmServer) -> String {
    let port = mock.addr().port();
    match api {
        "anthropic-messages" => format!("http://127.0.0.1:{port}"),
        "google-generative-ai" => format!("http://127.0.0.1:{port}/v1beta"),
        _ => mock.base_url(),
    }
}

fn sandbox(api: &str, mock: &MockLlmServer) -> Sandbox {
    Sandbox::with_api(api, &base_url(api, mock))
}

/// The pilot agent's environment: its agent directory is the sandbox's, and git looks for no repository above
/// the sandbox (so there is no Git Status panel, and `git log` fails, wherever the temporary directory is).
fn pilot_env(sandbox: &Sandbox) -> [(&'static str, String); 2] {
    let root = sandbox.root.path().to_string_lossy().into_owned();
    [("PILOT_AGENT_DIR", sandbox.agent_dir().to_string_lossy().into_owned()), ("GIT_CEILING_DIRECTORIES", root)]
}

/// Runs the pilot agent with the mock model and `args`; it must succeed.
async fn run(sandbox: &Sandbox, args: &[&str]) -> Output {
    let env = pilot_env(sandbox);
    let env: Vec<(&str, &str)> = env.iter().map(|(key, value)| (*key, value.as_str())).collect();
    let args = [&MODEL_ARGS[..], args].concat();
    let output = sandbox.run_env(&agent_binary("pilot"), &args, &env).await;
    assert!(output.status.success(), "{args:?}: stderr: {}\nstdout: {}", stderr(&output), stdout(&output));
    output
}

/// One panel as a request showed it.
#[derive(Debug)]
struct Panel {
    id: String,
    call_id: String,
    /// The assistant text right before the call (its `Panel automatically generated at` line).
    stamp: String,
    /// The tool result's text.
    shown: String,
}

/// The `dynamic_panel` calls that show a panel, in order, with their results.
fn panels(parts: &[Part]) -> Vec<Panel> {
    let mut found = Vec::new();
    for (index, part) in parts.iter().enumerate() {
        let Part::Call { id: call_id, name, args } = part else { continue };
        let Some(id) = args["id"].as_str().filter(|_| name == "dynamic_panel") else { continue };
        let stamp = match index.checked_sub(1).map(|before| &parts[before]) {
            Some(Part::Text { role, text }) if role == "assistant" => text.clone(),
            other => panic!("panel {id} is not preceded by an assistant text: {other:?}"),
        };
        let shown = parts.iter().find_map(|p| match p {
            Part::Result { id, text } if id == call_id => Some(text.clone()),
            _ => None,
        });
        let shown = shown.unwrap_or_else(|| panic!("panel {id} has no result"));
        found.push(Panel { id: id.to_owned(), call_id: call_id.clone(), stamp, shown });
    }
    found
}

fn panel<'a>(shown: &'a [Panel], id: &str) -> &'a Panel {
    shown.iter().find(|panel| panel.id == id).unwrap_or_else(|| panic!("no panel {id} in {shown:#?}"))
}

fn ids(shown: &[Panel]) -> Vec<&str> {
    shown.iter().map(|panel| panel.id.as_str()).collect()
}

/// The footer's text and the index of the part after its result.
fn footer(api: &str, parts: &[Part]) -> (String, usize) {
    let at = parts
        .iter()
        .position(|p| matches!(p, Part::Call { args, .. } if args == &json!({"action": "end_panels"})))
        .unwrap_or_else(|| panic!("{api}: no footer in {parts:#?}"));
    let Part::Call { id, name, .. } = &parts[at] else { unreachable!() };
    assert_eq!(name, "dynamic_panel", "{api}");
    if api != GOOGLE {
        assert_eq!(id, "panel_footer", "{api}");
    }
    assert_eq!(parts[at + 1], result(id, FOOTER_ACK), "{api}: the footer's result follows its call");
    let Part::Text { role, text } = &parts[at - 1] else { panic!("{api}: no footer text: {:?}", parts[at - 1]) };
    assert_eq!(role, "assistant", "{api}");
    assert!(text.starts_with(FOOTER) && text.contains("\nCurrent datetime: 20"), "{api}: {text}");
    (text.clone(), at + 2)
}

/// The conversation after the panels, the footer and (Anthropic) the repeated system prompt.
fn conversation(api: &str, body: &Value) -> Vec<Part> {
    let parts = wire::parts(api, body);
    let (_, mut start) = footer(api, &parts);
    if api == "anthropic-messages" {
        let repeated = format!("{REINJECTION}{}", wire::system_prompt(api, body));
        assert_eq!(parts[start], text("user", &repeated), "{api}: the system prompt is repeated after the footer");
        assert_eq!(parts[start + 1], text("assistant", REINJECTION_ACK), "{api}");
        start += 2;
    } else {
        assert!(!body.to_string().contains("System instructions (repeated"), "{api}: only Anthropic: {body}");
    }
    parts[start..].to_vec()
}

#[tokio::test(flavor = "multi_thread")]
async fn panels_request_shape_over_every_api() {
    for api in APIS {
        let mock = server(json!([
            {"toolCalls": [
                {"id": "call_1", "name": "todo", "arguments": {"add": [{"text": "Write the tests"}]}},
                {"id": "call_2", "name": "open", "arguments": {"path": "notes.txt"}}
            ]},
            {"text": "Done."}
        ]))
        .await;
        let sandbox = sandbox(api, &mock);
        sandbox.write("notes.txt", "alpha line\nbeta line\n");
        let output = run(&sandbox, &["-p", "Plan it"]).await;
        assert_eq!(stdout(&output), "Done.\n", "{api}");
        let requests = mock.requests();
        assert_eq!(requests.len(), 2, "{api}");
        for request in &requests {
            wire::assert_tool_pairing(api, &request.body);
        }

        // The first request: every built-in panel (no git repository here) and the YAML's command panel.
        let first = panels(&wire::parts(api, &requests[0].body));
        // Refreshed at the same moment, the kinds that change least come first (a longer cacheable prefix).
        assert_eq!(ids(&first), ["P2", "P4", "P5", "P6", "P9", "P1", "P11", "P7", "P8", "P3"], "{api}");
        assert!(panel(&first, "P1").shown.ends_with("=======\nNo todos. Use the todo tool to plan multi-step work."));

        let body = &requests[1].body;
        let parts = wire::parts(api, body);
        let Part::Text { role, text: opening } = &parts[0] else { panic!("{api}: {:?}", parts[0]) };
        assert!(role == "assistant" && opening.starts_with(HEADER), "{api}: the panels open the conversation");
        assert_eq!(body.to_string().matches(HEADER).count(), 1, "{api}: only the first panel has the header");
        let shown = panels(&parts);
        // The panels the tools did not touch keep their time and come first; the changed ones follow.
        let unchanged = ["P2", "P4", "P5", "P6", "P9", "P11", "P7"];
        assert_eq!(ids(&shown), [&unchanged[..], &["P1", "P12", "P8", "P3"]].concat(), "{api}");
        let headers = [
            ("P1", "Todo List"),
            ("P2", "Library"),
            ("P3", "Statistics"),
            ("P4", "Tools"),
            ("P5", "Directory Tree"),
            ("P6", "Memories"),
            ("P7", "Spine"),
            ("P8", "Logs"),
            ("P9", "Scratchpad"),
            ("P11", "Recent commits"),
            ("P12", "File: notes.txt"),
        ];
        for (id, header) in headers {
            let shown = panel(&shown, id);
            if api != GOOGLE {
                assert_eq!(shown.call_id, format!("panel_{id}"), "{api}");
            }
            assert!(shown.stamp.contains(STAMP), "{api}: {id}: {}", shown.stamp);
            let title = format!("======= [{id}] {header} =======\n");
            assert!(shown.shown.starts_with(&title), "{api}: {id}: {}", shown.shown);
        }
        let times: Vec<&str> = shown.iter().map(|p| p.stamp.rsplit(STAMP).next().unwrap_or_default()).collect();
        assert!(times.windows(2).all(|pair| pair[0] <= pair[1]), "{api}: sorted by refresh time: {times:?}");
        assert!(times[0] < times[unchanged.len()], "{api}: the Todo panel was refreshed later: {times:?}");
        assert!(panel(&shown, "P1").shown.contains("\n[ ] T1 Write the tests\n"), "{api}: {shown:#?}");
        let file = &panel(&shown, "P12").shown;
        assert_eq!(file, "======= [P12] File: notes.txt =======\nalpha line\nbeta line\n", "{api}");

        let (footer_text, after) = footer(api, &parts);
        for line in ["\n- #1 user: 20", "\n- #2 assistant: 20", "\n- #3 tool result: 20", "\n- #4 tool result: 20"] {
            assert!(footer_text.contains(line), "{api}: {line:?} in {footer_text}");
        }
        let only_panels = parts[..after].iter().all(|part| match part {
            Part::Text { role, .. } => role == "assistant",
            Part::Call { name, .. } => name == "dynamic_panel",
            Part::Result { .. } => true,
        });
        assert!(only_panels, "{api}: nothing but panels before the footer: {parts:#?}");
        let id = |wire_id: &str, name: &str| if api == GOOGLE { format!("{name}#0") } else { wire_id.to_owned() };
        assert_eq!(
            conversation(api, body),
            [
                text("user", "Plan it"),
                call(&id("call_1", "todo"), "todo", json!({"add": [{"text": "Write the tests"}]})),
                call(&id("call_2", "open"), "open", json!({"path": "notes.txt"})),
                result(&id("call_1", "todo"), "Added T1."),
                result(&id("call_2", "open"), "Opened 'notes.txt' as P12"),
            ],
            "{api}: the real conversation follows the panels"
        );
    }
}
