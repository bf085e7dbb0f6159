//! [`PermissionsExtension`]: the permissions applied at `tool_call`, after every other handler (so the
//! arguments checked are the ones that will run). `ask` opens a dialog: in interactive mode allow once,
//! allow always in this session, or deny; over RPC an `extension_ui_request` confirm. Where nobody can
//! answer (print and json mode) the call is refused with a reason the model sees, unless `--approve-all`.

use std::collections::HashSet;
use std::sync::Mutex;

use serde_json::Value;

use super::{PermissionAction, Permissions, Verdict};
use crate::extension::{
    EventKind, EventSet, Extension, ExtensionContext, HookResult, SessionSwitchEvent, ToolCallDecision, ToolCallEvent,
};

/// How an `ask` reaches the person.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum ApprovalDialog {
    /// Allow once / allow always in this session / deny (interactive mode).
    #[default]
    Select,
    /// Yes or no (RPC clients answer a `confirm` request).
    Confirm,
}

/// The choices of the [`ApprovalDialog::Select`] dialog.
pub const ALLOW_ONCE_CHOICE: &str = "Allow once";
pub const ALLOW_ALWAYS_CHOICE: &str = "Allow always (this session)";
pub const DENY_CHOICE: &str = "Deny";

/// Applies [`Permissions`] to every tool call.
pub struct PermissionsExtension {
    permissions: Permissions,
    /// `--approve-all`: what would be asked is allowed.
    approve_all: bool,
    dialog: ApprovalDialog,
    /// Rules (and tools the default asks about) allowed always in this session.
    always: Mutex<HashSet<String>>,
}

impl PermissionsExtension {
    pub fn new(permissions: Permissions, approve_all: bool, dialog: ApprovalDialog) -> Self {
        Self { permissions, approve_all, dialog, always: Mutex::default() }
    }

    fn always(&self) -> std::sync::MutexGuard<'_, HashSet<String>> {
        self.always.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    async fn ask(&self, event: &ToolCallEvent, verdict: Verdict<'_>, ctx: &ExtensionContext) -> ToolCallDecision {
        let key = approval_key(&event.tool_name, verdict);
        if self.approve_all || self.always().contains(&key) {
            return ToolCallDecision::Allow;
        }
        let who = who(verdict);
        if !ctx.has_ui() {
            return ToolCallDecision::block(format!(
                "Not run: {who} requires approval for this call and nobody can approve it in this mode. \
                 Run the agent with --approve-all to allow such calls without asking."
            ));
        }
        let call = call_summary(&event.tool_name, &event.input);
        let approved = match self.dialog {
            ApprovalDialog::Confirm => ctx.confirm("Allow this tool call?", &format!("{call}\n({who})")).await,
            ApprovalDialog::Select => {
                let title = format!("Allow {call}? ({who})");
                let options = [ALLOW_ONCE_CHOICE, ALLOW_ALWAYS_CHOICE, DENY_CHOICE].map(str::to_owned).to_vec();
                match ctx.select(&title, options).await.as_deref() {
                    Some(ALLOW_ONCE_CHOICE) => true,
                    Some(ALLOW_ALWAYS_CHOICE) => {
                        self.always().insert(key);
                        true
                    }
                    _ => false,
                }
            }
        };
        if approved {
            ToolCallDecision::Allow
        } else {
            ToolCallDecision::block(format!("Denied by the user: {who} asked for approval and it was refused."))
        }
    }
}

impl Extension for PermissionsExtension {
    fn name(&self) -> &str {
        "permissions"
    }

    fn subscriptions(&self) -> EventSet {
        EventSet::of(&[EventKind::ToolCall, EventKind::SessionSwitch])
    }

    async fn tool_call(&self, event: &ToolCallEvent, ctx: &ExtensionContext) -> HookResult<ToolCallDecision> {
        let verdict = self.permissions.decide(&event.tool_name, &event.input);
        Ok(match verdict.action {
            PermissionAction::Allow => ToolCallDecision::Allow,
            PermissionAction::Deny => ToolCallDecision::block(denied(verdict)),
            PermissionAction::Ask => self.ask(event, verdict, ctx).await,
        })
    }

    /// "Always" lasts for one session: another session starts asking again.
    async fn session_switch(&self, _event: &SessionSwitchEvent, _ctx: &ExtensionContext) -> HookResult<()> {
        self.always().clear();
        Ok(())
    }
}

/// What "allow always" remembers: the rule, or the tool when the default asked.
fn approval_key(tool_name: &str, verdict: Verdict<'_>) -> String {
    match verdict.rule {
        Some(rule) => format!("rule:{}", rule.name),
        None => format!("default:{tool_name}"),
    }
}

/// `permission rule "no-push"` or `the default permission`.
fn who(verdict: Verdict<'_>) -> String {
    match verdict.rule {
        Some(rule) => format!("permission rule \"{}\"", rule.name),
        None => "the default permission".to_owned(),
    }
}

/// The model's error result for a denied call: which rule, and its reason when it gives one.
fn denied(verdict: Verdict<'_>) -> String {
    let mut text = format!("Permission denied by {}; the call did not run.", who(verdict));
    if let Some(reason) = verdict.rule.and_then(|rule| rule.reason.as_deref()) {
        text.push(' ');
        text.push_str(reason);
    }
    text
}

/// `bash: git push origin main`: the tool and its most telling argument, on one line, shortened.
pub(crate) fn call_summary(tool_name: &str, input: &Value) -> String {
    const LIMIT: usize = 160;
    let detail = ["command", "path", "pattern", "url", "task"]
        .iter()
        .find_map(|key| input.get(*key).and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| match input {
            Value::Object(object) if object.is_empty() => String::new(),
            other => other.to_string(),
        });
    let one_line = detail.split_whitespace().collect::<Vec<_>>().join(" ");
    let shortened = match one_line.char_indices().nth(LIMIT) {
        Some((at, _)) => format!("{}…", &one_line[..at]),
        None => one_line,
    };
    if shortened.is_empty() { tool_name.to_owned() } else { format!("{tool_name}: {shortened}") }
}
