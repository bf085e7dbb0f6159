//! The panels fed from outside the session, kept up to date before each request: the directory tree (P5),
//! git status (P10), the YAML's command panels, open files, watched commands (`git`/`gh` results) and console
//! processes. Stale command panels run concurrently, each within its own time limit.

use std::collections::HashMap;
use std::time::Duration;

use futures_util::future::join_all;
use tokio_util::sync::CancellationToken;

use super::sources::{CommandPanel, ConsoleProcess, ConsoleStatus, FilePanel, TreeCache, git_status};
use super::state::PanelState;
use super::{BuiltinPanel, PanelsDefinition};
use crate::tools::ToolEnvironment;

/// Largest part of a file a panel shows.
pub const FILE_PANEL_MAX_BYTES: usize = 100 * 1024;
/// Most entries the tree panel lists.
const TREE_MAX_ENTRIES: usize = 400;
/// How long `git status` may take.
const GIT_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a watched command may take.
const WATCH_TIMEOUT_SECS: u64 = 30;

/// A file panel, or why its file could not be read.
enum FileSlot {
    Open(FilePanel),
    Failed(String),
}

/// A background process shown as a panel.
pub struct ConsoleSlot {
    pub panel_id: String,
    pub name: String,
    pub command: String,
    pub process: ConsoleProcess,
    /// The Spine was told it exited.
    pub exit_noted: bool,
    /// A task waits for its exit to wake the idle agent.
    pub exit_watched: bool,
}

/// Git status as last seen.
#[derive(Default)]
struct GitSlot {
    content: Option<String>,
    last_run_ms: Option<i64>,
}

/// The outside-world panels of one session.
pub struct PanelSources {
    pub env: ToolEnvironment,
    tree: Option<TreeCache>,
    /// The tree's text as of the last refresh.
    tree_text: String,
    git: GitSlot,
    git_enabled: bool,
    commands: Vec<CommandPanel>,
    watched: HashMap<String, CommandPanel>,
    files: HashMap<String, FileSlot>,
    pub consoles: Vec<ConsoleSlot>,
    /// Stops running refreshes when the session ends.
    pub cancel: CancellationToken,
}

impl PanelSources {
    pub fn new(definition: &PanelsDefinition, env: ToolEnvironment) -> Self {
        let tree =
            definition.builtin.contains(&BuiltinPanel::Tree).then(|| TreeCache::new(env.cwd.clone(), TREE_MAX_ENTRIES));
        Self {
            tree,
            tree_text: String::new(),
            git: GitSlot::default(),
            git_enabled: definition.builtin.contains(&BuiltinPanel::Git),
            commands: definition.command_panels.iter().map(CommandPanel::from_definition).collect(),
            watched: HashMap::new(),
            files: HashMap::new(),
            consoles: Vec::new(),
            cancel: CancellationToken::new(),
            env,
        }
    }

    /// Opens the files and watched commands the state names, and forgets those it no longer names.
    pub fn sync_with_state(&mut self, state: &PanelState) {
        self.files.retain(|id, _| state.open_files.iter().any(|file| &file.panel_id == id));
        for file in &state.open_files {
            if !self.files.contains_key(&file.panel_id) {
                let slot = self.open_file(&file.path);
                self.files.insert(file.panel_id.clone(), slot);
            }
        }
        self.watched.retain(|id, _| state.watched.iter().any(|watch| &watch.panel_id == id));
        for watch in &state.watched {
            self.watched.entry(watch.panel_id.clone()).or_insert_with(|| {
                CommandPanel::new(&watch.command, &watch.command, watch.refresh_secs, WATCH_TIMEOUT_SECS)
            });
        }
    }

    fn open_file(&self, path: &str) -> FileSlot {
        match FilePanel::open(&self.env.cwd, path, FILE_PANEL_MAX_BYTES) {
            Ok(panel) => FileSlot::Open(panel),
            Err(error) => FileSlot::Failed(error.to_string()),
        }
    }

    /// Opens `path` as panel `id`; fails (opening nothing) when it cannot be read.
    pub fn open(&mut self, id: &str, path: &str) -> Result<(), String> {
        match self.open_file(path) {
            FileSlot::Failed(error) => Err(error),
            slot => {
                self.files.insert(id.to_owned(), slot);
                Ok(())
            }
        }
    }

    /// The open file panel showing `path` as the model gave it, if any.
    pub fn file_panel_for(&self, state: &PanelState, path: &str) -> Option<String> {
        state.open_files.iter().find(|file| file.path == path).map(|file| file.panel_id.clone())
    }

    /// Stops and forgets the console shown as `id`; returns whether there was one.
    pub fn stop_console(&mut self, id: &str) -> bool {
        let Some(index) = self.consoles.iter().position(|console| console.panel_id == id) else { return false };
        let console = self.consoles.remove(index);
        console.process.stop();
        true
    }

