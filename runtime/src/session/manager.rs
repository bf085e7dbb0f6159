//! `SessionManager`: the session tree and its file together, as pi's session manager pairs them. Every
//! append goes into the tree and then to the file (lazily, see [`SessionStore`]); sessions are created,
//! opened, continued or kept in memory the way pi's `-c`, `--session` and `--no-session` choose them.

use std::collections::{HashMap, VecDeque};
use std::path::{Path, PathBuf};

use serde_json::Value;

use super::context::SessionContext;
use super::entries::{SessionEntry, SessionHeader};
use super::load::{SessionError, load_session_file};
use super::paths::{find_most_recent_session, session_dir_for_cwd};
use super::store::{NewSessionOptions, SessionStore, write_forked_session};
use super::tree::{SessionTree, holds_assistant_message};
use crate::protocol::{AgentMessage, CustomMessage};

/// One session: its entry tree and where it is written.
#[derive(Debug)]
pub struct SessionManager {
    tree: SessionTree,
    store: SessionStore,
    /// The working directory the session belongs to (its header's `cwd`).
    cwd: PathBuf,
    /// What the user should hear about the file that was opened (a newer version).
    warnings: Vec<String>,
    /// Ids the next appended messages take (see [`SessionManager::plan_message_ids`]).
    planned_ids: PlannedIds,
}

/// Ids a driver named for the messages a step will record: tool results by their call's id, the other
/// messages in the order they are recorded (custom messages are recorded as custom entries and take none).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PlannedIds {
    pub in_order: VecDeque<String>,
    pub tool_results: HashMap<String, String>,
}

/// Where a run keeps its sessions: `<agent dir>/sessions/--<cwd>--/` unless a session directory is given
/// (then sessions go straight into it, as pi does with `--session-dir`).
pub fn sessions_dir(agent_dir: &Path, session_dir_override: Option<&Path>, cwd: &Path) -> PathBuf {
    match session_dir_override {
        Some(dir) => dir.to_path_buf(),
        None => session_dir_for_cwd(&agent_dir.join("sessions"), cwd),
    }
}

impl SessionManager {
    /// A new session in `dir` (the folder is created now, as pi creates it; the file at the first answer).
    pub fn create(dir: &Path, cwd: &Path) -> Result<Self, SessionError> {
        Self::create_with(dir, cwd, NewSessionOptions::default())
    }

    pub fn create_with(dir: &Path, cwd: &Path, options: NewSessionOptions) -> Result<Self, SessionError> {
        std::fs::create_dir_all(dir).map_err(|source| SessionError::io("create", dir, source))?;
        Ok(Self {
            tree: SessionTree::new(),
            store: SessionStore::create(dir, cwd, options),
            cwd: cwd.to_path_buf(),
            warnings: Vec::new(),
            planned_ids: PlannedIds::default(),
        })
    }

    /// An existing session file, locked for writing; its entries become the tree, the leaf its last entry.
    pub fn open(path: &Path) -> Result<Self, SessionError> {
        let loaded = load_session_file(path)?;
        let store = SessionStore::open(path, &loaded)?;
        let cwd = PathBuf::from(&loaded.header.cwd);
        let warnings = loaded.version_warning(path).into_iter().collect();
        let tree = SessionTree::from_entries(loaded.entries);
        Ok(Self { tree, store, cwd, warnings, planned_ids: PlannedIds::default() })
    }

    /// The newest session in `dir` with a valid header, or a new one when there is none.
    pub fn continue_recent(dir: &Path, cwd: &Path) -> Result<Self, SessionError> {
        match find_most_recent_session(dir) {
            Some(path) => Self::open(&path),
            None => Self::create(dir, cwd),
        }
    }

    /// A session that is never written (`--no-session`).
    pub fn in_memory(cwd: &Path) -> Self {
        Self::in_memory_with(cwd, NewSessionOptions::default())
    }

    pub fn in_memory_with(cwd: &Path, options: NewSessionOptions) -> Self {
        Self {
            tree: SessionTree::new(),
            store: SessionStore::in_memory(cwd, options),
            cwd: cwd.to_path_buf(),
            warnings: Vec::new(),
            planned_ids: PlannedIds::default(),
        }
    }

    /// Warnings about the opened file, to show before it is used (taken once).
    pub fn take_warnings(&mut self) -> Vec<String> {
        std::mem::take(&mut self.warnings)
    }

