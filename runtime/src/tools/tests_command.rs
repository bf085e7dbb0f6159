//! Tests for the custom command tool with real processes: shell quoting of template values, the `safe`
//! opt-out, stdin and environment inputs, exit codes, timeouts, aborts, truncation and constructor errors.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::command::{MAX_ENV_VALUE, env_name, quote};
use super::{AgentTool, CommandTool, ToolContext, ToolEnvironment, ToolError};
use crate::definition::{CustomToolDefinition, CustomToolHandler};
use crate::protocol::AgentToolResult;

fn definition(template: &str, timeout_secs: Option<u64>) -> CustomToolDefinition {
    CustomToolDefinition {
        name: "probe".to_owned(),
        label: "Probe".to_owned(),
        description: "Runs a probe".to_owned(),
        prompt_snippet: Some("Probe things".to_owned()),
        prompt_guidelines: vec!["Probe carefully".to_owned()],
        parameters: r#"{"type": "object", "properties": {"arg": {"type": "string"}}}"#.to_owned(),
        handler: CustomToolHandler::Command { template: template.to_owned(), timeout_secs },
    }
}

fn tool_with(dir: &TempDir, template: &str, timeout_secs: Option<u64>) -> CommandTool {
    CommandTool::new(&definition(template, timeout_secs), ToolEnvironment::new(dir.path())).unwrap()
}

async fn run(dir: &TempDir, template: &str, args: Value) -> Result<AgentToolResult, ToolError> {
    tool_with(dir, template, None).execute(args, ToolContext::new("call-1")).await
}

async fn output(dir: &TempDir, template: &str, args: Value) -> String {
    text(&run(dir, template, args).await.unwrap()).to_owned()
}

fn text(result: &AgentToolResult) -> &str {
    result.content[0].as_text().unwrap()
}

fn constructor_error(definition: &CustomToolDefinition) -> String {
    CommandTool::new(definition, ToolEnvironment::new(".")).unwrap_err().message
}

