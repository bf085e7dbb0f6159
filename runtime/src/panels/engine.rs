//! The panels strategy's per-request work (seed 003, Phase 2): mark the Spine's user messages processed,
//! detach old conversation, count the conversation's tokens, refresh every panel, collect the context items,
//! sort them, account for the prompt cache, and assemble the request's messages.

use std::collections::HashMap;

use super::conversation::{detach, live_conversation, render_history, validate};
use super::live_sources::PanelSources;
use super::render::{
    LibraryEntry, Statistics, library_panel, memories_panel, scratchpad_panel, statistics_panel, todo_panel,
    tools_panel,
};
use super::report::{ContextReport, PanelReport};
use super::spine::{Logs, NotificationKind, Spine};
use super::state::{PanelState, TodoStatus};
use super::{
    BuiltinPanel, CachePrices, CacheTracker, ContextItem, FIRST_DYNAMIC_PANEL, PanelRequest, PanelsDefinition,
    assemble_request_owned,
};
use crate::ai::Model;
use crate::compaction::estimate_tokens;
use crate::protocol::{AgentMessage, Message};
use crate::tools::ToolEnvironment;

/// The built-in panels from the least to the most often changed; the first [`STEADY_PANELS`] come before the
/// files and command panels, the rest after them.
const STABILITY_ORDER: [BuiltinPanel; 10] = [
    BuiltinPanel::Library,
    BuiltinPanel::Tools,
    BuiltinPanel::Tree,
    BuiltinPanel::Memories,
    BuiltinPanel::Scratchpad,
    BuiltinPanel::Todo,
    BuiltinPanel::Git,
    BuiltinPanel::Spine,
    BuiltinPanel::Logs,
    BuiltinPanel::Statistics,
];
const STEADY_PANELS: usize = 7;

/// What a request is built from besides the panel state.
pub struct RequestInput<'a> {
    /// The context since the last compaction (numbered `#1..`).
    pub messages: &'a [AgentMessage],
    pub system_prompt: &'a str,
    pub model: Option<&'a Model>,
    /// Every tool the session knows, with its description, and the active ones' names.
    pub all_tools: &'a [(String, String)],
    pub active_tools: &'a [String],
    pub now_ms: i64,
}

/// When a panel's content last changed.
#[derive(Debug, Clone, Copy)]
struct Slot {
    hash: u64,
    last_refresh_ms: i64,
}

/// Everything the panels strategy keeps between requests.
pub struct PanelsCore {
    pub definition: PanelsDefinition,
    pub state: PanelState,
    /// The state changed since it was last saved.
    pub dirty: bool,
    pub spine: Spine,
    pub logs: Logs,
    pub library: Vec<LibraryEntry>,
    pub sources: PanelSources,
    slots: HashMap<String, Slot>,
    cache: CacheTracker,
    requests: u64,
    total_cost: f64,
    /// The timestamps of the messages the last request numbered (`#1` first), for the message tools.
    pub numbered: Vec<i64>,
    pub report: Option<ContextReport>,
    /// Rendered history chunks by panel id, with the edits they were rendered with (chunks are frozen, so
    /// only an edit of one of their messages changes them).
    history: HashMap<String, (Vec<super::state::MessageEdit>, String)>,
}

impl PanelsCore {
    pub fn new(definition: PanelsDefinition, library: Vec<LibraryEntry>, env: ToolEnvironment) -> Self {
        let sources = PanelSources::new(&definition, env);
        let mut core = Self {
            definition,
            state: PanelState::default(),
            dirty: false,
            spine: Spine::default(),
            logs: Logs::default(),
            library,
            sources,
            slots: HashMap::new(),
            cache: CacheTracker::new(),
            requests: 0,
            total_cost: 0.0,
            numbered: Vec::new(),
            report: None,
            history: HashMap::new(),
        };
        core.reset_state(PanelState::default());
        core
    }

    /// The ids the YAML's command panels take (`P11`, `P12`, ...; dynamic panels come after them).
    pub fn command_panel_ids(&self) -> Vec<String> {
        (0..self.definition.command_panels.len())
            .map(|index| format!("P{}", FIRST_DYNAMIC_PANEL as usize + index))
            .collect()
    }

    /// Replaces the state (a new session, or one restored from the session file): the YAML's files are
    /// opened in a new one; files and watched commands are reopened.
    pub fn reset_state(&mut self, state: PanelState) {
        let fresh = state == PanelState::default();
        self.state = state;
        let reserved = FIRST_DYNAMIC_PANEL + self.definition.command_panels.len() as u32;
        self.state.next_panel = self.state.next_panel.max(reserved);
        if fresh {
            for path in self.definition.files.clone() {
                let id = self.state.allocate_panel();
                self.state.open_files.push(super::state::OpenFile { panel_id: id, path, skill: None });
            }
        }
        self.sources.sync_with_state(&self.state);
        self.slots.clear();
        self.history.clear();
        self.cache = CacheTracker::new();
        self.numbered.clear();
        self.dirty = false;
    }

