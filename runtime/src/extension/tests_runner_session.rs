//! Chaining rules of the runner for session events, observers, subscriptions and registration.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};

use super::{Failing, Noop, count, counter, error, record, runner, runner_with_errors, seen, taken};
use crate::extension::*;
use crate::protocol::AgentToolResult;
use crate::tools::{AgentTool, ToolContext, ToolFuture};

/// `session_before_compact`: cancels, or supplies a compaction with `summary`; counts its calls.
struct Compact {
    cancel: bool,
    summary: Option<&'static str>,
    calls: Arc<AtomicUsize>,
}

impl Compact {
    fn new(cancel: bool, summary: Option<&'static str>) -> Self {
        Self { cancel, summary, calls: counter() }
    }
}

impl Extension for Compact {
    fn name(&self) -> &str {
        "compact"
    }

    async fn session_before_compact(
        &self,
        _event: &SessionBeforeCompactEvent,
        _ctx: &ExtensionContext,
    ) -> HookResult<CompactDecision> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let compaction = self.summary.map(|summary| ExtensionCompaction {
            summary: summary.into(),
            first_kept_entry_id: "entry-9".into(),
            tokens_before: 1000,
            details: None,
        });
        Ok(CompactDecision { cancel: self.cancel, compaction })
    }
}

fn compact_event() -> SessionBeforeCompactEvent {
    SessionBeforeCompactEvent {
        preparation: json!({"firstKeptEntryId": "entry-9", "tokensBefore": 1000, "isSplitTurn": false}),
        branch_entries: Vec::new(),
        custom_instructions: None,
    }
}

#[tokio::test]
async fn session_before_compact_cancel_short_circuits() {
    let later = Compact::new(false, Some("later"));
    let calls = later.calls.clone();
    let runner = runner(Extensions::new().with(Compact::new(true, None)).with(later));
    let decision = runner.emit_session_before_compact(&compact_event()).await;
    assert!(decision.cancel);
    assert_eq!(count(&calls), 0);
}

#[tokio::test]
async fn session_before_compact_last_compaction_wins() {
    let runner = runner(
        Extensions::new()
            .with(Compact::new(false, Some("first")))
            .with(Compact::new(false, Some("second")))
            .with(Compact::new(false, None)),
    );
    let decision = runner.emit_session_before_compact(&compact_event()).await;
    assert!(!decision.cancel);
    assert_eq!(decision.compaction.map(|compaction| compaction.summary).as_deref(), Some("second"));
    let nobody = runner_with_errors(Extensions::new().with(Noop)).0;
    assert_eq!(nobody.emit_session_before_compact(&compact_event()).await, CompactDecision::default());
}

/// `session_before_switch`: cancels when told to; counts its calls.
struct Switch {
    cancel: bool,
    calls: Arc<AtomicUsize>,
}

impl Extension for Switch {
    fn name(&self) -> &str {
        "switch"
    }

    async fn session_before_switch(
        &self,
        _event: &SessionBeforeSwitchEvent,
        _ctx: &ExtensionContext,
    ) -> HookResult<CancelResult> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        Ok(CancelResult { cancel: self.cancel })
    }
}

#[tokio::test]
async fn session_before_switch_cancel() {
    let event = SessionBeforeSwitchEvent { reason: SwitchReason::New, target_session_file: None };
    let (first, second, third) = (counter(), counter(), counter());
    let runner = runner(
        Extensions::new()
            .with(Switch { cancel: false, calls: first.clone() })
            .with(Switch { cancel: true, calls: second.clone() })
            .with(Switch { cancel: false, calls: third.clone() }),
    );
    assert!(runner.emit_session_before_switch(&event).await.cancel);
    assert_eq!((count(&first), count(&second), count(&third)), (1, 1, 0));

    let runner = runner_with_errors(Extensions::new().with(Switch { cancel: false, calls: counter() })).0;
    assert!(!runner.emit_session_before_switch(&event).await.cancel);
}

/// `resources_discover` and `session_directory`: answers with fixed paths.
struct Paths {
    skill: &'static str,
    directory: Option<&'static str>,
}

impl Extension for Paths {
    fn name(&self) -> &str {
        "paths"
    }

    async fn resources_discover(
        &self,
        _event: &ResourcesDiscoverEvent,
        _ctx: &ExtensionContext,
    ) -> HookResult<DiscoveredResources> {
        let prompt = PathBuf::from(format!("{}.md", self.skill));
        Ok(DiscoveredResources { skill_paths: vec![PathBuf::from(self.skill)], prompt_paths: vec![prompt] })
    }

    async fn session_directory(
        &self,
        _event: &SessionDirectoryEvent,
        _ctx: &ExtensionContext,
    ) -> HookResult<Option<PathBuf>> {
        Ok(self.directory.map(PathBuf::from))
    }
}

fn paths() -> ExtensionRunner {
    runner(
        Extensions::new()
            .with(Paths { skill: "a", directory: Some("/sessions/a") })
            .with(Paths { skill: "b", directory: Some("/sessions/b") })
            .with(Paths { skill: "c", directory: None }),
    )
}

#[tokio::test]
async fn resources_discover_accumulates() {
    let event = ResourcesDiscoverEvent { cwd: "/tmp".into(), reason: DiscoverReason::Startup };
    let found = paths().emit_resources_discover(&event).await;
    let skills: Vec<PathBuf> = ["a", "b", "c"].into_iter().map(PathBuf::from).collect();
    let prompts: Vec<PathBuf> = ["a.md", "b.md", "c.md"].into_iter().map(PathBuf::from).collect();
    assert_eq!(found, DiscoveredResources { skill_paths: skills, prompt_paths: prompts });
}