/// Waits up to five seconds for `pid` to be gone (or a zombie).
async fn wait_dead(pid: i32) -> bool {
    for _ in 0..50 {
        // SAFETY: signal 0 only checks for existence.
        let exists = unsafe { libc::kill(pid, 0) } == 0;
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        if !exists || stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')) {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    false
}

#[tokio::test]
async fn a_semicolon_in_an_argument_runs_no_second_command() {
    let dir = TempDir::new().unwrap();
    let out = output(&dir, "printf '%s\\n' {{ arg }}", json!({"arg": "x; touch pwned"})).await;
    assert_eq!(out, "x; touch pwned\n");
    assert!(!dir.path().join("pwned").exists(), "the injected command ran");
}

#[tokio::test]
async fn shell_metacharacters_reach_the_program_as_one_literal_argument() {
    let dir = TempDir::new().unwrap();
    let values = [
        "$(touch pwned)",
        "`touch pwned`",
        "it's \"quoted\"",
        "'",
        "'\\''",
        "two\nlines",
        "ünïcødé ✓ 日本",
        "",
        "a  b",
        "*",
        "~",
        "$HOME",
        "a=b",
        "x > pwned",
        "\\",
        "{a,b}",
        "!!",
        "-n",
    ];
    for value in values {
        let out = output(&dir, "printf '[%s]' {{ arg }}", json!({"arg": value})).await;
        assert_eq!(out, format!("[{value}]"), "value {value:?}");
    }
    assert!(!dir.path().join("pwned").exists(), "an injected command ran");
}

#[test]
fn quote_leaves_plain_words_bare_and_single_quotes_the_rest() {
    assert_eq!(quote("src/main.rs"), "src/main.rs");
    assert_eq!(quote("-1.5"), "-1.5");
    assert_eq!(quote(""), "''");
    assert_eq!(quote("a b"), "'a b'");
    assert_eq!(quote("a=b"), "'a=b'");
    assert_eq!(quote("~"), "'~'");
    assert_eq!(quote("it's"), "'it'\\''s'");
}

#[tokio::test]
async fn safe_opts_out_of_quoting() {
    let dir = TempDir::new().unwrap();
    assert_eq!(output(&dir, "echo {{ arg | safe }}", json!({"arg": "a; echo b"})).await, "a\nb\n");
    let out = output(&dir, "printf '[%s]' {{ arg | safe }}", json!({"arg": ["x", "y z"]})).await;
    assert_eq!(out, "[x][y][z]");
    assert_eq!(output(&dir, "printf '[%s]' a{{ arg | safe }}b", json!({})).await, "[ab]");
}

#[tokio::test]
async fn an_autoescape_false_block_opts_out_too() {
    let dir = TempDir::new().unwrap();
    let template = "{% autoescape false %}echo {{ arg }}{% endautoescape %}";
    assert_eq!(output(&dir, template, json!({"arg": "a; echo b"})).await, "a\nb\n");
}

#[tokio::test]
async fn tojson_output_is_still_quoted() {
    let dir = TempDir::new().unwrap();
    let out = output(&dir, "printf '%s' {{ arg | tojson }}", json!({"arg": "$(touch pwned) \"q\""})).await;
    assert_eq!(out, r#""$(touch pwned) \"q\"""#);
    assert!(!dir.path().join("pwned").exists(), "the injected command ran");
}

#[tokio::test]
async fn arrays_numbers_booleans_and_objects_are_rendered_as_words() {
    let dir = TempDir::new().unwrap();
    let args = json!({"files": ["a b", "c;d", 7], "count": 3, "ratio": 0.5, "flag": true, "opts": {"k": "v; x"}});
    let template = "printf '[%s]' {{ files }} {{ count }} {{ ratio }} {{ flag }} {{ opts }}";
    assert_eq!(output(&dir, template, args).await, r#"[a b][c;d][7][3][0.5][true][{"k":"v; x"}]"#);
}

#[tokio::test]
async fn missing_and_null_arguments_render_nothing() {
    let dir = TempDir::new().unwrap();
    let template = "printf '[%s]' start {{ missing }} {{ nothing }} {{ missing.deep }} end\
                    {% if filter %} --filter {{ filter }}{% endif %}";
    assert_eq!(output(&dir, template, json!({"nothing": null})).await, "[start][end]");
    let out = output(&dir, template, json!({"filter": "x y"})).await;
    assert_eq!(out, "[start][end][--filter][x y]");
}

#[tokio::test]
async fn loops_and_captured_blocks_work_without_double_quoting() {
    let dir = TempDir::new().unwrap();
    let template = "{% for f in files %}printf '<%s>' {{ f }}; {% endfor %}\
                    {% set both %}{{ files[0] }} {{ files[1] }}{% endset %}printf '[%s]' {{ both }}";
    assert_eq!(output(&dir, template, json!({"files": ["a b", "c'd"]})).await, "<a b><c'd>[a b][c'd]");
}

#[tokio::test]
async fn stdin_carries_the_arguments_as_json() {
    let dir = TempDir::new().unwrap();
    let args = json!({"arg": "x; y", "n": 2, "list": [1, "two"]});
    let out = output(&dir, "cat", args.clone()).await;
    assert!(out.ends_with('\n'), "{out:?}");
    assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), args);
}

#[tokio::test]
async fn a_command_that_ignores_a_large_stdin_succeeds() {
    let dir = TempDir::new().unwrap();
    let big = "z".repeat(1024 * 1024);
    assert_eq!(output(&dir, "true", json!({"big": big})).await, "(no output)");
    assert_eq!(output(&dir, "echo done", json!({"big": big})).await, "done\n");
    let out = output(&dir, "wc -c; echo ${TOOL_ARG_BIG:-unexported}", json!({"big": big})).await;
    let expected = serde_json::to_string(&json!({"big": big})).unwrap().len() + 1;
    assert_eq!(out, format!("{expected}\nunexported\n"));
}

#[tokio::test]
async fn arguments_and_the_call_id_are_environment_variables() {
    let dir = TempDir::new().unwrap();
    let args = json!({"path": "a b; c", "max-count": 3, "tags": ["x"], "opt": null, "edge": "é".repeat(10)});
    let template = r#"printf '%s|' "$TOOL_ARG_PATH" "$TOOL_ARG_MAX_COUNT" "$TOOL_ARG_TAGS" "${TOOL_ARG_OPT-unset}" "$TOOL_CALL_ID""#;
    assert_eq!(output(&dir, template, args).await, r#"a b; c|3|["x"]|unset|call-1|"#);
    assert_eq!(env_name("max-count.v2"), "MAX_COUNT_V2");
    let at_limit = "y".repeat(MAX_ENV_VALUE);
    let out = output(&dir, "printf '%s' \"$TOOL_ARG_BIG\" | wc -c", json!({"big": at_limit})).await;
    assert_eq!(out.trim(), MAX_ENV_VALUE.to_string());
}

#[tokio::test]
async fn non_zero_exit_is_an_error_with_the_output() {
    let dir = TempDir::new().unwrap();
    let err = run(&dir, "echo oops {{ code }}; exit {{ code }}", json!({"code": 3})).await.unwrap_err();
    assert_eq!(err.message, "oops 3\n\n\nCommand exited with code 3");
    let err = run(&dir, "exit 1", json!({})).await.unwrap_err();
    assert_eq!(err.message, "(no output)\n\nCommand exited with code 1");
}

#[tokio::test]
async fn the_timeout_kills_the_whole_process_group() {
    let dir = TempDir::new().unwrap();
    let started = Instant::now();
    let tool = tool_with(&dir, "echo before; sleep 30 & echo $! > bg.pid; sleep 30", Some(1));
    let err = tool.execute(json!({}), ToolContext::new("call-1")).await.unwrap_err();
    assert_eq!(err.message, "before\n\n\nCommand timed out after 1 seconds");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    let pid: i32 = std::fs::read_to_string(dir.path().join("bg.pid")).unwrap().trim().parse().unwrap();
    assert!(wait_dead(pid).await, "background sleep {pid} survived the timeout");
}

#[tokio::test]
async fn abort_kills_the_command() {
    let dir = TempDir::new().unwrap();
    let ctx = ToolContext::new("call-1");
    let cancel = ctx.cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        cancel.cancel();
    });
    let started = Instant::now();
    let tool = tool_with(&dir, "sleep 30 & echo $! > bg.pid; sleep 30", None);
    let err = tool.execute(json!({}), ctx).await.unwrap_err();
    assert_eq!(err.message, "Command aborted");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());
    let pid: i32 = std::fs::read_to_string(dir.path().join("bg.pid")).unwrap().trim().parse().unwrap();
    assert!(wait_dead(pid).await, "background sleep {pid} survived the abort");
}

