//! Tests for command hooks: real shell scripts in a temporary directory.

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::*;
use crate::extension::{ExtensionRunner, Extensions, TextPattern};
use crate::protocol::UserContent;

/// Writes an executable `#!/bin/sh` script `name` into `dir`.
fn script(dir: &Path, name: &str, body: &str) -> PathBuf {
    let path = dir.join(name);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).expect("write script");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    path
}

fn definition(event: &str, command: &str) -> HookDefinition {
    HookDefinition {
        name: "hooks[0]".to_owned(),
        action: HookAction::Command {
            event: event.to_owned(),
            command: command.to_owned(),
            timeout_secs: None,
            tool: None,
            script: None,
        },
    }
}

fn with_action(
    mut definition: HookDefinition,
    edit: impl FnOnce(&mut Option<u64>, &mut Option<TextPattern>, &mut Option<String>),
) -> HookDefinition {
    if let HookAction::Command { timeout_secs, tool, script, .. } = &mut definition.action {
        edit(timeout_secs, tool, script);
    }
    definition
}

fn hook(event: &str, command: &Path) -> CommandHook {
    CommandHook::new(&definition(event, &quoted(command)), None).expect("hook")
}

fn quoted(path: &Path) -> String {
    shell_quote(&path.to_string_lossy())
}

fn bash_call(command: &str) -> ToolCallEvent {
    ToolCallEvent {
        tool_name: "bash".to_owned(),
        tool_call_id: "call_1".to_owned(),
        input: json!({ "command": command }),
    }
}

fn bash_result(text: &str) -> ToolResultEvent {
    ToolResultEvent {
        tool_name: "bash".to_owned(),
        tool_call_id: "call_1".to_owned(),
        input: json!({ "command": "cat .env" }),
        content: vec![UserContent::text(text)],
        details: None,
        is_error: false,
    }
}

fn input_event(text: &str) -> InputEvent {
    InputEvent { text: text.to_owned(), images: Vec::new(), source: InputSource::Interactive }
}

const BLOCK_RM_RF: &str = r#"if grep -q 'rm -rf'; then
  echo '{"block": true, "reason": "destructive command refused"}'
fi"#;

#[tokio::test]
async fn a_tool_call_hook_blocks_destructive_commands() {
    let dir = tempfile::tempdir().expect("tempdir");
    let guard = hook("tool_call", &script(dir.path(), "guard.sh", BLOCK_RM_RF));
    let ctx = ExtensionContext::detached(dir.path());
    assert_eq!(
        guard.tool_call(&bash_call("rm -rf /"), &ctx).await,
        Ok(ToolCallDecision::block("destructive command refused"))
    );
    assert_eq!(guard.tool_call(&bash_call("ls -la"), &ctx).await, Ok(ToolCallDecision::Allow));
    assert_eq!(guard.subscriptions(), EventSet::empty().with(EventKind::ToolCall));
    assert_eq!(Extension::name(&guard), "hooks[0]");
}

#[tokio::test]
async fn the_shell_path_setting_runs_the_command() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("shell-used");
    // A "shell" that records it was chosen, then hands `-c <command>` to sh.
    let shell = script(dir.path(), "my-shell", &format!("echo \"$@\" > {}\nexec /bin/sh \"$@\"", quoted(&marker)));
    let guard = hook("tool_call", &script(dir.path(), "guard.sh", BLOCK_RM_RF)).with_shell(Some(&shell));
    let ctx = ExtensionContext::detached(dir.path());
    assert_eq!(
        guard.tool_call(&bash_call("rm -rf /"), &ctx).await,
        Ok(ToolCallDecision::block("destructive command refused"))
    );
    let invoked = std::fs::read_to_string(&marker).expect("the configured shell ran");
    assert!(invoked.starts_with("-c ") && invoked.contains("guard.sh"), "{invoked}");
    let default = hook("tool_call", &script(dir.path(), "guard2.sh", BLOCK_RM_RF)).with_shell(Some(Path::new("")));
    assert_eq!(default.tool_call(&bash_call("ls"), &ctx).await, Ok(ToolCallDecision::Allow), "empty: bash");
}

