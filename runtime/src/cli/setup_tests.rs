//! Tests for assembling the agent: the system prompt's sources and a whole `prepare` against a local
//! HTTP listener that records the request body.

use std::io::{BufRead as _, BufReader, Read as _, Write as _};
use std::net::TcpListener;

use serde_json::Value;

use super::*;
use crate::agent::QueueMode;
use crate::ai::ThinkingLevel;
use crate::definition::{CustomToolDefinition, CustomToolHandler};

#[test]
fn the_stream_idle_timeout_comes_from_the_environment_when_valid() {
    let env = |value: &'static str| move |name: &str| (name == STREAM_IDLE_TIMEOUT_ENV).then(|| value.to_owned());
    assert_eq!(stream_idle_timeout(env("1500")), Some(std::time::Duration::from_millis(1500)));
    assert_eq!(stream_idle_timeout(env("0")), None);
    assert_eq!(stream_idle_timeout(env("soon")), None);
    assert_eq!(stream_idle_timeout(|_| None), None);
}

#[test]
fn provider_retry_settings_are_read_as_pi_reads_them() {
    use std::time::Duration;
    let parse = |text: &str| provider_retry(Some(&serde_json::from_str::<Value>(text).expect("json")));
    assert_eq!(provider_retry(None), ProviderRetry::default());
    let all = parse(r#"{"provider": {"timeoutMs": 1500, "maxRetries": 0, "maxRetryDelayMs": 2000}}"#);
    assert_eq!(all.timeout, Some(Duration::from_millis(1500)));
    assert_eq!(all.max_retries, Some(0));
    assert_eq!(all.max_retry_delay, Some(Duration::from_secs(2)));
    // The old `retry.maxDelayMs` stands for `maxRetryDelayMs` only when that is not set.
    assert_eq!(parse(r#"{"maxDelayMs": 5000}"#).max_retry_delay, Some(Duration::from_secs(5)));
    assert_eq!(
        parse(r#"{"maxDelayMs": 5000, "provider": {"maxRetryDelayMs": 100}}"#).max_retry_delay,
        Some(Duration::from_millis(100))
    );
    let bad = parse(r#"{"provider": {"timeoutMs": "soon", "maxRetries": -1}}"#);
    assert_eq!(bad, ProviderRetry::default(), "values that are not whole numbers are ignored");
}

struct Place {
    _dir: tempfile::TempDir,
    agent: PathBuf,
    cwd: PathBuf,
}

fn place() -> Place {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("project");
    std::fs::create_dir_all(&agent).expect("mkdir");
    std::fs::create_dir_all(cwd.join(".pi")).expect("mkdir");
    Place { _dir: dir, agent, cwd }
}

fn args(list: &[&str]) -> CliArgs {
    crate::cli::args::parse_args(&AgentDefinition::default(), list.iter().map(|a| (*a).to_owned())).expect("parses")
}

fn prompt_of(place: &Place, definition: &AgentDefinition, list: &[&str]) -> String {
    let builder = prompt_builder(
        definition,
        &args(list),
        &place.agent,
        &place.cwd,
        &Resources::default(),
        Default::default(),
        true,
    )
    .expect("ok");
    builder.build(&[])
}

fn with_prompts() -> AgentDefinition {
    AgentDefinition {
        system_prompt: Some("AGENT BASE".to_owned()),
        append_system_prompt: Some("AGENT APPEND".to_owned()),
        ..AgentDefinition::default()
    }
}

#[test]
fn the_agents_system_prompt_replaces_the_default_below_system_md_and_the_flag() {
    let place = place();
    let definition = with_prompts();
    let prompt = prompt_of(&place, &definition, &[]);
    assert!(prompt.starts_with("AGENT BASE\n\nAGENT APPEND"), "{prompt}");
    assert!(!prompt.contains("Available tools"), "{prompt}");
    std::fs::write(place.agent.join("SYSTEM.md"), "USER SYSTEM").expect("write");
    assert!(prompt_of(&place, &definition, &[]).starts_with("USER SYSTEM\n\nAGENT APPEND"));
    std::fs::write(place.cwd.join(".pi/SYSTEM.md"), "PROJECT SYSTEM").expect("write");
    assert!(prompt_of(&place, &definition, &[]).starts_with("PROJECT SYSTEM\n\nAGENT APPEND"));
    let flagged = prompt_of(&place, &definition, &["--system-prompt", "FLAG"]);
    assert!(flagged.starts_with("FLAG\n\nAGENT APPEND"), "{flagged}");
    let plain = prompt_of(&place, &AgentDefinition::default(), &["--system-prompt", "FLAG"]);
    assert!(plain.starts_with("FLAG\nCurrent date: "), "{plain}");
}

#[test]
fn the_agents_append_text_comes_first_joined_by_a_blank_line() {
    let place = place();
    let definition = with_prompts();
    std::fs::write(place.agent.join("APPEND_SYSTEM.md"), "USER APPEND").expect("write");
    let prompt = prompt_of(&place, &definition, &[]);
    assert!(prompt.starts_with("AGENT BASE\n\nAGENT APPEND\n\nUSER APPEND\n"), "{prompt}");
    let prompt = prompt_of(&place, &definition, &["--append-system-prompt", "ONE", "--append-system-prompt", "TWO"]);
    assert!(prompt.starts_with("AGENT BASE\n\nAGENT APPEND\n\nONE\n\nTWO\n"), "{prompt}");
    assert!(!prompt.contains("USER APPEND"), "the flag replaces APPEND_SYSTEM.md: {prompt}");
    let no_agent_append = AgentDefinition { append_system_prompt: None, ..with_prompts() };
    let prompt = prompt_of(&place, &no_agent_append, &[]);
    assert!(prompt.starts_with("AGENT BASE\n\nUSER APPEND\n"), "{prompt}");
}

#[test]
fn context_files_use_the_agents_file_names() {
    let place = place();
    std::fs::write(place.cwd.join("AGENTS.md"), "from agents md").expect("write");
    std::fs::write(place.cwd.join("SCOUT.md"), "from scout md").expect("write");
    let plain = prompt_of(&place, &AgentDefinition::default(), &[]);
    assert!(plain.contains("from agents md") && !plain.contains("from scout md"), "{plain}");
    let scout = AgentDefinition { context_file_names: vec!["SCOUT.md".to_owned()], ..AgentDefinition::default() };
    let prompt = prompt_of(&place, &scout, &[]);
    assert!(prompt.contains("from scout md") && !prompt.contains("from agents md"), "{prompt}");
    let none = AgentDefinition { context_file_names: Vec::new(), ..AgentDefinition::default() };
    assert!(!prompt_of(&place, &none, &[]).contains("Project Context"));
}

/// Accepts one HTTP request on 127.0.0.1, answers 400, and hands back the JSON body.
fn one_request_listener() -> (u16, std::thread::JoinHandle<Value>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let handle = std::thread::spawn(move || {
        let (stream, _) = listener.accept().expect("accept");
        stream.set_read_timeout(Some(std::time::Duration::from_secs(20))).expect("timeout");
        let mut reader = BufReader::new(stream.try_clone().expect("clone"));
        let mut length = 0usize;
        loop {
            let mut line = String::new();
            reader.read_line(&mut line).expect("header line");
            if line.trim().is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().expect("length");
            }
        }
        let mut body = vec![0; length];
        reader.read_exact(&mut body).expect("body");
        let answer = r#"{"error": {"message": "recorded", "type": "invalid_request_error"}}"#;
        let mut stream = stream;
        let _ = write!(
            stream,
            "HTTP/1.1 400 Bad Request\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{answer}",
            answer.len()
        );
        serde_json::from_slice(&body).expect("json body")
    });
    (port, handle)
}

fn house_definition(port: u16) -> AgentDefinition {
    let models_json = format!(
        r#"{{"providers": {{"house": {{"baseUrl": "http://127.0.0.1:{port}/v1", "api": "openai-completions",
            "apiKey": "house-key", "models": [{{"id": "m-think", "reasoning": true}}]}}}}}}"#
    );
    AgentDefinition {
        models_json: Some(models_json),
        thinking: Some(ThinkingLevel::Low),
        temperature: Some(0.25),
        max_tokens: Some(777),
        steering_mode: QueueMode::All,
        follow_up_mode: QueueMode::All,
        custom_tools: vec![CustomToolDefinition {
            name: "greet".to_owned(),
            label: "Greet".to_owned(),
            description: "Greets someone".to_owned(),
            prompt_snippet: Some("Say hello to someone".to_owned()),
            prompt_guidelines: vec!["Greet only when asked".to_owned()],
            parameters: r#"{"type": "object", "properties": {"who": {"type": "string"}}}"#.to_owned(),
            handler: CustomToolHandler::Command { template: "echo hello {{ who }}".to_owned(), timeout_secs: None },
        }],
        ..AgentDefinition::default()
    }
}