#[tokio::test]
async fn an_already_cancelled_call_runs_nothing() {
    let dir = TempDir::new().unwrap();
    let ctx = ToolContext::new("call-1");
    ctx.cancel.cancel();
    let err = tool_with(&dir, "touch ran.txt", None).execute(json!({}), ctx).await.unwrap_err();
    assert_eq!(err.message, "Command aborted");
    assert!(!dir.path().join("ran.txt").exists());
}

#[tokio::test]
async fn big_output_is_tail_truncated_like_bash() {
    let dir = TempDir::new().unwrap();
    let result = run(&dir, "seq 1 {{ n }}", json!({"n": 2500})).await.unwrap();
    let out = text(&result);
    assert!(out.starts_with("502\n503\n"), "{}", &out[..20]);
    let (body, notice) = out.rsplit_once("\n\n").unwrap();
    assert!(body.ends_with("2499\n2500\n"));
    let prefix = "[Showing lines 502-2501 of 2501. Full output: ";
    assert!(notice.starts_with(prefix), "{notice}");
    let path = notice.strip_prefix(prefix).unwrap().strip_suffix(']').unwrap();
    assert_eq!(std::fs::read_to_string(path).unwrap().lines().count(), 2500);
    let details = result.details.clone().unwrap();
    assert_eq!(details["fullOutputPath"], path);
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    let _ = std::fs::remove_file(path);
}