    /// Consoles that exited since the last call, as notification texts (each reported once).
    pub fn newly_exited(&mut self) -> Vec<String> {
        let mut exited = Vec::new();
        for console in &mut self.consoles {
            if console.exit_noted {
                continue;
            }
            let how = match console.process.status() {
                ConsoleStatus::Running { .. } => continue,
                ConsoleStatus::Exited { code: Some(code), .. } => format!("exited with code {code}"),
                ConsoleStatus::Exited { signal: Some(signal), .. } => format!("was killed by signal {signal}"),
                ConsoleStatus::Exited { .. } => "exited".to_owned(),
            };
            console.exit_noted = true;
            exited.push(format!("console {} ({}) {how}", console.panel_id, console.name));
        }
        exited
    }

    /// The exits of the consoles no task watches yet (each returned once).
    pub fn unwatched_exits(&mut self) -> Vec<tokio::sync::watch::Receiver<Option<ConsoleStatus>>> {
        let mut exits = Vec::new();
        for console in &mut self.consoles {
            if !std::mem::replace(&mut console.exit_watched, true) {
                exits.push(console.process.on_exit());
            }
        }
        exits
    }

    /// Files may have changed (a tool wrote or ran something): the tree is walked again next time.
    pub fn invalidate_tree(&mut self) {
        if let Some(tree) = &mut self.tree {
            tree.invalidate();
        }
    }

    /// Brings every panel up to date for a request at `now`; returns log lines for what changed on its own
    /// (an open file changed or vanished).
    pub async fn refresh(&mut self, state: &PanelState, definition: &PanelsDefinition, now: i64) -> Vec<String> {
        self.sync_with_state(state);
        let mut events = Vec::new();
        for (id, slot) in &mut self.files {
            if let FileSlot::Open(panel) = slot
                && panel.refresh()
            {
                events.push(format!("{} ({id}) changed on disk.", panel.path()));
            }
        }
        if let Some(tree) = &mut self.tree {
            let (text, changed) = tree.get(now);
            if changed {
                self.tree_text = text.to_owned();
            }
        }
        let cancel = &self.cancel;
        let env = &self.env;
        let git_due = self.git_enabled
            && self.git.last_run_ms.is_none_or(|last| {
                let interval = i64::try_from(definition.git_refresh_secs.saturating_mul(1000)).unwrap_or(i64::MAX);
                !(0..interval).contains(&now.saturating_sub(last))
            });
        let git = async { if git_due { Some(git_status(env, GIT_TIMEOUT).await) } else { None } };
        let stale = self
            .commands
            .iter_mut()
            .chain(self.watched.values_mut())
            .filter(|panel| panel.is_stale(now))
            .map(|panel| panel.refresh(env, cancel.clone(), now));
        let (git, _) = tokio::join!(git, join_all(stale));
        if let Some(status) = git {
            self.git = GitSlot { content: status, last_run_ms: Some(now) };
        }
        events
    }

    /// The content of the tree or git panel (`None`: not shown, e.g. outside a git repository).
    pub fn builtin_content(&self, panel: BuiltinPanel) -> Option<String> {
        match panel {
            BuiltinPanel::Tree => self.tree.as_ref().map(|_| self.tree_text.clone()),
            BuiltinPanel::Git => self.git.content.clone(),
            _ => None,
        }
    }

    /// `(id, header, content)` of the YAML's command panels, open files, watched commands and consoles.
    pub fn dynamic_items(&self, state: &PanelState, command_ids: &[String]) -> Vec<(String, String, String)> {
        let mut items = Vec::new();
        for (panel, id) in self.commands.iter().zip(command_ids) {
            if !state.closed.contains(id) {
                items.push((id.clone(), panel.name.clone(), panel.content().to_owned()));
            }
        }
        for file in &state.open_files {
            let header = match &file.skill {
                Some(skill) => format!("Skill: {skill}"),
                None => format!("File: {}", file.path),
            };
            let content = match self.files.get(&file.panel_id) {
                Some(FileSlot::Open(panel)) => panel.content().to_owned(),
                Some(FileSlot::Failed(error)) => format!("[cannot show this file: {error}]"),
                None => "[not loaded]".to_owned(),
            };
            items.push((file.panel_id.clone(), header, content));
        }
        for watch in &state.watched {
            if let Some(panel) = self.watched.get(&watch.panel_id) {
                items.push((watch.panel_id.clone(), format!("Command: {}", watch.command), panel.content().to_owned()));
            }
        }
        for console in &self.consoles {
            let status = match console.process.status() {
                ConsoleStatus::Running { pid } => format!("running (pid {pid})"),
                ConsoleStatus::Exited { code: Some(code), .. } => format!("exited with code {code}"),
                ConsoleStatus::Exited { signal: Some(signal), .. } => format!("killed by signal {signal}"),
                ConsoleStatus::Exited { .. } => "exited".to_owned(),
            };
            let content = format!("$ {}\n[{status}]\n{}", console.command, console.process.output());
            items.push((console.panel_id.clone(), format!("Console: {}", console.name), content));
        }
        items
    }
}