    pub fn header(&self) -> &SessionHeader {
        self.store.header()
    }

    pub fn session_id(&self) -> &str {
        &self.store.header().id
    }

    /// The session file, once it has one (`None` in memory).
    pub fn path(&self) -> Option<&Path> {
        self.store.path()
    }

    /// The working directory the session belongs to.
    pub fn cwd(&self) -> &Path {
        &self.cwd
    }

    pub fn tree(&self) -> &SessionTree {
        &self.tree
    }

    /// The messages, model and thinking level of the current branch.
    pub fn context(&self) -> SessionContext {
        self.tree.context()
    }

    pub fn entries(&self) -> &[SessionEntry] {
        self.tree.entries()
    }

    pub fn append_message(&mut self, message: AgentMessage) -> Result<String, SessionError> {
        let planned = match &message {
            AgentMessage::ToolResult(result) => self.planned_ids.tool_results.remove(&result.tool_call_id),
            _ => self.planned_ids.in_order.pop_front(),
        };
        let id = match planned {
            Some(planned) => self.tree.append_message_as(message, planned).id.clone(),
            None => self.tree.append_message(message).id.clone(),
        };
        self.persist(&id)
    }

    /// The next messages appended take these ids (a driver that named its entries in advance, so a
    /// repeated step writes the same entries); once they are used up, messages get random ids again.
    pub fn plan_message_ids(&mut self, ids: PlannedIds) {
        self.planned_ids = ids;
    }

    pub fn append_model_change(&mut self, provider: &str, model_id: &str) -> Result<String, SessionError> {
        let id = self.tree.append_model_change(provider, model_id).id.clone();
        self.persist(&id)
    }

    pub fn append_thinking_level_change(&mut self, level: &str) -> Result<String, SessionError> {
        let id = self.tree.append_thinking_level_change(level).id.clone();
        self.persist(&id)
    }

    /// Names the session (a `session_info` entry; the name is trimmed).
    pub fn append_session_info(&mut self, name: &str) -> Result<String, SessionError> {
        let id = self.tree.append_session_info(name).id.clone();
        self.persist(&id)
    }

    /// Sets (or, with `None`, clears) the label of entry `target_id` (a `label` entry).
    pub fn append_label(&mut self, target_id: &str, label: Option<String>) -> Result<String, SessionError> {
        let id =
            self.tree.append_label(target_id, label).map_err(|error| SessionError::Tree(error.to_string()))?.id.clone();
        self.persist(&id)
    }

    /// Replaces (or, with `None`, drops) the message of entry `target_id` in the context from here on; returns
    /// the new entry (pi 1.5's `context_edit`, announced by `entry_appended`).
    pub fn append_context_edit(
        &mut self,
        target_id: &str,
        replacement: Option<AgentMessage>,
    ) -> Result<SessionEntry, SessionError> {
        let entry = self.tree.append_context_edit(target_id, replacement).clone();
        self.persist(&entry.id)?;
        Ok(entry)
    }

    /// An extension's message, kept as a `custom_message` entry.
    pub fn append_custom_message(&mut self, message: &CustomMessage) -> Result<String, SessionError> {
        let content = message.content.clone();
        let entry =
            self.tree.append_custom_message(&message.custom_type, content, message.display, message.details.clone());
        let id = entry.id.clone();
        self.persist(&id)
    }

    pub fn append_compaction(
        &mut self,
        summary: &str,
        first_kept_entry_id: &str,
        tokens_before: u64,
        details: Option<Value>,
    ) -> Result<String, SessionError> {
        self.append_compaction_from(summary, first_kept_entry_id, tokens_before, details, false)
    }

    /// A compaction entry; `from_hook` marks one an extension wrote (`fromHook: true`).
    pub fn append_compaction_from(
        &mut self,
        summary: &str,
        first_kept_entry_id: &str,
        tokens_before: u64,
        details: Option<Value>,
        from_hook: bool,
    ) -> Result<String, SessionError> {
        let from_hook = from_hook.then_some(true);
        let id =
            self.tree.append_compaction(summary, first_kept_entry_id, tokens_before, details, from_hook).id.clone();
        self.persist(&id)
    }

    /// Extension state (a `custom` entry): kept in the file, never sent to the model.
    pub fn append_custom(&mut self, custom_type: &str, data: Option<Value>) -> Result<String, SessionError> {
        let id = self.tree.append_custom(custom_type, data).id.clone();
        self.persist(&id)
    }