#[tokio::test]
async fn a_tool_result_hook_rewrites_the_content() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body = r#"cat >/dev/null
echo '{"content": [{"type": "text", "text": "[redacted]"}], "details": {"redacted": 1}}'"#;
    let redact = hook("tool_result", &script(dir.path(), "redact.sh", body));
    let ctx = ExtensionContext::detached(dir.path());
    let patch = redact.tool_result(&bash_result("API_KEY=secret"), &ctx).await.expect("patch");
    assert_eq!(patch.content, Some(vec![UserContent::text("[redacted]")]));
    assert_eq!(patch.details, Some(json!({ "redacted": 1 })));
    assert_eq!(patch.is_error, None);
}

#[tokio::test]
async fn the_command_reads_the_event_json_and_its_environment() {
    let dir = tempfile::tempdir().expect("tempdir");
    let seen = dir.path().join("seen.json");
    let env = dir.path().join("env.txt");
    let body = format!("cat > {}\necho \"$PI_HOOK_EVENT|$PI_SESSION_ID|$(pwd)\" > {}", quoted(&seen), quoted(&env));
    let spy = hook("tool_call", &script(dir.path(), "spy.sh", &body));
    let work = tempfile::tempdir().expect("tempdir");
    let ctx = ExtensionContext::detached(work.path());
    assert_eq!(spy.tool_call(&bash_call("echo hi"), &ctx).await, Ok(ToolCallDecision::Allow));

    let json: Value = serde_json::from_str(&std::fs::read_to_string(&seen).expect("seen")).expect("json");
    assert_eq!(json["type"], "tool_call");
    assert_eq!(json["toolName"], "bash");
    assert_eq!(json["toolCallId"], "call_1");
    assert_eq!(json["input"], json!({ "command": "echo hi" }));
    assert_eq!(json["cwd"], work.path().to_string_lossy().as_ref());
    assert_eq!(json["sessionId"], "");
    let keys: Vec<&str> = json.as_object().expect("object").keys().map(String::as_str).collect();
    assert_eq!(keys, ["type", "toolName", "toolCallId", "input", "cwd", "sessionId"]);

    let env = std::fs::read_to_string(&env).expect("env");
    let real_work = std::fs::canonicalize(work.path()).expect("canonical");
    assert_eq!(env.trim(), format!("tool_call||{}", real_work.display()));
}

#[tokio::test]
async fn a_non_zero_exit_is_an_error_quoting_the_end_of_stderr() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body =
        "i=1\nwhile [ $i -le 30 ]; do echo \"stderr line $i\" >&2; i=$((i+1)); done\necho '{\"block\":false}'\nexit 3";
    let failing = hook("tool_call", &script(dir.path(), "fail.sh", body));
    let ctx = ExtensionContext::detached(dir.path());
    let error = failing.tool_call(&bash_call("ls"), &ctx).await.expect_err("fails");
    assert!(error.message.starts_with("hook `hooks[0]` exited with code 3: "), "{}", error.message);
    assert!(error.message.contains("stderr line 30"), "{}", error.message);
    assert!(error.message.contains("stderr line 11\n"), "{}", error.message);
    assert!(!error.message.contains("stderr line 10\n"), "only the last 20 lines: {}", error.message);

    let killed = hook("agent_start", &script(dir.path(), "killed.sh", "kill -9 $$"));
    let error = killed.agent_start(&AgentStartEvent {}, &ctx).await.expect_err("killed");
    assert_eq!(error.message, "hook `hooks[0]` was killed by signal 9");
}

/// Whether process `pid` is gone (or a zombie waiting to be reaped: it no longer runs).
fn process_is_gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(stat) => stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')),
    }
}