#[tokio::test]
async fn output_streams_through_updates() {
    let dir = TempDir::new().unwrap();
    let updates: Arc<Mutex<Vec<AgentToolResult>>> = Arc::default();
    let sink = updates.clone();
    let mut ctx = ToolContext::new("call-1");
    ctx.on_update = Some(Arc::new(move |partial| sink.lock().unwrap().push(partial)));
    let result = tool_with(&dir, "echo {{ arg }}", None).execute(json!({"arg": "hi there"}), ctx).await.unwrap();
    assert_eq!(text(&result), "hi there\n");
    let updates = updates.lock().unwrap();
    assert!(updates.len() >= 2, "{updates:?}");
    assert_eq!(updates.last().unwrap().content[0].as_text(), Some("hi there\n"));
}

#[tokio::test]
async fn the_environment_cwd_and_command_prefix_apply() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("marker.txt"), "").unwrap();
    let mut env = ToolEnvironment::new(dir.path());
    env.command_prefix = Some("GREETING=from-prefix".to_owned());
    let tool = CommandTool::new(&definition("echo $GREETING; ls", None), env).unwrap();
    let result = tool.execute(json!({}), ToolContext::new("c")).await.unwrap();
    assert_eq!(text(&result), "from-prefix\nmarker.txt\n");
}

#[test]
fn the_definition_describes_the_tool() {
    let tool = CommandTool::new(&definition("true", None), ToolEnvironment::new(".")).unwrap();
    assert_eq!(tool.name(), "probe");
    assert_eq!(tool.label(), "Probe");
    assert_eq!(tool.description(), "Runs a probe");
    assert_eq!(tool.prompt_snippet(), Some("Probe things"));
    assert_eq!(tool.prompt_guidelines(), ["Probe carefully".to_owned()]);
    assert_eq!(tool.parameters()["properties"]["arg"]["type"], "string");
    assert_eq!(tool.render(&json!({"arg": "a b"})).unwrap(), "true");
}

#[test]
fn a_bad_template_is_a_constructor_error_naming_the_tool() {
    let message = constructor_error(&definition("echo {% if arg %}unclosed", None));
    assert!(message.contains("\"probe\"") && message.contains("template"), "{message}");
}

#[tokio::test]
async fn a_template_failing_at_run_time_is_an_error_naming_the_tool() {
    let dir = TempDir::new().unwrap();
    let err = run(&dir, "touch ran.txt; echo {{ arg | no_such_filter }}", json!({"arg": "a"})).await.unwrap_err();
    assert!(err.message.contains("\"probe\"") && err.message.contains("no_such_filter"), "{}", err.message);
    assert!(!dir.path().join("ran.txt").exists());
}

#[test]
fn a_bad_schema_is_a_constructor_error_naming_the_tool() {
    for parameters in ["{not json", "[1, 2]", r#"{"type": 5}"#] {
        let mut bad = definition("true", None);
        bad.parameters = parameters.to_owned();
        let message = constructor_error(&bad);
        assert!(message.contains("\"probe\"") && message.contains("parameters"), "{parameters}: {message}");
    }
}

#[test]
fn a_rust_handler_is_a_constructor_error() {
    let mut rust = definition("true", None);
    rust.handler = CustomToolHandler::Rust;
    let message = constructor_error(&rust);
    assert!(message.contains("\"probe\"") && message.contains("implemented in Rust"), "{message}");
}
