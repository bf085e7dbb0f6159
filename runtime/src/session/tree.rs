//! The in-memory session tree (pi's `SessionManager` without the file): entries in file order, an id index,
//! the current leaf, labels, branching, the `/tree` view and the entries of a forked session. Every walk is
//! iterative, so a session of any depth is safe.

use std::collections::{HashMap, HashSet};
use std::fmt;

use serde_json::Value;

use super::context::{SessionContext, build_indexed, iso_to_ms, path_indices};
use super::entries::{EntryKind, SessionEntry};
use super::ids::{iso_timestamp_now, new_entry_id};
use crate::protocol::{AgentMessage, MessageContent};

/// A tree operation named an entry that is not there.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SessionTreeError {
    /// `branch`, `branch_with_summary` or `entries_for_fork` got an unknown id.
    #[error("entry {id} is not in this session; pick an id from the session tree")]
    EntryNotFound { id: String },
    /// `append_label` got an unknown target.
    #[error("cannot label entry {id}: it is not in this session; labels can only name existing entries")]
    LabelTargetNotFound { id: String },
}

/// Makes a new entry id; the argument says whether a candidate is already taken.
pub type EntryIdGenerator = Box<dyn FnMut(&dyn Fn(&str) -> bool) -> String + Send>;
/// Gives the timestamp of a new entry (ISO 8601 with milliseconds).
pub type TimestampSource = Box<dyn FnMut() -> String + Send>;

/// One entry in the `/tree` view.
#[derive(Debug)]
pub struct TreeNode<'a> {
    pub entry: &'a SessionEntry,
    /// Oldest first.
    pub children: Vec<TreeNode<'a>>,
    /// The entry's current label.
    pub label: Option<String>,
}

impl TreeNode<'_> {
    pub fn id(&self) -> &str {
        &self.entry.id
    }
}

impl Drop for TreeNode<'_> {
    /// Dismantles the subtree iteratively: the default drop would recurse once per level.
    fn drop(&mut self) {
        let mut pending = std::mem::take(&mut self.children);
        while let Some(mut node) = pending.pop() {
            pending.append(&mut node.children);
        }
    }
}

/// The label currently set on an entry; `order` keeps pi's Map insertion order.
#[derive(Debug, Clone, Default)]
struct LabelSlot {
    order: u64,
    label: String,
    timestamp: String,
}

/// A session's entries as a tree with a movable leaf.
pub struct SessionTree {
    entries: Vec<SessionEntry>,
    by_id: foldhash::HashMap<String, usize>,
    leaf: Option<String>,
    labels: HashMap<String, LabelSlot>,
    label_order: u64,
    next_id: EntryIdGenerator,
    now: TimestampSource,
}

impl fmt::Debug for SessionTree {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionTree").field("entries", &self.entries.len()).field("leaf", &self.leaf).finish()
    }
}

impl Default for SessionTree {
    fn default() -> Self {
        Self::new()
    }
}

impl SessionTree {
    /// An empty tree with random ids and the wall clock.
    pub fn new() -> Self {
        Self {
            entries: Vec::new(),
            by_id: foldhash::HashMap::default(),
            leaf: None,
            labels: HashMap::new(),
            label_order: 0,
            next_id: Box::new(|taken: &dyn Fn(&str) -> bool| new_entry_id(taken)),
            now: Box::new(iso_timestamp_now),
        }
    }

    /// A loaded session: entries in file order, the leaf on the last one. A later duplicate id wins.
    pub fn from_entries(entries: Vec<SessionEntry>) -> Self {
        let mut tree = Self::new();
        tree.entries.reserve(entries.len());
        for entry in entries {
            tree.insert(entry);
        }
        tree.leaf = tree.entries.last().map(|e| e.id.clone());
        tree
    }

    /// Uses `generator` for new entry ids.
    pub fn with_id_generator(mut self, generator: EntryIdGenerator) -> Self {
        self.next_id = generator;
        self
    }

    /// Uses `clock` for new entry timestamps.
    pub fn with_clock(mut self, clock: TimestampSource) -> Self {
        self.now = clock;
        self
    }