    fn shows(&self, panel: BuiltinPanel) -> bool {
        self.definition.builtin.contains(&panel) && !self.state.closed.iter().any(|id| id == panel.id())
    }

    /// Tells the Spine about consoles that exited since the last look.
    pub fn poll_consoles(&mut self, now: i64) {
        for text in self.sources.newly_exited() {
            self.logs.log(now, format!("{text}."));
            self.spine.notify(NotificationKind::ProcessExited, text, now);
        }
    }

    /// Seed 003 steps 1 to 8 for one request; returns the request's messages and what it held.
    pub async fn prepare(&mut self, input: &RequestInput<'_>) -> (Vec<Message>, ContextReport) {
        let now = input.now_ms;
        self.spine.mark_user_messages_processed();
        if validate(&mut self.state, input.messages) {
            self.dirty = true;
            self.logs.log(now, "The context changed under the detached history; it was reset.");
        }
        let limits = self.definition.detach;
        let made = detach(&mut self.state, input.messages, &limits, now);
        if made > 0 {
            self.dirty = true;
            let chunk = self.state.detached.last().map(|c| (c.start, c.end, c.panel_id.clone()));
            if let Some((start, end, id)) = chunk {
                self.logs.log(now, format!("Detached messages up to #{end} (from #{start}) into {id}."));
            }
        }
        self.numbered = input.messages.iter().map(super::conversation::message_timestamp).collect();
        let live_start = self.state.live_start();
        let conversation_tokens: u64 = input.messages.iter().skip(live_start - 1).map(estimate_tokens).sum();
        let file_events = self.sources.refresh(&self.state, &self.definition, now).await;
        for event in file_events {
            self.logs.log(now, event.clone());
            self.spine.notify(NotificationKind::FileChanged, event, now);
        }
        self.poll_consoles(now);
        self.render_history_chunks(input.messages);
        let items = self.collect_items(input, conversation_tokens);
        let items = self.stamp(items, now);
        let mut sorted = items;
        sorted.sort_by_key(|item| item.last_refresh_ms);
        let prices = input.model.map(CachePrices::for_model).unwrap_or(CachePrices { hit: 0.0, miss: 0.0 });
        let costs = self.cache.track(&sorted, prices);
        self.spine.mark_all_processed();
        let live = live_conversation(&self.state, input.messages);
        let anthropic = input.model.is_some_and(|model| model.api == crate::ai::anthropic_messages::API);
        let reinject = self.definition.reinject_system_prompt.unwrap_or(anthropic);
        let conversation_messages = live.messages.len();
        let request = PanelRequest {
            items: &sorted,
            conversation: &[],
            numbers: &live.numbers,
            system_prompt: input.system_prompt,
            reinject_system_prompt: reinject,
            now_ms: now,
            join_texts: !anthropic,
            texts: &self.definition.texts,
        };
        let messages = assemble_request_owned(&request, live.messages);
        self.requests += 1;
        let request_cost: f64 = costs.iter().map(|cost| cost.cost).sum();
        self.total_cost += request_cost;
        let panels: Vec<PanelReport> = sorted
            .iter()
            .zip(&costs)
            .map(|(item, cost)| PanelReport {
                id: item.id.clone(),
                header: item.header.clone(),
                tokens: cost.tokens,
                cache_hit: cost.hit,
                cost: cost.cost,
                last_refresh_ms: item.last_refresh_ms,
            })
            .collect();
        let report = ContextReport {
            requests: self.requests,
            panel_tokens: panels.iter().map(|panel| panel.tokens).sum(),
            cache_hit_tokens: panels.iter().filter(|panel| panel.cache_hit).map(|panel| panel.tokens).sum(),
            cache_miss_tokens: panels.iter().filter(|panel| !panel.cache_hit).map(|panel| panel.tokens).sum(),
            panels,
            request_cost,
            total_cost: self.total_cost,
            conversation_messages,
            conversation_tokens,
            detached_messages: live_start - 1,
        };
        self.report = Some(report.clone());
        (messages, report)
    }

