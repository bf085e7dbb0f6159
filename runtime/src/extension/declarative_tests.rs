//! Declarative hooks run through the runner: blocking tool calls, system-prompt changes, injected messages,
//! input rewrites, and the glob and regex patterns they share.

use serde_json::{Value, json};

use super::{TextMatcher, glob_to_regex, hook_extensions};
use crate::extension::{
    ArgumentPattern, EventKind, ExtensionContext, ExtensionMessage, ExtensionRunner, HookAction, HookDefinition,
    InputAction, InputSource, TextPattern, ToolCallDecision, ToolCallEvent,
};
use crate::protocol::MessageContent;

fn glob(pattern: &str) -> TextPattern {
    TextPattern::Glob(pattern.to_owned())
}

fn regex(pattern: &str) -> TextPattern {
    TextPattern::Regex(pattern.to_owned())
}

fn hook(name: &str, action: HookAction) -> HookDefinition {
    HookDefinition { name: name.to_owned(), action }
}

fn hooks_runner(hooks: &[HookDefinition]) -> ExtensionRunner {
    let extensions = hook_extensions(hooks, None, None).expect("hooks compile");
    ExtensionRunner::new(extensions, ExtensionContext::detached("/tmp"))
}

fn matches(pattern: TextPattern, text: &str) -> bool {
    TextMatcher::new(&pattern).expect("pattern compiles").is_match(text)
}

/// `BlockToolCall` on `tool` when `argument` matches `pattern`.
fn block(tool: TextPattern, argument: &str, pattern: TextPattern) -> HookDefinition {
    hook(
        "no-rm",
        HookAction::BlockToolCall {
            tool,
            arguments: vec![ArgumentPattern { argument: argument.to_owned(), pattern }],
            reason: "rm -rf is not allowed".to_owned(),
        },
    )
}

async fn call(runner: &ExtensionRunner, tool: &str, input: Value) -> ToolCallDecision {
    let event = ToolCallEvent { tool_name: tool.to_owned(), tool_call_id: "call-1".to_owned(), input };
    runner.emit_tool_call(&event).await
}

fn blocked() -> ToolCallDecision {
    ToolCallDecision::block("rm -rf is not allowed")
}

#[test]
fn glob_matches_the_whole_text_across_slashes_and_newlines() {
    assert!(matches(glob("rm -rf *"), "rm -rf /"));
    assert!(matches(glob("rm -rf *"), "rm -rf /home/user/project"));
    assert!(!matches(glob("rm -rf *"), "sudo rm -rf /"), "a glob is anchored at the start");
    assert!(!matches(glob("rm -rf"), "rm -rf /"), "a glob is anchored at the end");
    assert!(matches(glob("*rm -rf*"), "cd /tmp\nrm -rf build\necho done"));
    assert!(matches(glob("a?b"), "a\nb"));
    assert!(matches(glob("a?b"), "a/b"));
    assert!(matches(glob("a**b"), "a/x/y\nb"));
}

#[test]
fn glob_question_mark_is_one_unicode_character() {
    assert!(matches(glob("caf?"), "café"));
    assert!(!matches(glob("caf?"), "caf"));
    assert!(matches(glob("?"), "日"));
}

#[test]
fn glob_classes_alternatives_and_escapes() {
    assert!(matches(glob("file[0-9].txt"), "file7.txt"));
    assert!(!matches(glob("file[0-9].txt"), "filex.txt"));
    assert!(matches(glob("file[!0-9].txt"), "filex.txt"));
    assert!(matches(glob("[]x]"), "]"));
    assert!(matches(glob("[a-]"), "-"));
    assert!(matches(glob("*.{rs,toml}"), "Cargo.toml"));
    assert!(matches(glob("{a,{b,c}d}"), "cd"));
    assert!(!matches(glob("*.{rs,toml}"), "notes.md"));
    assert!(matches(glob(r"what\?"), "what?"));
    assert!(!matches(glob(r"what\?"), "whatx"));
    assert!(matches(glob(r"\{a\}"), "{a}"), "escaped braces are literal");
    assert!(matches(glob("a.b(c)+$^|"), "a.b(c)+$^|"), "regex metacharacters are literal");
    assert!(matches(glob("x,y}"), "x,y}"), "`,` and `}}` outside braces are literal");
}

#[test]
fn invalid_globs_are_refused() {
    for bad in ["[abc", "{a,b", "abc\\", "[z-a]"] {
        assert!(glob_to_regex(bad).is_err(), "{bad}");
    }
}

#[test]
fn regex_matches_anywhere() {
    assert!(matches(regex(r"rm\s+-rf"), "cd x && rm  -rf /"));
    assert!(!matches(regex(r"^rm"), "sudo rm"));
}

#[test]
fn an_invalid_pattern_names_the_hook() {
    let Err(error) = hook_extensions(&[block(glob("bash"), "command", regex("rm ("))], None, None) else {
        panic!("an invalid regex must be refused");
    };
    assert!(error.starts_with("hook `no-rm`: invalid regex `rm (`"), "{error}");

    let bad_when = hook("hint", HookAction::AppendSystemPrompt { text: "x".into(), when: Some(glob("[x")) });
    let Err(error) = hook_extensions(&[bad_when], None, None) else {
        panic!("an invalid glob must be refused");
    };
    assert!(error.starts_with("hook `hint`: invalid glob `[x`"), "{error}");
}