    pub fn entries(&self) -> &[SessionEntry] {
        &self.entries
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn entry(&self, id: &str) -> Option<&SessionEntry> {
        self.by_id.get(id).map(|&i| &self.entries[i])
    }

    pub fn contains(&self, id: &str) -> bool {
        self.by_id.contains_key(id)
    }

    /// `None` before the first entry (or after [`SessionTree::reset_leaf`]).
    pub fn leaf_id(&self) -> Option<&str> {
        self.leaf.as_deref()
    }

    pub fn leaf_entry(&self) -> Option<&SessionEntry> {
        self.leaf.as_deref().and_then(|id| self.entry(id))
    }

    /// Moves the leaf to `id`; the next append becomes its child.
    pub fn branch(&mut self, id: &str) -> Result<(), SessionTreeError> {
        if !self.contains(id) {
            return Err(SessionTreeError::EntryNotFound { id: id.to_owned() });
        }
        self.leaf = Some(id.to_owned());
        Ok(())
    }

    /// Moves the leaf before the first entry: the next append is a new root.
    pub fn reset_leaf(&mut self) {
        self.leaf = None;
    }

    /// Moves the leaf to `from` (`None`: before the first entry) and appends a branch summary there, with
    /// `fromId` = `from` or `"root"`.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: impl Into<String>,
        details: Option<Value>,
        from_hook: Option<bool>,
    ) -> Result<&SessionEntry, SessionTreeError> {
        if let Some(id) = from.filter(|id| !self.contains(id)) {
            return Err(SessionTreeError::EntryNotFound { id: id.to_owned() });
        }
        self.leaf = from.map(str::to_owned);
        let from_id = from.unwrap_or("root").to_owned();
        Ok(self.append(EntryKind::BranchSummary { from_id, summary: summary.into(), details, from_hook }))
    }

    pub fn append_message(&mut self, message: AgentMessage) -> &SessionEntry {
        self.append(EntryKind::Message { message })
    }

    /// [`SessionTree::append_message`] under a given id (one a driver named in advance); a taken id gets a
    /// fresh one instead, so ids stay unique.
    pub fn append_message_as(&mut self, message: AgentMessage, id: String) -> &SessionEntry {
        if self.by_id.contains_key(&id) {
            return self.append_message(message);
        }
        self.append_with_id(EntryKind::Message { message }, id)
    }

    pub fn append_thinking_level_change(&mut self, thinking_level: impl Into<String>) -> &SessionEntry {
        self.append(EntryKind::ThinkingLevelChange { thinking_level: thinking_level.into() })
    }

    pub fn append_model_change(&mut self, provider: impl Into<String>, model_id: impl Into<String>) -> &SessionEntry {
        self.append(EntryKind::ModelChange { provider: provider.into(), model_id: model_id.into() })
    }

    pub fn append_compaction(
        &mut self,
        summary: impl Into<String>,
        first_kept_entry_id: impl Into<String>,
        tokens_before: u64,
        details: Option<Value>,
        from_hook: Option<bool>,
    ) -> &SessionEntry {
        self.append(EntryKind::Compaction {
            summary: summary.into(),
            first_kept_entry_id: first_kept_entry_id.into(),
            tokens_before,
            details,
            from_hook,
        })
    }

    /// A branch summary at the current leaf (see [`SessionTree::branch_with_summary`] to move first).
    pub fn append_branch_summary(
        &mut self,
        from_id: impl Into<String>,
        summary: impl Into<String>,
        details: Option<Value>,
        from_hook: Option<bool>,
    ) -> &SessionEntry {
        self.append(EntryKind::BranchSummary { from_id: from_id.into(), summary: summary.into(), details, from_hook })
    }

    pub fn append_custom(&mut self, custom_type: impl Into<String>, data: Option<Value>) -> &SessionEntry {
        self.append(EntryKind::Custom { custom_type: custom_type.into(), data })
    }

    pub fn append_custom_message(
        &mut self,
        custom_type: impl Into<String>,
        content: MessageContent,
        display: bool,
        details: Option<Value>,
    ) -> &SessionEntry {
        self.append(EntryKind::CustomMessage { custom_type: custom_type.into(), content, display, details })
    }