#[tokio::test]
async fn session_directory_last_answer_wins() {
    let event = SessionDirectoryEvent { cwd: "/tmp".into() };
    assert_eq!(paths().emit_session_directory(&event).await, Some(PathBuf::from("/sessions/b")));
    assert_eq!(runner(Extensions::new().with(Noop)).emit_session_directory(&event).await, None);
}

/// Counts `turn_start` and `input`; subscribed to `only` when given (else to everything).
struct Watch {
    only: Option<EventKind>,
    turns: Arc<AtomicUsize>,
    inputs: Arc<AtomicUsize>,
}

impl Watch {
    fn new(only: Option<EventKind>) -> Self {
        Self { only, turns: counter(), inputs: counter() }
    }
}

impl Extension for Watch {
    fn name(&self) -> &str {
        "watch"
    }

    fn subscriptions(&self) -> EventSet {
        self.only.map_or(EventSet::all(), |kind| EventSet::of(&[kind]))
    }

    async fn turn_start(&self, _event: &TurnStartEvent, _ctx: &ExtensionContext) -> HookResult<()> {
        self.turns.fetch_add(1, Ordering::SeqCst);
        Ok(())
    }

    async fn input(&self, _event: &InputEvent, _ctx: &ExtensionContext) -> HookResult<InputAction> {
        self.inputs.fetch_add(1, Ordering::SeqCst);
        Ok(InputAction::Continue)
    }
}

#[tokio::test]
async fn observers_all_run_even_after_a_failure() {
    let watch = Watch::new(None);
    let turns = watch.turns.clone();
    let (runner, errors) = runner_with_errors(Extensions::new().with(Failing("one")).with(watch).with(Failing("two")));
    runner.emit_turn_start(&TurnStartEvent { turn_index: 0, timestamp: 1 }).await;
    assert_eq!(count(&turns), 1);
    let expected = [error("one", "turn_start", "observer crashed"), error("two", "turn_start", "observer crashed")];
    assert_eq!(taken(&errors), expected);
}

#[tokio::test]
async fn unsubscribed_events_are_not_delivered() {
    let watch = Watch::new(Some(EventKind::TurnStart));
    let (turns, inputs) = (watch.turns.clone(), watch.inputs.clone());
    let runner = runner(Extensions::new().with(watch));
    runner.emit_turn_start(&TurnStartEvent { turn_index: 0, timestamp: 1 }).await;
    runner.emit_input("hi", &[], InputSource::Rpc).await;
    assert_eq!((count(&turns), count(&inputs)), (1, 0));
    assert!(runner.has_handlers(EventKind::TurnStart));
    assert!(!runner.has_handlers(EventKind::Input));
}

#[tokio::test]
async fn has_handlers_follows_subscriptions() {
    let all = runner(Extensions::new().with(Noop));
    assert!(EventKind::ALL.iter().all(|kind| all.has_handlers(*kind)), "the default subscribes to everything");
    let none = runner(Extensions::new());
    assert!(EventKind::ALL.iter().all(|kind| !none.has_handlers(*kind)));
    assert!(none.is_empty());
    let mixed =
        runner(Extensions::new().with(Watch::new(Some(EventKind::Input))).with(Watch::new(Some(EventKind::ToolCall))));
    assert!(mixed.has_handlers(EventKind::Input) && mixed.has_handlers(EventKind::ToolCall));
    assert!(!mixed.has_handlers(EventKind::Context));
    assert_eq!(mixed.len(), 2);
}

/// A tool that echoes its arguments.
struct Echo {
    schema: Value,
}

impl AgentTool for Echo {
    fn name(&self) -> &str {
        "echo"
    }

    fn label(&self) -> &str {
        "Echo"
    }

    fn description(&self) -> &str {
        "Echoes its arguments"
    }

    fn parameters(&self) -> &Value {
        &self.schema
    }

    fn execute(&self, args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move { Ok(AgentToolResult::text(args.to_string())) })
    }
}

/// Registers the `echo` tool and a `/hello` command that records its arguments.
struct Registers {
    greeted: super::Seen<String>,
}

impl Extension for Registers {
    fn name(&self) -> &str {
        "registers"
    }

    fn register(&self, registrar: &mut ExtensionRegistrar) {
        registrar.tool(Arc::new(Echo { schema: json!({"type": "object"}) }));
        let greeted = self.greeted.clone();
        registrar.command("/hello", "Says hello", move |args: String, ctx: ExtensionContext| {
            let greeted = greeted.clone();
            async move {
                record(&greeted, format!("{args} in {}", ctx.cwd().display()));
                Ok(())
            }
        });
    }
}

#[tokio::test]
async fn registered_tools_and_commands_are_returned() {
    let greeted = seen();
    let runner = runner(Extensions::new().with(Noop).with(Registers { greeted: greeted.clone() }));
    let tools: Vec<&str> = runner.tools().iter().map(|tool| tool.name()).collect();
    assert_eq!(tools, ["echo"]);
    assert_eq!(runner.commands().len(), 1);
    let command = runner.command("hello").expect("`/hello` is registered without its slash");
    assert_eq!((command.description.as_str(), command.extension.as_str()), ("Says hello", "registers"));
    assert!(runner.command("/hello").is_none() && runner.command("bye").is_none());
    (command.handler)("world".into(), runner.context()).await.expect("the command runs");
    assert_eq!(taken(&greeted), ["world in /tmp"]);
}
