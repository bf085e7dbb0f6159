//! `AgentSession`: an [`Agent`] bound to a [`SessionManager`]. Every finished message is appended to the
//! session; prompts run with auto-retry; the context is compacted when it nears the window (before a prompt
//! and after a run) or overflows it (then the run is continued once).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use tokio_util::sync::CancellationToken;

use super::auto_retry::{RetryProbe, RetrySettings, RetryState, SessionEventSink, run_with_auto_retry_probed};
use super::link::{SessionLink, SessionListener, ToolState, event_processor};
use crate::agent::{Agent, AgentError, Subscription};
use crate::ai::{Model, ProviderRegistry};
use crate::compaction::CompactionSettings;
use crate::extension::{ExtensionContext, ExtensionRunner, SessionControl};
use crate::prompt::SystemPromptBuilder;
use crate::protocol::{AgentEvent, CompactionReason, SessionOnlyEvent};
use crate::session::{EntryKind, SessionError, SessionManager, iso_to_ms};

/// Settings of the session layer.
#[derive(Debug, Clone, Copy, Default)]
pub struct SessionSettings {
    pub retry: RetrySettings,
    pub compaction: CompactionSettings,
}

/// Expands `/skill:name` and prompt-template commands in a prompt.
pub type PromptExpander = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// What a session adds to the bare agent besides its file: extensions, the system prompt's builder (so
/// the active tools can change), prompt expansion.
pub struct SessionExtras {
    /// The extensions (built before the session so `session_directory` and `resources_discover` could run).
    pub runner: Arc<ExtensionRunner>,
    /// Rebuilds the system prompt when the active tools change; `None` keeps the agent's prompt as it is.
    pub prompt_builder: Option<SystemPromptBuilder>,
    pub expander: Option<PromptExpander>,
    /// The directory handlers see as `ctx.cwd()`.
    pub cwd: PathBuf,
    /// A prompt without an API key for the model's provider is refused before anything is sent.
    pub require_api_key: bool,
}

impl SessionExtras {
    /// No extensions, no prompt rebuilding, no expansion.
    pub fn none(cwd: impl Into<PathBuf>) -> Self {
        let cwd = cwd.into();
        Self {
            runner: Arc::new(ExtensionRunner::empty(ExtensionContext::detached(&cwd))),
            prompt_builder: None,
            expander: None,
            cwd,
            require_api_key: false,
        }
    }
}

/// The agent, its session file, and pi's retry and compaction rules around each prompt.
pub struct AgentSession {
    pub(super) agent: Agent,
    pub(super) manager: Arc<Mutex<SessionManager>>,
    settings: Mutex<SessionSettings>,
    /// A compaction is being written (automatic or requested).
    pub(super) compacting: AtomicBool,
    pub(super) registry: Arc<ProviderRegistry>,
    pub(super) api_key: Mutex<Option<String>>,
    /// The thinking level the user asked for last; a model switch clamps this, not the current level.
    pub(super) thinking_preference: Mutex<crate::ai::ThinkingLevel>,
    pub(super) emit: SessionEventSink,
    pub(super) link: Arc<SessionLink>,
    pub(super) runner: Arc<ExtensionRunner>,
    expander: Mutex<Option<PromptExpander>>,
    pub(super) require_api_key: bool,
    /// Cancels the current retry wait or summary; replaced by a fresh token when a prompt starts.
    cancel: Mutex<CancellationToken>,
    /// A model (and its key) to write summaries with instead of the agent's (e.g. a cheaper one).
    summary_model: Mutex<Option<(Model, Option<String>)>>,
    /// An overflow was already compacted and retried since the last user message or good answer.
    pub(super) overflow_recovery_attempted: AtomicBool,
    /// Where the user's choices are kept across runs, if anywhere.
    preferences: Mutex<Option<super::PreferenceStoreHandle>>,
    /// Awaited before the next prompt's run (tools still on their way).
    pub(super) prompt_gate: Mutex<Option<super::dynamic_tools::PromptGateFn>>,
    /// Models the run moves to when the model fails for good (see [`super::fallback`]).
    pub(super) fallbacks: Mutex<Option<super::fallback::FallbackChain>>,
    /// The schema final answers must match (see [`super::structured_output`]).
    pub(super) output_schema: Mutex<Option<super::structured_output::OutputSchema>>,
    _events: Subscription,
}