    /// Sets the label of `target_id`, or clears it with `None` (or an empty label).
    pub fn append_label(&mut self, target_id: &str, label: Option<String>) -> Result<&SessionEntry, SessionTreeError> {
        if !self.contains(target_id) {
            return Err(SessionTreeError::LabelTargetNotFound { id: target_id.to_owned() });
        }
        Ok(self.append(EntryKind::Label { target_id: target_id.to_owned(), label }))
    }

    /// Replaces the message of `target_id` in later contexts (drops it with `None`): a `context_edit` entry.
    pub fn append_context_edit(&mut self, target_id: &str, replacement: Option<AgentMessage>) -> &SessionEntry {
        self.append(EntryKind::ContextEdit { target_id: target_id.to_owned(), replacement })
    }

    /// Names the session; line breaks become spaces and the name is trimmed.
    pub fn append_session_info(&mut self, name: &str) -> &SessionEntry {
        let name = name.split(['\r', '\n']).filter(|part| !part.is_empty()).collect::<Vec<_>>().join(" ");
        self.append(EntryKind::SessionInfo { name: Some(name.trim().to_owned()) })
    }

    /// The name from the latest `session_info` entry (an empty name means none).
    pub fn session_name(&self) -> Option<&str> {
        self.entries.iter().rev().find_map(|entry| match &entry.kind {
            EntryKind::SessionInfo { name } => Some(name.as_deref().map(str::trim).filter(|n| !n.is_empty())),
            _ => None,
        })?
    }

    /// The current label of an entry.
    pub fn label(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(|slot| slot.label.as_str())
    }

    /// When the current label of an entry was set (the label entry's ISO timestamp).
    pub fn label_timestamp(&self, id: &str) -> Option<&str> {
        self.labels.get(id).map(|slot| slot.timestamp.as_str())
    }

    /// No id is used by more than one entry (pi and this runtime never repeat one). Otherwise walks look every
    /// parent up by id, so the last entry with the id wins, as in pi.
    fn ids_are_unique(&self) -> bool {
        self.by_id.len() == self.entries.len()
    }

    /// The entries whose parent is `id`, in file order.
    pub fn children(&self, id: &str) -> Vec<&SessionEntry> {
        self.entries.iter().filter(|e| e.parent_id.as_deref() == Some(id)).collect()
    }

    /// The entries from the root down to `id` (empty when `id` is unknown).
    pub fn path_to(&self, id: &str) -> Vec<&SessionEntry> {
        let Some(&start) = self.by_id.get(id) else { return Vec::new() };
        let lookup = |id: &str| self.by_id.get(id).copied();
        path_indices(&self.entries, &lookup, self.ids_are_unique(), start)
            .into_iter()
            .map(|i| &self.entries[i])
            .collect()
    }

    /// The entries from the root down to the leaf.
    pub fn current_path(&self) -> Vec<&SessionEntry> {
        self.leaf.as_deref().map(|leaf| self.path_to(leaf)).unwrap_or_default()
    }

    /// The context at the current leaf.
    pub fn context(&self) -> SessionContext {
        self.context_at(self.leaf.as_deref())
    }

    /// The context at `leaf` (see [`super::build_session_context`]).
    pub fn context_at(&self, leaf: Option<&str>) -> SessionContext {
        build_indexed(&self.entries, |id| self.by_id.get(id).copied(), self.ids_are_unique(), leaf)
    }

    /// pi's `getTree`: entries whose parent is missing become roots (in file order); children are sorted
    /// by timestamp, oldest first.
    pub fn get_tree(&self) -> Vec<TreeNode<'_>> {
        let count = self.entries.len();
        let mut children: Vec<Vec<usize>> = vec![Vec::new(); count];
        let mut roots = Vec::new();
        for (index, entry) in self.entries.iter().enumerate() {
            let parent = entry.parent_id.as_deref().filter(|p| *p != entry.id).and_then(|p| self.by_id.get(p));
            match parent {
                Some(&parent) => children[parent].push(index),
                None => roots.push(index),
            }
        }
        let millis: Vec<i64> = self.entries.iter().map(|e| iso_to_ms(&e.timestamp)).collect();
        children.iter_mut().for_each(|list| list.sort_by_key(|&i| millis[i]));