#[tokio::test]
async fn a_hook_past_its_timeout_is_killed_with_its_process_group() {
    let dir = tempfile::tempdir().expect("tempdir");
    let pid_file = dir.path().join("sleeper.pid");
    let body = format!("sleep 30 &\necho $! > {}\nwait", quoted(&pid_file));
    let slow = script(dir.path(), "slow.sh", &body);
    let definition = with_action(definition("tool_call", &quoted(&slow)), |timeout, _, _| *timeout = Some(1));
    let slow = CommandHook::new(&definition, None).expect("hook");
    let ctx = ExtensionContext::detached(dir.path());
    let started = Instant::now();
    let error = slow.tool_call(&bash_call("ls"), &ctx).await.expect_err("times out");
    assert_eq!(error.message, "hook `hooks[0]` timed out after 1s");
    assert!(started.elapsed() < Duration::from_secs(10), "took {:?}", started.elapsed());

    let pid: u32 = std::fs::read_to_string(&pid_file).expect("pid").trim().parse().expect("a pid");
    let deadline = Instant::now() + Duration::from_secs(5);
    while !process_is_gone(pid) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(process_is_gone(pid), "the background sleep {pid} survived the timeout");
}

#[tokio::test]
async fn an_invalid_answer_is_an_error_naming_the_hook_and_event() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = ExtensionContext::detached(dir.path());
    let garbage = hook("tool_call", &script(dir.path(), "garbage.sh", "echo 'not json'"));
    let error = garbage.tool_call(&bash_call("ls"), &ctx).await.expect_err("invalid");
    assert!(error.message.starts_with("hook `hooks[0]` gave an invalid answer to tool_call: "), "{}", error.message);

    let typo = hook("tool_call", &script(dir.path(), "typo.sh", r#"echo '{"blok": true}'"#));
    let error = typo.tool_call(&bash_call("ls"), &ctx).await.expect_err("unknown field");
    assert!(error.message.contains("unknown field `blok`"), "{}", error.message);

    let wrong_type = hook("tool_result", &script(dir.path(), "wrong.sh", r#"echo '{"isError": "yes"}'"#));
    let error = wrong_type.tool_result(&bash_result("x"), &ctx).await.expect_err("wrong type");
    assert!(error.message.contains("invalid answer to tool_result"), "{}", error.message);
}

#[tokio::test]
async fn empty_stdout_changes_nothing() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = ExtensionContext::detached(dir.path());
    let quiet = script(dir.path(), "quiet.sh", "cat >/dev/null\necho '   '\necho 'diagnostics' >&2");
    assert_eq!(hook("tool_call", &quiet).tool_call(&bash_call("ls"), &ctx).await, Ok(ToolCallDecision::Allow));
    assert_eq!(hook("tool_result", &quiet).tool_result(&bash_result("x"), &ctx).await, Ok(ToolResultPatch::default()));
    assert_eq!(hook("input", &quiet).input(&input_event("hi"), &ctx).await, Ok(InputAction::Continue));
    let event = ContextEvent { messages: Vec::new() };
    assert_eq!(hook("context", &quiet).context(&event, &ctx).await, Ok(None));
}

#[tokio::test]
async fn a_tool_filter_skips_other_tools() {
    let dir = tempfile::tempdir().expect("tempdir");
    let marker = dir.path().join("ran");
    let body = format!("touch {}\necho '{{\"block\": true}}'", quoted(&marker));
    let only_bash = script(dir.path(), "only_bash.sh", &body);
    let definition = with_action(definition("tool_call", &quoted(&only_bash)), |_, tool, _| {
        *tool = Some(TextPattern::Glob("ba*".to_owned()));
    });
    let filtered = CommandHook::new(&definition, None).expect("hook");
    let ctx = ExtensionContext::detached(dir.path());
    let read = ToolCallEvent { tool_name: "read".to_owned(), tool_call_id: "c".to_owned(), input: json!({}) };
    assert_eq!(filtered.tool_call(&read, &ctx).await, Ok(ToolCallDecision::Allow));
    assert!(!marker.exists(), "the hook ran for another tool");
    assert_eq!(filtered.tool_call(&bash_call("ls"), &ctx).await, Ok(ToolCallDecision::Block { reason: None }));
    assert!(marker.exists());

    let regex =
        with_action(definition.clone(), |_, tool, _| *tool = Some(TextPattern::Regex("^(read|ls)$".to_owned())));
    let regex = CommandHook::new(&regex, None).expect("hook");
    std::fs::remove_file(&marker).expect("rm");
    assert_eq!(regex.tool_call(&bash_call("ls"), &ctx).await, Ok(ToolCallDecision::Allow));
    assert!(!marker.exists());
    assert!(regex.tool_call(&read, &ctx).await.expect("ran").ne(&ToolCallDecision::Allow));
}

#[tokio::test]
async fn an_embedded_script_runs_from_the_unpacked_directory() {
    let resources = tempfile::tempdir().expect("tempdir");
    let unpacked = resources.path().join("it's unpacked");
    script(
        &unpacked,
        "hooks/check.sh",
        r#"cat >/dev/null
echo "{\"block\": true, \"reason\": \"args: $1 $2\"}""#,
    );
    let definition = with_action(definition("tool_call", "./hooks/check.sh --flag 'two words'"), |_, _, script| {
        *script = Some("hooks/check.sh".to_owned());
    });
    let embedded = CommandHook::new(&definition, Some(&unpacked)).expect("hook");
    let expected = format!("{} --flag 'two words'", shell_quote(&unpacked.join("hooks/check.sh").to_string_lossy()));
    assert_eq!(embedded.command(), expected);
    let elsewhere = tempfile::tempdir().expect("tempdir");
    let ctx = ExtensionContext::detached(elsewhere.path());
    assert_eq!(embedded.tool_call(&bash_call("ls"), &ctx).await, Ok(ToolCallDecision::block("args: --flag two words")));

    let error = CommandHook::new(&definition, None).expect_err("no unpack dir");
    assert!(error.contains("built in"), "{error}");
    let escaping = with_action(definition, |_, _, script| *script = Some("../x.sh".to_owned()));
    assert!(CommandHook::new(&escaping, Some(&unpacked)).is_err());
}

#[tokio::test]
async fn answers_of_the_other_events_are_parsed() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = ExtensionContext::detached(dir.path());
    let answering =
        |name: &str, answer: &str| script(dir.path(), name, &format!("cat >/dev/null\ncat <<'EOF'\n{answer}\nEOF"));

    let transform = answering("transform.sh", r#"{"action": "transform", "text": "Please fix: it"}"#);
    assert_eq!(
        hook("input", &transform).input(&input_event("/fix it"), &ctx).await,
        Ok(InputAction::Transform { text: "Please fix: it".to_owned(), images: None })
    );
    let handled = answering("handled.sh", r#"{"action": "handled"}"#);
    assert_eq!(hook("input", &handled).input(&input_event("x"), &ctx).await, Ok(InputAction::Handled));
    let unknown = answering("unknown.sh", r#"{"action": "explode"}"#);
    assert!(hook("input", &unknown).input(&input_event("x"), &ctx).await.is_err());

    let start = answering(
        "start.sh",
        r#"{"message": {"customType": "reminder", "content": "Remember X"}, "systemPrompt": "Be brief."}"#,
    );
    let event = BeforeAgentStartEvent { prompt: "hi".to_owned(), images: Vec::new(), system_prompt: "base".to_owned() };
    let result = hook("before_agent_start", &start).before_agent_start(&event, &ctx).await.expect("result");
    assert_eq!(result.message, Some(ExtensionMessage::text("reminder", "Remember X")));
    assert_eq!(result.system_prompt.as_deref(), Some("Be brief."));

    let payload = answering("payload.sh", r#"{"payload": {"model": "x", "temperature": 0}}"#);
    let event = BeforeProviderRequestEvent { payload: json!({ "model": "x" }) };
    assert_eq!(
        hook("before_provider_request", &payload).before_provider_request(&event, &ctx).await,
        Ok(Some(json!({ "model": "x", "temperature": 0 })))
    );

    let messages =
        answering("messages.sh", r#"{"messages": [{"role": "user", "content": "only this", "timestamp": 1}]}"#);
    let replaced = hook("context", &messages).context(&ContextEvent { messages: Vec::new() }, &ctx).await;
    assert_eq!(replaced.expect("ok").map(|messages| messages.len()), Some(1));

    let compact =
        answering("compact.sh", r#"{"compaction": {"summary": "S", "firstKeptEntryId": "e1", "tokensBefore": 10}}"#);
    let event =
        SessionBeforeCompactEvent { preparation: json!({}), branch_entries: Vec::new(), custom_instructions: None };
    let decision = hook("session_before_compact", &compact).session_before_compact(&event, &ctx).await.expect("ok");
    assert!(!decision.cancel);
    assert_eq!(
        decision.compaction.map(|c| (c.summary, c.first_kept_entry_id, c.tokens_before)),
        Some(("S".to_owned(), "e1".to_owned(), 10))
    );

    let cancel = answering("cancel.sh", r#"{"cancel": true}"#);
    let event = SessionBeforeSwitchEvent { reason: SwitchReason::New, target_session_file: None };
    assert_eq!(
        hook("session_before_switch", &cancel).session_before_switch(&event, &ctx).await,
        Ok(CancelResult { cancel: true })
    );
    let fork = answering("fork.sh", r#"{"skipConversationRestore": true}"#);
    let event = SessionBeforeForkEvent { entry_id: "e1".to_owned(), position: ForkPosition::At };
    assert_eq!(
        hook("session_before_fork", &fork).session_before_fork(&event, &ctx).await,
        Ok(ForkDecision { cancel: false, skip_conversation_restore: true })
    );

    let discover = answering("discover.sh", r#"{"skillPaths": ["skills", "/abs/skills"]}"#);
    let event = ResourcesDiscoverEvent { cwd: dir.path().to_path_buf(), reason: DiscoverReason::Startup };
    let found = hook("resources_discover", &discover).resources_discover(&event, &ctx).await.expect("ok");
    assert_eq!(found.skill_paths, vec![dir.path().join("skills"), PathBuf::from("/abs/skills")]);
    assert!(found.prompt_paths.is_empty());

    let session_dir = answering("session_dir.sh", r#"{"sessionDir": "/tmp/sessions"}"#);
    let event = SessionDirectoryEvent { cwd: dir.path().to_path_buf() };
    assert_eq!(
        hook("session_directory", &session_dir).session_directory(&event, &ctx).await,
        Ok(Some(PathBuf::from("/tmp/sessions")))
    );
}

#[tokio::test]
async fn observers_ignore_stdout_but_not_failures() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = ExtensionContext::detached(dir.path());
    let chatty = script(dir.path(), "chatty.sh", "echo 'whatever, not JSON'\nhead -c 3000000 /dev/zero");
    assert_eq!(hook("agent_start", &chatty).agent_start(&AgentStartEvent {}, &ctx).await, Ok(()));
    let failing = script(dir.path(), "failing.sh", "exit 1");
    assert!(
        hook("turn_start", &failing).turn_start(&TurnStartEvent { turn_index: 0, timestamp: 0 }, &ctx).await.is_err()
    );
    // A hook for another event does nothing when called for this one.
    assert_eq!(hook("agent_end", &failing).agent_start(&AgentStartEvent {}, &ctx).await, Ok(()));
}

#[tokio::test]
async fn the_runner_blocks_a_tool_call_whose_hook_fails() {
    let dir = tempfile::tempdir().expect("tempdir");
    let failing = script(dir.path(), "fail.sh", "echo 'policy server unreachable' >&2\nexit 2");
    let extensions = Extensions::new().with(hook("tool_call", &failing));
    let runner = ExtensionRunner::new(extensions, ExtensionContext::detached(dir.path()));
    let errors = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = errors.clone();
    runner.on_error(std::sync::Arc::new(move |event| sink.lock().expect("lock").push(event.clone())));
    let decision = runner.emit_tool_call(&bash_call("ls")).await;
    let ToolCallDecision::Block { reason: Some(reason) } = decision else { panic!("not blocked: {decision:?}") };
    assert!(reason.contains("policy server unreachable"), "{reason}");
    let errors = errors.lock().expect("lock");
    assert_eq!(errors.len(), 1);
    assert_eq!(errors[0].event, "tool_call");
    assert_eq!(errors[0].extension_path, "hooks[0]");
}

#[test]
fn bad_definitions_are_refused() {
    let unknown = CommandHook::new(&definition("tool_calls", "true"), None).expect_err("unknown event");
    assert!(unknown.contains("unknown event `tool_calls`"), "{unknown}");
    let filtered =
        with_action(definition("input", "true"), |_, tool, _| *tool = Some(TextPattern::Glob("bash".to_owned())));
    assert!(CommandHook::new(&filtered, None).is_err());
    let bad_regex =
        with_action(definition("tool_call", "true"), |_, tool, _| *tool = Some(TextPattern::Regex("(".to_owned())));
    assert!(CommandHook::new(&bad_regex, None).expect_err("bad regex").contains("invalid regex"));
    let zero = with_action(definition("tool_call", "true"), |timeout, _, _| *timeout = Some(0));
    assert!(CommandHook::new(&zero, None).is_err());
    assert!(CommandHook::new(&definition("tool_call", "  "), None).is_err());
    let declarative = HookDefinition {
        name: "x".to_owned(),
        action: HookAction::AppendSystemPrompt { text: "t".to_owned(), when: None },
    };
    assert!(CommandHook::new(&declarative, None).is_err());
}

#[test]
fn the_first_shell_word_is_found_through_quotes_and_escapes() {
    assert_eq!(first_word_len("./x.sh --flag"), 6);
    assert_eq!(first_word_len("./x.sh"), 6);
    assert_eq!(first_word_len("'./my dir/x.sh' a"), 15);
    assert_eq!(first_word_len(r#""./a \" b" c"#), 10);
    assert_eq!(first_word_len(r"./a\ b c"), 6);
    assert_eq!(first_word_len("./x.sh|tee log"), 6);
    assert_eq!(shell_quote("it's"), r"'it'\''s'");
    assert_eq!(stderr_tail("\n a \n b \n\n"), "a \n b");
}

#[tokio::test]
async fn big_events_big_answers_and_lingering_children_do_not_hang() {
    let dir = tempfile::tempdir().expect("tempdir");
    let ctx = ExtensionContext::detached(dir.path());
    // 2 MB of event the command never reads: the write fails quietly, the exit code decides.
    let big = bash_result(&"x".repeat(2 * 1024 * 1024));
    let ignores_stdin = script(dir.path(), "ignores.sh", "exit 0");
    assert_eq!(hook("tool_result", &ignores_stdin).tool_result(&big, &ctx).await, Ok(ToolResultPatch::default()));
    // The whole event arrives when read.
    let counts = script(dir.path(), "counts.sh", "n=$(wc -c)\n[ \"$n\" -gt 2097152 ] || exit 1");
    assert_eq!(hook("tool_result", &counts).tool_result(&big, &ctx).await, Ok(ToolResultPatch::default()));

    let flood = script(dir.path(), "flood.sh", "cat >/dev/null\nhead -c 3000000 /dev/zero | tr '\\0' ' '\necho '{}'");
    let error = hook("tool_call", &flood).tool_call(&bash_call("ls"), &ctx).await.expect_err("too much");
    assert!(error.message.contains("more than 1048576 bytes on stdout"), "{}", error.message);

    // A background child keeps stdout open: the answer is taken once the shell exits.
    let lingering = script(dir.path(), "lingering.sh", "sleep 5 &\necho '{\"block\": true}'");
    let started = Instant::now();
    let decision = hook("tool_call", &lingering).tool_call(&bash_call("ls"), &ctx).await;
    assert_eq!(decision, Ok(ToolCallDecision::Block { reason: None }));
    assert!(started.elapsed() < Duration::from_secs(4), "waited {:?}", started.elapsed());

    let extra = script(dir.path(), "extra.sh", r#"echo '{"action": "continue", "text": "x"}'"#);
    assert!(hook("input", &extra).input(&input_event("x"), &ctx).await.is_err(), "unknown fields are refused");
    let extra = script(dir.path(), "extra2.sh", r#"echo '{"action": "transform", "text": "x", "txt": "y"}'"#);
    assert!(hook("input", &extra).input(&input_event("x"), &ctx).await.is_err());
    let plain = script(dir.path(), "plain.sh", r#"echo '{"action": "continue"}'"#);
    assert_eq!(hook("input", &plain).input(&input_event("x"), &ctx).await, Ok(InputAction::Continue));
}