impl AgentSession {
    /// Binds `agent` to `manager`: the agent's messages become the session's context, and new ones are
    /// appended to it. A new session first records the model and thinking level, as pi does.
    pub fn new(
        agent: Agent,
        manager: SessionManager,
        settings: SessionSettings,
        registry: Arc<ProviderRegistry>,
        api_key: Option<String>,
        emit: SessionEventSink,
    ) -> Result<Self, SessionError> {
        let cwd = manager.cwd().to_path_buf();
        Self::with_extras(agent, manager, settings, registry, api_key, emit, SessionExtras::none(cwd))
    }

    /// [`AgentSession::new`] with extensions, a prompt builder and prompt expansion. Tools the extensions
    /// registered join the active tools (and the system prompt is rebuilt for them).
    pub fn with_extras(
        agent: Agent,
        mut manager: SessionManager,
        settings: SessionSettings,
        registry: Arc<ProviderRegistry>,
        api_key: Option<String>,
        emit: SessionEventSink,
        extras: SessionExtras,
    ) -> Result<Self, SessionError> {
        let state = agent.state();
        let context = manager.context();
        let is_new = manager.entries().is_empty();
        if let Some(model) = &state.model {
            let known = context.model.as_ref().map(|(provider, id)| (provider.as_str(), id.as_str()));
            if known != Some((model.provider.as_str(), model.id.as_str())) {
                manager.append_model_change(&model.provider, &model.id)?;
            }
        }
        if is_new || context.thinking_level != state.thinking_level.as_str() {
            manager.append_thinking_level_change(state.thinking_level.as_str())?;
        }
        agent.replace_messages(manager.context().messages);
        // Providers get the session's id, as pi's agent does (prompt cache keys, affinity headers).
        agent.set_session_id(Some(manager.session_id().to_owned()));
        let manager = Arc::new(Mutex::new(manager));
        let SessionExtras { runner, prompt_builder, expander, cwd, require_api_key } = extras;
        let state = agent.state();
        let mut all = state.tools.clone();
        let mut active: Vec<String> = all.iter().map(|tool| tool.name().to_owned()).collect();
        for tool in runner.tools() {
            if !all.iter().any(|known| known.name() == tool.name()) {
                all.push(tool.clone());
                active.push(tool.name().to_owned());
            }
        }
        let link = Arc::new(SessionLink {
            agent: agent.clone(),
            manager: manager.clone(),
            tools: Mutex::new(ToolState {
                all,
                active: active.clone(),
                builder: prompt_builder,
                base_prompt: state.system_prompt.clone(),
            }),
            next_turn: Mutex::new(Vec::new()),
            deferred: Mutex::new(VecDeque::new()),
            listeners: Mutex::new(Vec::new()),
            write_error: Mutex::new(None),
            turn_index: AtomicU64::new(0),
            emit: emit.clone(),
            context_report: Mutex::new(None),
            wake: tokio::sync::Notify::new(),
            retry_probe: Mutex::new(None),
        });
        if !runner.tools().is_empty() {
            link.activate_tools(&active);
        }
        let control: Arc<dyn SessionControl> = link.clone();
        runner.bind(ExtensionContext::new(&cwd, Some(control)));
        super::hooks::install_agent_hooks(&agent, &runner);
        let events = agent.subscribe_async(event_processor(link.clone(), runner.clone()));
        Ok(Self {
            agent,
            manager,
            settings: Mutex::new(settings),
            compacting: AtomicBool::new(false),
            registry,
            api_key: Mutex::new(api_key),
            thinking_preference: Mutex::new(state.thinking_level),
            emit,
            link,
            runner,
            expander: Mutex::new(expander),
            require_api_key,
            cancel: Mutex::new(CancellationToken::new()),
            summary_model: Mutex::new(None),
            overflow_recovery_attempted: AtomicBool::new(false),
            preferences: Mutex::new(None),
            prompt_gate: Mutex::new(None),
            fallbacks: Mutex::new(None),
            output_schema: Mutex::new(None),
            _events: events,
        })
    }

    /// Calls `listener` for every agent event, after the extensions saw it (with a `message_end` replaced by
    /// an extension already replaced) and before it is written to the session file.
    pub fn subscribe(&self, listener: impl Fn(&AgentEvent) + Send + Sync + 'static) {
        let listener: SessionListener = Arc::new(listener);
        lock(&self.link.listeners).push(listener);
    }