        // Parents come before their children in `order`, so building it backwards finds every child done.
        let mut order = Vec::with_capacity(count);
        let mut stack: Vec<usize> = roots.iter().rev().copied().collect();
        while let Some(index) = stack.pop() {
            order.push(index);
            stack.extend(children[index].iter().rev());
        }
        let mut built: Vec<Option<TreeNode<'_>>> = std::iter::repeat_with(|| None).take(count).collect();
        for &index in order.iter().rev() {
            let entry = &self.entries[index];
            let kids = children[index].iter().filter_map(|&child| built[child].take()).collect();
            built[index] = Some(TreeNode { entry, children: kids, label: self.label(&entry.id).map(str::to_owned) });
        }
        roots.iter().filter_map(|&root| built[root].take()).collect()
    }

    /// The entries of a session forked at `leaf` (pi's `createBranchedSession`): the path from the root,
    /// without label entries and re-chained, then one new label entry per labelled entry on it.
    pub fn entries_for_fork(&mut self, leaf: &str) -> Result<Vec<SessionEntry>, SessionTreeError> {
        let path = self.path_to(leaf);
        if path.is_empty() {
            return Err(SessionTreeError::EntryNotFound { id: leaf.to_owned() });
        }
        let mut forked: Vec<SessionEntry> = Vec::with_capacity(path.len());
        let mut parent_id: Option<String> = None;
        for entry in path.into_iter().filter(|e| !matches!(e.kind, EntryKind::Label { .. })) {
            let mut entry = entry.clone();
            entry.parent_id = parent_id.replace(entry.id.clone());
            forked.push(entry);
        }
        let mut ids: HashSet<String> = forked.iter().map(|e| e.id.clone()).collect();
        let mut labels: Vec<(String, LabelSlot)> = self
            .labels
            .iter()
            .filter(|(target, _)| ids.contains(*target))
            .map(|(t, s)| (t.clone(), s.clone()))
            .collect();
        labels.sort_by_key(|(_, slot)| slot.order);
        for (target_id, slot) in labels {
            let id = (self.next_id)(&|candidate| ids.contains(candidate));
            ids.insert(id.clone());
            let kind = EntryKind::Label { target_id, label: Some(slot.label) };
            forked.push(SessionEntry {
                id: id.clone(),
                parent_id: parent_id.replace(id),
                timestamp: slot.timestamp,
                kind,
            });
        }
        Ok(forked)
    }

    /// A new entry under the leaf; the leaf moves to it.
    fn append(&mut self, kind: EntryKind) -> &SessionEntry {
        let by_id = &self.by_id;
        let id = (self.next_id)(&|candidate| by_id.contains_key(candidate));
        self.append_with_id(kind, id)
    }

    fn append_with_id(&mut self, kind: EntryKind, id: String) -> &SessionEntry {
        let timestamp = (self.now)();
        let entry = SessionEntry { id: id.clone(), parent_id: self.leaf.take(), timestamp, kind };
        self.leaf = Some(id);
        let index = self.insert(entry);
        &self.entries[index]
    }

    /// Adds an entry to the list, the index and the labels; returns its index.
    fn insert(&mut self, entry: SessionEntry) -> usize {
        if let EntryKind::Label { target_id, label } = &entry.kind {
            match label.as_deref().filter(|l| !l.is_empty()) {
                Some(label) => {
                    let order = self.label_order;
                    let fresh = || LabelSlot { order, ..LabelSlot::default() };
                    let slot = self.labels.entry(target_id.clone()).or_insert_with(fresh);
                    slot.label = label.to_owned();
                    slot.timestamp = entry.timestamp.clone();
                    self.label_order += 1;
                }
                None => {
                    self.labels.remove(target_id);
                }
            }
        }
        let index = self.entries.len();
        self.by_id.insert(entry.id.clone(), index);
        self.entries.push(entry);
        index
    }
}

/// Whether `entries` hold an assistant message: pi writes a forked session's file only then.
pub fn holds_assistant_message(entries: &[SessionEntry]) -> bool {
    entries.iter().any(|e| matches!(e.message(), Some(AgentMessage::Assistant(_))))
}