    /// Every panel's current content (seed 003 steps 4 and 5), history chunks first.
    fn collect_items(&self, input: &RequestInput<'_>, conversation_tokens: u64) -> Vec<ContextItem> {
        let mut items = Vec::new();
        let mut push = |id: &str, header: String, content: String| {
            items.push(ContextItem { id: id.to_owned(), header, content, last_refresh_ms: 0 });
        };
        for chunk in &self.state.detached {
            if self.state.closed.contains(&chunk.panel_id) {
                continue;
            }
            let header = format!("Conversation History #{}-#{}", chunk.start, chunk.end);
            let text = self.history.get(&chunk.panel_id).map(|(_, text)| text.clone()).unwrap_or_default();
            push(&chunk.panel_id, header, text);
        }
        // Items are stamped in this order, so on a tie (the first request) the kinds that change least come
        // first and make the longest cacheable prefix: history, the panels tools change, the files and
        // command panels, then what changes on every request.
        let (steady, volatile) = STABILITY_ORDER.split_at(STEADY_PANELS);
        for panel in steady.iter().copied() {
            if let Some((header, content)) = self.builtin_item(panel, input, conversation_tokens) {
                push(panel.id(), header, content);
            }
        }
        for (id, header, content) in self.sources.dynamic_items(&self.state, &self.command_panel_ids()) {
            push(&id, header, content);
        }
        for panel in volatile.iter().copied() {
            if let Some((header, content)) = self.builtin_item(panel, input, conversation_tokens) {
                push(panel.id(), header, content);
            }
        }
        items
    }

    /// A built-in panel's header and content, when it is shown.
    fn builtin_item(
        &self,
        panel: BuiltinPanel,
        input: &RequestInput<'_>,
        conversation_tokens: u64,
    ) -> Option<(String, String)> {
        if !self.shows(panel) {
            return None;
        }
        let content = match panel {
            BuiltinPanel::Todo => Some(todo_panel(&self.state)),
            BuiltinPanel::Library => Some(library_panel(&self.library)),
            BuiltinPanel::Statistics => Some(statistics_panel(&self.statistics(input, conversation_tokens))),
            BuiltinPanel::Tools => Some(tools_panel(input.all_tools, input.active_tools)),
            BuiltinPanel::Memories => Some(memories_panel(&self.state.memories)),
            BuiltinPanel::Spine => Some(self.spine.render(self.definition.max_auto_continuations)),
            BuiltinPanel::Logs => Some(self.logs.render()),
            BuiltinPanel::Scratchpad => Some(scratchpad_panel(&self.state)),
            BuiltinPanel::Tree | BuiltinPanel::Git => self.sources.builtin_content(panel),
        };
        content.map(|content| (panel.header().to_owned(), content))
    }

    /// Renders the history chunks that are new or had one of their messages edited since.
    fn render_history_chunks(&mut self, messages: &[AgentMessage]) {
        let state = &self.state;
        self.history.retain(|id, _| state.detached.iter().any(|chunk| &chunk.panel_id == id));
        for chunk in &state.detached {
            let edits: Vec<super::state::MessageEdit> = state
                .message_edits
                .iter()
                .filter(|edit| (chunk.start..=chunk.end).contains(&edit.number))
                .cloned()
                .collect();
            if self.history.get(&chunk.panel_id).is_some_and(|(rendered_with, _)| *rendered_with == edits) {
                continue;
            }
            let text = render_history(state, chunk, messages);
            self.history.insert(chunk.panel_id.clone(), (edits, text));
        }
    }

    fn statistics(&self, input: &RequestInput<'_>, conversation_tokens: u64) -> Statistics {
        let last = self.report.as_ref();
        Statistics {
            requests: self.requests + 1,
            live_messages: input.messages.len().saturating_sub(self.state.live_start() - 1),
            detached_messages: self.state.live_start() - 1,
            conversation_tokens,
            panel_tokens: last.map_or(0, |report| report.panel_tokens),
            open_panels: last.map_or(0, |report| report.panels.len()),
            todos_open: self.state.todos.iter().filter(|todo| todo.status != TodoStatus::Done).count(),
            memories: self.state.memories.len(),
            last_hit_tokens: last.map_or(0, |report| report.cache_hit_tokens),
            last_miss_tokens: last.map_or(0, |report| report.cache_miss_tokens),
            panel_cost: self.total_cost,
        }
    }

    /// Gives each item its refresh time: unchanged content keeps the old one, new or changed content gets
    /// now (a history chunk: the time it was detached). Panels that are gone are forgotten.
    fn stamp(&mut self, mut items: Vec<ContextItem>, now: i64) -> Vec<ContextItem> {
        let mut seen = HashMap::with_capacity(items.len());
        for item in &mut items {
            let hash = super::cache::stable_hash((&item.header, &item.content));
            let fresh_time = self
                .state
                .detached
                .iter()
                .find(|chunk| chunk.panel_id == item.id)
                .map_or(now, |chunk| chunk.detached_at);
            let slot = match self.slots.get(&item.id) {
                Some(slot) if slot.hash == hash => *slot,
                Some(_) => Slot { hash, last_refresh_ms: now },
                None => Slot { hash, last_refresh_ms: fresh_time },
            };
            item.last_refresh_ms = slot.last_refresh_ms;
            seen.insert(item.id.clone(), slot);
        }
        self.slots = seen;
        items
    }
}