#[test]
fn hooks_become_extensions_in_order() {
    let hooks = [
        block(glob("bash"), "command", glob("rm -rf *")),
        hook("hint", HookAction::AppendSystemPrompt { text: "x".into(), when: None }),
    ];
    assert_eq!(hook_extensions(&hooks, None, None).expect("hooks compile").len(), 2);
    assert!(hook_extensions(&[], None, None).expect("no hooks").is_empty());
}

#[test]
fn command_hooks_are_delegated() {
    let command = |event: &str| {
        let action = HookAction::Command {
            event: event.to_owned(),
            command: "true".to_owned(),
            timeout_secs: None,
            tool: None,
            script: None,
        };
        hook("cmd", action)
    };
    let hooks = [command("tool_call"), hook("hint", HookAction::AppendSystemPrompt { text: "x".into(), when: None })];
    assert_eq!(hook_extensions(&hooks, None, None).expect("a command hook builds").len(), 2);
    let Err(error) = hook_extensions(&[command("no_such_event")], None, None) else {
        panic!("an unknown event must be refused");
    };
    assert!(error.contains("hook `cmd`"), "{error}");
}

#[tokio::test]
async fn block_rm_rf_with_a_glob() {
    let runner = hooks_runner(&[block(glob("bash"), "command", glob("rm -rf *"))]);
    assert!(runner.has_handlers(EventKind::ToolCall));
    assert!(!runner.has_handlers(EventKind::Input), "a block hook subscribes to tool_call only");
    assert_eq!(call(&runner, "bash", json!({"command": "rm -rf /"})).await, blocked());
    assert_eq!(call(&runner, "bash", json!({"command": "rm -rf /tmp\necho gone"})).await, blocked());
    assert_eq!(call(&runner, "bash", json!({"command": "ls -la"})).await, ToolCallDecision::Allow);
    assert_eq!(call(&runner, "read", json!({"command": "rm -rf /"})).await, ToolCallDecision::Allow);
}

#[tokio::test]
async fn block_rm_rf_with_a_regex() {
    let runner = hooks_runner(&[block(regex("^(bash|sh)$"), "command", regex(r"\brm\s+-[a-z]*r[a-z]*f"))]);
    assert_eq!(call(&runner, "bash", json!({"command": "cd x && rm -rf build"})).await, blocked());
    assert_eq!(call(&runner, "sh", json!({"command": "rm -fr x"})).await, ToolCallDecision::Allow);
    assert_eq!(call(&runner, "sh", json!({"command": "rm -rvf x"})).await, blocked());
    assert_eq!(call(&runner, "bash", json!({"command": "rm file"})).await, ToolCallDecision::Allow);
    assert_eq!(call(&runner, "bashful", json!({"command": "rm -rf /"})).await, ToolCallDecision::Allow);
}

#[tokio::test]
async fn a_missing_argument_does_not_match() {
    let runner = hooks_runner(&[block(glob("bash"), "command", glob("*"))]);
    assert_eq!(call(&runner, "bash", json!({"timeout": 5})).await, ToolCallDecision::Allow);
    assert_eq!(call(&runner, "bash", json!("rm -rf /")).await, ToolCallDecision::Allow);
    assert_eq!(call(&runner, "bash", json!({"command": ""})).await, blocked(), "present, even empty");
}

