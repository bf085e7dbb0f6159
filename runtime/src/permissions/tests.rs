//! Tests of the permission rules, their settings form, and the extension's answers with and without a UI.

use serde_json::json;

use super::*;
use crate::extension::ui_scripted::ScriptedUi;
use crate::extension::{Extension, ExtensionContext, ToolCallDecision, ToolCallEvent, UiRequest, UiResponse};

fn rule(name: &str, tool: &str, arguments: &[(&str, TextPattern)], action: PermissionAction) -> PermissionRule {
    PermissionRule {
        name: name.to_owned(),
        tool: TextPattern::Glob(tool.to_owned()),
        arguments: arguments
            .iter()
            .map(|(argument, pattern)| ArgumentPattern { argument: (*argument).to_owned(), pattern: pattern.clone() })
            .collect(),
        action,
        reason: None,
    }
}

fn call(tool: &str, input: serde_json::Value) -> ToolCallEvent {
    ToolCallEvent { tool_name: tool.to_owned(), tool_call_id: "call-1".to_owned(), input }
}

#[test]
fn the_first_matching_rule_decides_and_the_default_takes_the_rest() {
    let rules = [
        rule("push", "bash", &[("command", TextPattern::Regex("^git push".into()))], PermissionAction::Deny),
        rule("git", "bash", &[("command", TextPattern::Glob("git *".into()))], PermissionAction::Allow),
        rule("mcp", "mcp__*", &[], PermissionAction::Ask),
    ];
    let permissions = Permissions::new(PermissionAction::Ask, &rules).expect("valid rules");
    assert_eq!(permissions.action_for("bash", &json!({"command": "git push origin"})), PermissionAction::Deny);
    assert_eq!(permissions.action_for("bash", &json!({"command": "git status"})), PermissionAction::Allow);
    assert_eq!(permissions.action_for("mcp__files__read", &json!({})), PermissionAction::Ask);
    assert_eq!(permissions.action_for("bash", &json!({"command": "ls"})), PermissionAction::Ask);
    // A rule on an argument the call lacks does not match.
    assert_eq!(permissions.action_for("bash", &json!({})), PermissionAction::Ask);
    assert!(!permissions.allows_everything());
    assert!(Permissions::new(PermissionAction::Allow, &[]).expect("no rules").allows_everything());
}

#[test]
fn an_invalid_pattern_names_its_rule() {
    let broken = rule("broken", "bash", &[("command", TextPattern::Regex("(".into()))], PermissionAction::Deny);
    let error = Permissions::new(PermissionAction::Allow, &[broken]).expect_err("invalid regex");
    assert!(error.starts_with("permission rule `broken`: invalid regex `(`"), "{error}");
}

#[test]
fn settings_rules_read_like_the_yamls_and_bad_ones_are_reported() {
    let value = json!({
        "default": "deny",
        "rules": [
            {"tool": "bash", "match": {"command": {"regex": "^rm "}}, "action": "ask", "reason": "deletes files"},
            {"tool": "read", "action": "allow", "name": "reads"},
            {"tool": "write", "action": "maybe"},
            {"tool": {"regex": "("}, "action": "deny"},
            {"tool": "ls", "action": "allow", "when": "never"}
        ]
    });
    let (default, rules, problems) = rules_from_settings(&value, "/p/settings.json");
    assert_eq!(default, Some(PermissionAction::Deny));
    assert_eq!(rules.len(), 2);
    assert_eq!(rules[0].name, "/p/settings.json permissions.rules[0]");
    assert_eq!(rules[0].reason.as_deref(), Some("deletes files"));
    assert_eq!(rules[0].arguments[0].pattern, TextPattern::Regex("^rm ".into()));
    assert_eq!(rules[1].name, "reads");
    assert_eq!(problems.len(), 3, "{problems:?}");
    assert!(problems[0].starts_with("/p/settings.json permissions.rules[2]: `action` must be"), "{problems:?}");
    assert!(problems[1].contains("rules[3]: tool: invalid regex"), "{problems:?}");
    assert!(problems[2].contains("unknown key `when`"), "{problems:?}");
    let (_, _, problems) = rules_from_settings(&json!({"default": "sometimes"}), "s.json");
    assert_eq!(
        problems,
        ["s.json: permissions.default is \"sometimes\"; expected \"allow\", \"ask\" or \"deny\" (ignored)"]
    );
}

fn blocked_reason(decision: ToolCallDecision) -> String {
    match decision {
        ToolCallDecision::Block { reason } => reason.unwrap_or_default(),
        ToolCallDecision::Allow => panic!("the call was allowed"),
    }
}