    /// The session's extensions.
    pub fn extensions(&self) -> &ExtensionRunner {
        &self.runner
    }

    /// The system prompt without per-prompt changes (rebuilt when the active tools change).
    pub fn base_system_prompt(&self) -> String {
        lock(&self.link.tools).base_prompt.clone()
    }

    /// The names of the active tools.
    pub fn active_tools(&self) -> Vec<String> {
        self.link.active_tools()
    }

    /// Activates the named tools (known ones, in this order) and rebuilds the system prompt for them.
    pub fn set_active_tools(&self, names: &[String]) {
        self.link.activate_tools(names);
    }

    /// Summaries (compaction and branch) are written with `model` (using `api_key`, else the session's key)
    /// instead of the agent's own; `None` goes back to the agent's model.
    pub fn set_summary_model(&self, model: Option<(Model, Option<String>)>) {
        *lock(&self.summary_model) = model;
    }

    /// The retry and compaction settings in effect.
    pub fn settings(&self) -> SessionSettings {
        *lock(&self.settings)
    }

    pub(super) fn settings_mut(&self) -> MutexGuard<'_, SessionSettings> {
        lock(&self.settings)
    }

    /// Keeps the user's later choices (model, thinking level, queue modes, auto-compaction, auto-retry) in
    /// `store`.
    pub fn set_preference_store(&self, store: Option<super::PreferenceStoreHandle>) {
        *lock(&self.preferences) = store;
    }

    /// Tells the preference store, if any, of a choice the user made.
    pub(super) fn remember(&self, preference: super::Preference) {
        let store = lock(&self.preferences).clone();
        if let Some(store) = store {
            store.save(preference);
        }
    }

    /// Replaces the retry and compaction settings (the settings files were read again).
    pub fn set_settings(&self, settings: SessionSettings) {
        *lock(&self.settings) = settings;
    }

    /// What expands `/skill:name` and prompt-template commands.
    pub(super) fn expander(&self) -> Option<PromptExpander> {
        lock(&self.expander).clone()
    }

    /// Replaces what expands prompts (the skills and templates were read again).
    pub fn set_expander(&self, expander: Option<PromptExpander>) {
        *lock(&self.expander) = expander;
    }

    /// Replaces what the system prompt is built from (context files, SYSTEM.md, skills read again) and
    /// rebuilds it for the active tools.
    pub fn set_prompt_builder(&self, builder: SystemPromptBuilder) {
        lock(&self.link.tools).builder = Some(builder);
        self.link.activate_tools(&self.link.active_tools());
    }

    /// The model summaries are written with.
    pub fn summary_model(&self) -> Option<Model> {
        lock(&self.summary_model).as_ref().map(|(model, _)| model.clone()).or_else(|| self.agent.model())
    }

    /// The key for [`AgentSession::summary_model`]: the per-call lookup's (a login renewed when it expired),
    /// else the summary model's own key, else the session's.
    pub(super) async fn summary_api_key(&self) -> Option<String> {
        let lookup = self.agent.get_api_key();
        if let (Some(lookup), Some(model)) = (lookup, self.summary_model())
            && let Ok(Some(key)) = lookup(&model.provider).await
        {
            return Some(key);
        }
        lock(&self.summary_model).as_ref().and_then(|(_, key)| key.clone()).or_else(|| lock(&self.api_key).clone())
    }

    /// Stops what is under way: the agent's run, a retry wait (ending with `"Retry cancelled"`) or a summary.
    pub fn abort(&self) {
        lock(&self.cancel).cancel();
        self.agent.abort();
    }

    /// A fresh token for a new piece of work (an earlier abort does not carry over).
    pub(super) fn reset_cancel(&self) {
        *lock(&self.cancel) = CancellationToken::new();
    }

    /// The token of the current prompt.
    pub(super) fn cancel_token(&self) -> CancellationToken {
        lock(&self.cancel).clone()
    }

    pub fn agent(&self) -> &Agent {
        &self.agent
    }

    /// The session manager (locked for the duration of the borrow).
    pub fn manager(&self) -> MutexGuard<'_, SessionManager> {
        lock(&self.manager)
    }

    /// The first error writing the session file, if any.
    pub fn write_error(&self) -> Option<String> {
        lock(&self.link.write_error).clone()
    }

    pub(super) async fn run_with_retry<F>(&self, start: F) -> Result<(), AgentError>
    where
        F: Future<Output = Result<(), AgentError>>,
    {
        let cancel = self.cancel_token();
        let probe = self.retry_probe(RetryState::default());
        *lock(&self.link.retry_probe) = Some(probe.clone());
        let mut outcome = run_with_auto_retry_probed(&self.agent, &probe, self.emit.clone(), &cancel, start).await;
        let (mut next, mut chosen) = (0, None);
        while outcome.is_ok() && !cancel.is_cancelled() && self.switch_to_fallback(&mut next, &mut chosen) {
            let window = self.agent.model().map(|model| model.context_window);
            let probe = RetryProbe { context_window: window, state: Arc::default(), ..probe.clone() };
            *lock(&self.link.retry_probe) = Some(probe.clone());
            outcome =
                run_with_auto_retry_probed(&self.agent, &probe, self.emit.clone(), &cancel, self.agent.continue_())
                    .await;
        }
        self.restore_chosen_model(chosen);
        *lock(&self.link.retry_probe) = None;
        outcome
    }

    /// What auto-retry needs to decide after a run of this session, its counter starting at `state`.
    pub(super) fn retry_probe(&self, state: RetryState) -> RetryProbe {
        let context_window = self.agent.model().map(|model| model.context_window);
        let on_drop = self.agent.pi_compat().is_v1_5().then(|| self.record_dropped_answer());
        RetryProbe { settings: self.settings().retry, context_window, state: Arc::new(Mutex::new(state)), on_drop }
    }

    /// When the latest compaction on the current branch happened (ms; 0 when there is none).
    pub(super) fn latest_compaction_ms(&self) -> i64 {
        let manager = self.manager();
        let path = manager.tree().current_path();
        path.iter()
            .rev()
            .find(|entry| matches!(entry.kind, EntryKind::Compaction { .. }))
            .map_or(0, |entry| iso_to_ms(&entry.timestamp))
    }

    /// Summarizes the older part of the current branch, records the compaction entry and gives the agent
    /// the compacted context. Returns whether it succeeded.
    pub(super) async fn compact(&self, reason: CompactionReason, will_retry: bool) -> bool {
        let outcome = self.summarize_with_events(reason, will_retry, None).await;
        matches!(outcome, Ok(Some(_)))
    }

    /// pi's `/compact [instructions]`: compacts the current branch now, the instructions added to the
    /// summary request as its focus. Returns the compaction result (`None` when there is nothing to compact).
    pub async fn compact_now(&self, custom_instructions: Option<&str>) -> Result<Option<serde_json::Value>, String> {
        self.agent.abort();
        self.agent.wait_for_idle().await;
        self.reset_cancel();
        self.summarize_with_events(CompactionReason::Manual, false, custom_instructions).await
    }

    /// [`AgentSession::summarize`] between `compaction_start` and `compaction_end` events, with
    /// [`AgentSession::is_compacting`] true while it runs.
    async fn summarize_with_events(
        &self,
        reason: CompactionReason,
        will_retry: bool,
        custom_instructions: Option<&str>,
    ) -> Result<Option<serde_json::Value>, String> {
        (self.emit)(&SessionOnlyEvent::CompactionStart { reason });
        self.compacting.store(true, Ordering::SeqCst);
        let outcome = self.summarize(custom_instructions).await;
        self.compacting.store(false, Ordering::SeqCst);
        let aborted = self.cancel_token().is_cancelled();
        let (result, error_message) = match &outcome {
            Ok(Some(result)) => (Some(result.clone()), None),
            Ok(None) if reason == CompactionReason::Manual => (None, Some(NOTHING_TO_COMPACT.to_owned())),
            Ok(None) => (None, None),
            Err(_) if aborted => (None, None),
            Err(message) => (None, Some(format!("compaction failed: {message}"))),
        };
        let will_retry = will_retry && result.is_some();
        (self.emit)(&SessionOnlyEvent::CompactionEnd { reason, result, aborted, will_retry, error_message });
        outcome
    }
}

/// Why a requested compaction did nothing.
pub const NOTHING_TO_COMPACT: &str = "nothing to compact: the session is too small or was just compacted";

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