#[tokio::test]
async fn non_string_arguments_match_as_json_text() {
    let runner = hooks_runner(&[block(glob("read"), "limit", glob("1000*"))]);
    assert_eq!(call(&runner, "read", json!({"limit": 100000})).await, blocked());
    assert_eq!(call(&runner, "read", json!({"limit": 10})).await, ToolCallDecision::Allow);

    let runner = hooks_runner(&[block(glob("edit"), "all", regex("^true$"))]);
    assert_eq!(call(&runner, "edit", json!({"all": true})).await, blocked());
    assert_eq!(call(&runner, "edit", json!({"all": false})).await, ToolCallDecision::Allow);

    let runner = hooks_runner(&[block(glob("write"), "meta", regex(r#"^\{"a":1\}$"#))]);
    assert_eq!(call(&runner, "write", json!({"meta": {"a": 1}})).await, blocked(), "objects as compact JSON");
}

#[tokio::test]
async fn every_argument_pattern_must_match() {
    let definition = hook(
        "two",
        HookAction::BlockToolCall {
            tool: glob("*"),
            arguments: vec![
                ArgumentPattern { argument: "path".into(), pattern: glob("/etc/*") },
                ArgumentPattern { argument: "content".into(), pattern: regex("root") },
            ],
            reason: "no".into(),
        },
    );
    let runner = hooks_runner(&[definition]);
    let no = ToolCallDecision::block("no");
    assert_eq!(call(&runner, "write", json!({"path": "/etc/passwd", "content": "root:x"})).await, no);
    assert_eq!(call(&runner, "write", json!({"path": "/etc/passwd", "content": "x"})).await, ToolCallDecision::Allow);
    assert_eq!(call(&runner, "write", json!({"path": "/tmp/a", "content": "root"})).await, ToolCallDecision::Allow);
}

fn append(text: &str, when: Option<TextPattern>) -> HookDefinition {
    hook("append", HookAction::AppendSystemPrompt { text: text.to_owned(), when })
}

#[tokio::test]
async fn append_system_prompt_with_and_without_when() {
    let runner = hooks_runner(&[append("Always cite files.", None)]);
    let outcome = runner.emit_before_agent_start("hello", &[], "Base.").await;
    assert_eq!(outcome.system_prompt.as_deref(), Some("Base.\n\nAlways cite files."));
    assert!(outcome.messages.is_empty());

    let runner = hooks_runner(&[append("Use cargo.", Some(regex("(?i)rust")))]);
    let outcome = runner.emit_before_agent_start("fix my Rust code", &[], "Base.").await;
    assert_eq!(outcome.system_prompt.as_deref(), Some("Base.\n\nUse cargo."));
    let outcome = runner.emit_before_agent_start("fix my python", &[], "Base.").await;
    assert_eq!(outcome.system_prompt, None);
}

#[tokio::test]
async fn appends_chain_and_replace_wins_where_it_runs() {
    let runner = hooks_runner(&[append("One.", None), append("Two.", None)]);
    let outcome = runner.emit_before_agent_start("p", &[], "Base.").await;
    assert_eq!(outcome.system_prompt.as_deref(), Some("Base.\n\nOne.\n\nTwo."));

    let replace = |when| hook("replace", HookAction::ReplaceSystemPrompt { text: "Pirate.".into(), when });
    let runner = hooks_runner(&[append("One.", None), replace(None), append("Two.", None)]);
    let outcome = runner.emit_before_agent_start("p", &[], "Base.").await;
    assert_eq!(outcome.system_prompt.as_deref(), Some("Pirate.\n\nTwo."));

    let runner = hooks_runner(&[replace(Some(glob("arr*")))]);
    assert_eq!(
        runner.emit_before_agent_start("arr matey", &[], "Base.").await.system_prompt.as_deref(),
        Some("Pirate.")
    );
    assert_eq!(runner.emit_before_agent_start("hello", &[], "Base.").await.system_prompt, None);
}

#[tokio::test]
async fn inject_message_with_and_without_when() {
    let inject = |when| {
        hook(
            "inject",
            HookAction::InjectMessage {
                custom_type: "reminder".into(),
                content: "Run the tests.".into(),
                display: true,
                when,
            },
        )
    };
    let expected = ExtensionMessage {
        custom_type: "reminder".into(),
        content: MessageContent::Text("Run the tests.".into()),
        display: true,
        details: None,
    };
    let runner = hooks_runner(&[inject(None)]);
    let outcome = runner.emit_before_agent_start("anything", &[], "Base.").await;
    assert_eq!(outcome.messages, vec![expected.clone()]);
    assert_eq!(outcome.system_prompt, None);

    let runner = hooks_runner(&[inject(Some(glob("*commit*")))]);
    assert_eq!(runner.emit_before_agent_start("please commit", &[], "B").await.messages, vec![expected]);
    assert!(runner.emit_before_agent_start("please push", &[], "B").await.messages.is_empty());
}

async fn input(runner: &ExtensionRunner, text: &str) -> InputAction {
    runner.emit_input(text, &[], InputSource::Interactive).await
}

fn transformed(text: &str) -> InputAction {
    InputAction::Transform { text: text.to_owned(), images: Some(Vec::new()) }
}

#[tokio::test]
async fn transform_input_with_regex_groups() {
    let transform = |pattern, replacement: &str| {
        hook("t", HookAction::TransformInput { pattern, replacement: replacement.to_owned() })
    };
    let runner = hooks_runner(&[transform(regex(r"#(\d+)"), "issue $1")]);
    assert_eq!(input(&runner, "fix #12 and #7").await, transformed("fix issue 12 and issue 7"));
    assert_eq!(input(&runner, "nothing here").await, InputAction::Continue);

    let runner = hooks_runner(&[transform(regex(r"(?P<word>\w+)@"), "${word} at ")]);
    assert_eq!(input(&runner, "me@home").await, transformed("me at home"));

    let runner = hooks_runner(&[transform(regex("x"), "y"), transform(regex("y"), "z")]);
    assert_eq!(input(&runner, "x").await, transformed("z"), "transforms chain");
}

#[tokio::test]
async fn transform_input_with_a_glob_replaces_literally() {
    let definition =
        hook("t", HookAction::TransformInput { pattern: glob("/deploy*"), replacement: "Deploy with $1 now".into() });
    let runner = hooks_runner(&[definition]);
    assert!(!runner.has_handlers(EventKind::BeforeAgentStart));
    assert_eq!(input(&runner, "/deploy prod\nplease").await, transformed("Deploy with $1 now"));
    assert_eq!(input(&runner, "please /deploy").await, InputAction::Continue);
}