#[tokio::test]
async fn deny_names_the_rule_and_ask_without_a_person_is_refused_unless_approve_all() {
    let mut deny =
        rule("no-push", "bash", &[("command", TextPattern::Glob("git push*".into()))], PermissionAction::Deny);
    deny.reason = Some("Pushing is for humans.".to_owned());
    let rules = [deny, rule("writes", "write", &[], PermissionAction::Ask)];
    let extension = || {
        PermissionsExtension::new(
            Permissions::new(PermissionAction::Allow, &rules).expect("rules"),
            false,
            ApprovalDialog::Select,
        )
    };
    let ctx = ExtensionContext::detached("/tmp");
    let reason = blocked_reason(
        extension().tool_call(&call("bash", json!({"command": "git push"})), &ctx).await.expect("handled"),
    );
    assert_eq!(
        reason,
        "Permission denied by permission rule \"no-push\"; the call did not run. Pushing is for humans."
    );
    let reason =
        blocked_reason(extension().tool_call(&call("write", json!({"path": "a"})), &ctx).await.expect("handled"));
    assert!(
        reason.contains("permission rule \"writes\" requires approval") && reason.contains("--approve-all"),
        "{reason}"
    );
    let ls = extension().tool_call(&call("ls", json!({})), &ctx).await.expect("handled");
    assert_eq!(ls, ToolCallDecision::Allow);

    let approving = PermissionsExtension::new(
        Permissions::new(PermissionAction::Allow, &rules).expect("rules"),
        true,
        ApprovalDialog::Select,
    );
    assert_eq!(
        approving.tool_call(&call("write", json!({"path": "a"})), &ctx).await.expect("handled"),
        ToolCallDecision::Allow
    );
    // `--approve-all` approves what would be asked, never what a rule denies.
    let push = approving.tool_call(&call("bash", json!({"command": "git push"})), &ctx).await.expect("handled");
    assert!(matches!(push, ToolCallDecision::Block { .. }));
}

#[tokio::test]
async fn the_person_allows_once_always_or_denies() {
    let permissions = Permissions::new(PermissionAction::Ask, &[]).expect("no rules");
    let extension = PermissionsExtension::new(permissions, false, ApprovalDialog::Select);
    // Answers are popped from the end: deny, then always, then once.
    let ui = ScriptedUi::new(vec![
        UiResponse::Value(ALLOW_ONCE_CHOICE.into()),
        UiResponse::Value(ALLOW_ALWAYS_CHOICE.into()),
        UiResponse::Value(DENY_CHOICE.into()),
    ]);
    let ctx = ExtensionContext::detached("/tmp").with_ui(Some(ui.clone()));
    let bash = call("bash", json!({"command": "make\n  test"}));
    let reason = blocked_reason(extension.tool_call(&bash, &ctx).await.expect("handled"));
    assert_eq!(reason, "Denied by the user: the default permission asked for approval and it was refused.");
    assert_eq!(extension.tool_call(&bash, &ctx).await.expect("handled"), ToolCallDecision::Allow);
    // "Always" covers later calls of the same tool without asking again.
    assert_eq!(extension.tool_call(&bash, &ctx).await.expect("handled"), ToolCallDecision::Allow);
    assert_eq!(ui.asked.lock().expect("lock").len(), 2);
    let write = call("write", json!({"path": "notes.md"}));
    assert_eq!(extension.tool_call(&write, &ctx).await.expect("handled"), ToolCallDecision::Allow);
    let asked = ui.asked.lock().expect("lock").clone();
    assert_eq!(asked.len(), 3);
    let UiRequest::Select { title, options } = &asked[0] else { panic!("a select: {:?}", asked[0]) };
    assert_eq!(title, "Allow bash: make test? (the default permission)");
    assert_eq!(options, &[ALLOW_ONCE_CHOICE, ALLOW_ALWAYS_CHOICE, DENY_CHOICE]);
    // A new session asks again.
    let switch = crate::extension::SessionSwitchEvent {
        reason: crate::extension::SwitchReason::New,
        previous_session_file: None,
    };
    extension.session_switch(&switch, &ctx).await.expect("handled");
    let cancelled = extension.tool_call(&bash, &ctx).await.expect("handled");
    assert!(matches!(cancelled, ToolCallDecision::Block { .. }), "the script ran out: cancelled means denied");
}

#[tokio::test]
async fn rpc_clients_get_a_confirm() {
    let permissions = Permissions::new(PermissionAction::Ask, &[]).expect("no rules");
    let extension = PermissionsExtension::new(permissions, false, ApprovalDialog::Confirm);
    let ui = ScriptedUi::new(vec![UiResponse::Confirmed(false), UiResponse::Confirmed(true)]);
    let ctx = ExtensionContext::detached("/tmp").with_ui(Some(ui.clone()));
    let read = call("read", json!({"path": "src/main.rs"}));
    assert_eq!(extension.tool_call(&read, &ctx).await.expect("handled"), ToolCallDecision::Allow);
    assert!(matches!(extension.tool_call(&read, &ctx).await.expect("handled"), ToolCallDecision::Block { .. }));
    let asked = ui.asked.lock().expect("lock");
    assert_eq!(
        asked[0],
        UiRequest::Confirm {
            title: "Allow this tool call?".into(),
            message: "read: src/main.rs\n(the default permission)".into()
        }
    );
}