#[tokio::test]
async fn prepare_applies_the_agents_request_and_queue_settings() {
    let place = place();
    std::fs::write(place.agent.join("settings.json"), r#"{"followUpMode": "one-at-a-time", "steeringMode": "x"}"#)
        .expect("settings");
    let (port, recorded) = one_request_listener();
    let definition = house_definition(port);
    let prepared =
        prepare_in(&definition, &args(&["--no-session"]), Vec::new(), Default::default(), &place.cwd, &place.agent)
            .expect("prepared");
    let agent = &prepared.agent;
    let state = agent.state();
    assert_eq!(state.model.as_ref().map(|m| m.id.as_str()), Some("m-think"), "the agent's provider is used");
    assert_eq!(state.thinking_level, ThinkingLevel::Low);
    assert_eq!(agent.steering_mode(), QueueMode::All, "an invalid setting leaves the agent's mode");
    assert_eq!(agent.follow_up_mode(), QueueMode::OneAtATime, "a valid setting wins");
    let tool_names: Vec<&str> = state.tools.iter().map(|tool| tool.name()).collect();
    assert_eq!(tool_names, ["read", "bash", "edit", "write", "greet"]);
    assert!(state.system_prompt.contains("- greet: Say hello to someone"), "{}", state.system_prompt);
    assert!(state.system_prompt.contains("- Greet only when asked"), "{}", state.system_prompt);

    agent.prompt("hi").await.expect("prompt runs");
    let body = tokio::task::spawn_blocking(move || recorded.join().expect("listener")).await.expect("join");
    assert_eq!(body["temperature"], serde_json::json!(0.25), "{body}");
    let max_tokens = body.get("max_completion_tokens").or_else(|| body.get("max_tokens"));
    assert_eq!(max_tokens, Some(&serde_json::json!(777)), "{body}");
    assert_eq!(body["model"], "m-think");
}

#[tokio::test]
async fn startup_errors_in_custom_tools_come_before_any_session_is_written() {
    let place = place();
    let mut definition = house_definition(9);
    definition.custom_tools[0].handler = CustomToolHandler::Rust;
    definition.session.dir = Some(place.cwd.join("sessions").to_string_lossy().into_owned());
    let error = prepare_in(&definition, &args(&[]), Vec::new(), Default::default(), &place.cwd, &place.agent)
        .err()
        .map(|error| error.to_string())
        .unwrap_or_default();
    assert!(error.contains("\"greet\""), "{error}");
    assert!(!place.cwd.join("sessions").exists());
}

#[tokio::test]
async fn a_disabled_session_runs_in_memory_and_the_yaml_dir_holds_enabled_ones() {
    let place = place();
    let mut definition = house_definition(9);
    definition.agent_dir_env = "PI_GEN_TEST_NEVER_SET_DIR".to_owned();
    let sessions = place.cwd.join("sessions");
    definition.session.dir = Some(sessions.to_string_lossy().into_owned());
    definition.session.enabled = false;
    let prepared = prepare_in(&definition, &args(&[]), Vec::new(), Default::default(), &place.cwd, &place.agent)
        .expect("prepared");
    assert_eq!(prepared.session.path(), None);
    assert!(!sessions.exists(), "nothing is written");
    let prepared = prepare_in(&definition, &args(&["-c"]), Vec::new(), Default::default(), &place.cwd, &place.agent)
        .expect("prepared");
    assert!(prepared.session.path().is_some_and(|path| path.starts_with(&sessions)), "-c asks for a session");
    definition.session.enabled = true;
    let prepared = prepare_in(&definition, &args(&[]), Vec::new(), Default::default(), &place.cwd, &place.agent)
        .expect("prepared");
    assert!(prepared.session.path().is_some_and(|path| path.starts_with(&sessions)));
}