    /// Moves the leaf to `from` and records a branch summary there.
    pub fn branch_with_summary(
        &mut self,
        from: Option<&str>,
        summary: &str,
        details: Option<Value>,
    ) -> Result<String, SessionError> {
        let id = self
            .tree
            .branch_with_summary(from, summary, details, None)
            .map_err(|error| SessionError::Tree(error.to_string()))?
            .id
            .clone();
        self.persist(&id)
    }

    /// Moves the leaf to `id` (the next entry is appended there).
    pub fn branch(&mut self, id: &str) -> Result<(), SessionError> {
        self.tree.branch(id).map_err(|error| SessionError::Tree(error.to_string()))
    }

    /// Empties the leaf: the next entry starts a new root.
    pub fn reset_leaf(&mut self) {
        self.tree.reset_leaf();
    }

    /// pi's `createBranchedSession`: a new session file in `dir` holding the path from the root to `leaf`
    /// (labels re-created), its header naming this file as `parentSession`. Written only when the path holds
    /// an assistant message; returns the new file's path then.
    pub fn create_branched_session(&mut self, leaf: &str, dir: &Path) -> Result<Option<PathBuf>, SessionError> {
        let entries = self.tree.entries_for_fork(leaf).map_err(|error| SessionError::Tree(error.to_string()))?;
        if !holds_assistant_message(&entries) {
            return Ok(None);
        }
        let parent_session = self.path().map(|path| path.to_string_lossy().into_owned());
        let store = SessionStore::create(dir, &self.cwd, NewSessionOptions { session_id: None, parent_session });
        let Some(path) = store.path().map(Path::to_path_buf) else { return Ok(None) };
        write_forked_session(&path, store.header(), &entries)?;
        Ok(Some(path))
    }

    /// pi's `--fork`: a new session in `dir` for `cwd` holding every entry of the session file `source`
    /// (another project's, too), its header naming `source` as `parentSession`; written at once.
    pub fn fork_from(source: &Path, dir: &Path, cwd: &Path) -> Result<SessionManager, SessionError> {
        let loaded = load_session_file(source)?;
        let parent_session = Some(source.to_string_lossy().into_owned());
        std::fs::create_dir_all(dir).map_err(|error| SessionError::io("create", dir, error))?;
        let store = SessionStore::create(dir, cwd, NewSessionOptions { session_id: None, parent_session });
        let Some(path) = store.path().map(Path::to_path_buf) else {
            return Err(SessionError::io("create", dir, std::io::Error::other("no file name for the fork")));
        };
        write_forked_session(&path, store.header(), &loaded.entries)?;
        Self::open(&path)
    }

    /// A new, empty session beside this one (same folder; never written when this one is not), its header
    /// naming `parent_session` when given.
    pub fn new_sibling(&self, parent_session: Option<String>) -> Result<SessionManager, SessionError> {
        let options = NewSessionOptions { session_id: None, parent_session };
        match self.path().and_then(Path::parent) {
            Some(dir) => Self::create_with(dir, &self.cwd, options),
            None => Ok(Self::in_memory_with(&self.cwd, options)),
        }
    }

    /// pi's fork: a new session beside this one holding the path from the root to `leaf` (nothing when
    /// `None`), its header naming this file as `parentSession`. Written at once when the path holds an
    /// answer, else at its first answer like any new session.
    pub fn fork(&mut self, leaf: Option<&str>) -> Result<SessionManager, SessionError> {
        let parent_session = self.path().map(|path| path.to_string_lossy().into_owned());
        let Some(leaf) = leaf else { return self.new_sibling(parent_session) };
        if let Some(dir) = self.path().and_then(Path::parent).map(Path::to_path_buf)
            && let Some(path) = self.create_branched_session(leaf, &dir)?
        {
            return Self::open(&path);
        }
        let entries = self.tree.entries_for_fork(leaf).map_err(|error| SessionError::Tree(error.to_string()))?;
        let mut forked = self.new_sibling(parent_session)?;
        forked.tree = SessionTree::from_entries(entries);
        Ok(forked)
    }

    /// Hands the entry `id` (just appended to the tree) to the file.
    fn persist(&mut self, id: &str) -> Result<String, SessionError> {
        if let Some(entry) = self.tree.entry(id) {
            self.store.record(entry, self.tree.entries())?;
        }
        Ok(id.to_owned())
    }
}
