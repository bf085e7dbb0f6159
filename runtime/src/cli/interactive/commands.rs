//! The built-in slash commands of the interactive mode, their descriptions for the `/` list, and what
//! each does. A `/name` that is not built in goes on as a prompt (extension commands, templates, skills).

use base64::Engine;
use pi_tui::Role;
use pi_tui::markdown::Markdown;

use super::UiEvent;
use super::app::App;
use super::transcript::Item;
use crate::cli::rpc::export::export_session;
use crate::extension::ModelSelectSource;

/// Built-in commands: name and what the `/` list says of it.
pub const BUILTIN_COMMANDS: &[(&str, &str)] = &[
    ("model", "Switch the model (name or search: /model sonnet)"),
    ("resume", "Resume another session (Tab: sessions of every project)"),
    ("tree", "Move around the session tree (double Escape opens it too)"),
    ("fork", "Start a new session from before one of your messages"),
    ("compact", "Summarize older messages now (optional focus: /compact keep the API design)"),
    ("login", "Log in with a subscription: Claude Pro/Max, ChatGPT, GitHub Copilot (/login [provider])"),
    ("logout", "Forget a subscription login"),
    ("new", "Start a new session"),
    ("name", "Name this session (/name release prep)"),
    ("session", "Show this session's file, id, messages, tokens and cost"),
    ("export", "Write this session as an HTML page (/export [file])"),
    ("copy", "Copy the last answer to the clipboard"),
    ("hotkeys", "Show every key"),
    ("reload", "Read settings, skills, prompt templates, context files and models.json again"),
    ("quit", "Leave (the session is saved)"),
];

/// pi 1.5's `/thinking`, listed after `/tree` at that level.
pub const THINKING_COMMAND: (&str, &str) =
    ("thinking", "<level> — Set the thinking level (off, minimal, low, medium, high, xhigh, max)");

/// pi 1.5's `/trust`, listed after `/fork` at that level.
pub const TRUST_COMMAND: (&str, &str) = ("trust", "Save whether this folder's own files are used in later sessions");

/// Every key the interactive mode knows, for `/hotkeys`.
const HOTKEYS: &str = "\
| Key | Action |
|---|---|
| Enter | Send the message (steers the agent while it works) |
| Alt+Enter | Queue a follow-up for when the agent is done |
| Shift+Enter / Ctrl+J | New line |
| Up / Down | Move between lines; Up on an empty editor browses history |
| Left/Ctrl+B, Right/Ctrl+F | Move by character |
| Alt+Left/Ctrl+Left/Alt+B, Alt+Right/Ctrl+Right/Alt+F | Move by word |
| Home/Ctrl+A, End/Ctrl+E | Start, end of line |
| Ctrl+] x, Ctrl+Alt+] x | Jump forward, backward to character x |
| Ctrl+W/Alt+Backspace, Alt+D/Alt+Delete | Delete a word backward, forward |
| Ctrl+U, Ctrl+K | Delete to start, end of line |
| Ctrl+Y, Alt+Y | Paste deleted text, cycle through earlier deletions |
| Ctrl+- | Undo |
| Tab | Complete a path, accept a suggestion |
| Escape | Close suggestions, or stop the agent |
| Ctrl+C | Clear the editor; twice on an empty editor: quit |
| Ctrl+D | Quit (empty editor) |
| Ctrl+Z | Suspend to the shell |
| Shift+Tab | Cycle the thinking level |
| Ctrl+O | Expand or collapse tool output |
| Ctrl+T | Show or hide thinking |
| Ctrl+G | Edit the message in $VISUAL / $EDITOR |
| Alt+Up | Take queued messages back into the editor |
| PageUp / PageDown | Scroll (fullscreen) |
| / | Commands |
| !command | Run a shell command; its output joins the conversation |
| !!command | Run a shell command without sending its output to the model |
";

impl App {
    /// Runs `text` when it names a built-in command; returns whether it did.
    pub(super) fn run_builtin_command(&mut self, text: &str) -> bool {
        let body = &text[1..];
        let (name, args) = match body.find(char::is_whitespace) {
            Some(at) => (&body[..at], body[at..].trim()),
            None => (body, ""),
        };
        match name {
            "quit" | "exit" => self.exit = true,
            "hotkeys" => {
                self.transcript.push(Item::Static(Vec::new()));
                let table = format!("**Keys**\n\n{HOTKEYS}");
                self.transcript.push(Item::Markdown(Box::new(Markdown::new(&table, self.theme.clone()))));
            }
            "session" => self.show_session(),
            "name" => self.name_session(args),
            "copy" => self.copy_last_answer(),
            "export" => match export_session(&self.session, &self.agent_name, (!args.is_empty()).then_some(args)) {
                Ok(path) => self.transcript.notice(format!("Exported the session to {path}"), Role::Muted),
                Err(error) => self.transcript.notice(format!("Error: {error}"), Role::Error),
            },
            "compact" => self.compact(args),
            "new" => self.new_session(),
            "model" if args.is_empty() => self.open_model_picker(),
            "model" => self.switch_model(args),
            "resume" => self.open_session_picker(false, false),
            "tree" => self.open_tree_picker(),
            "fork" => self.open_fork_picker(),
            "reload" => self.reload(),
            "thinking" if self.session.agent().pi_compat().is_v1_5() => self.set_thinking(args),
            "trust" if self.trust.is_some() => self.open_trust_selector(),
            "login" if self.logins.is_some() => self.login(args),
            "logout" if self.logins.is_some() => self.logout(args),
            _ => return false,
        }
        true
    }

    /// `/thinking [level]`: sets the level, or names the current one.
    fn set_thinking(&mut self, args: &str) {
        if args.is_empty() {
            let current = self.session.agent().thinking_level();
            let text = format!("Thinking level: {}. Set it with /thinking <level>.", current.as_str());
            self.transcript.notice(text, Role::Muted);
            return;
        }
        let pi_compat = self.session.agent().pi_compat();
        match crate::ai::ThinkingLevel::parse_at(args, pi_compat) {
            Ok(level) => match self.session.set_thinking_level(level) {
                Ok(applied) => self.transcript.notice(format!("Thinking level: {}", applied.as_str()), Role::Muted),
                Err(error) => self.transcript.notice(format!("Error: {error}"), Role::Error),
            },
            Err(error) => self.transcript.notice(format!("Unknown thinking level: {error}."), Role::Warning),
        }
    }

    fn show_session(&mut self) {
        let stats = self.session.stats();
        let mut lines = vec![
            format!("File: {}", stats.session_file.as_deref().unwrap_or("(not saved)")),
            format!("Id: {}", stats.session_id),
            format!(
                "Messages: {} from you, {} answers, {} tool calls, {} in all",
                stats.user_messages, stats.assistant_messages, stats.tool_calls, stats.total_messages
            ),
            format!(
                "Tokens: {} in, {} out, {} cache read, {} cache write",
                stats.tokens.input, stats.tokens.output, stats.tokens.cache_read, stats.tokens.cache_write
            ),
        ];
        if stats.cost > 0.0 {
            lines.push(format!("Cost: ${:.4}", stats.cost));
        }
        if let Some(name) = self.session.session_name() {
            lines.insert(0, format!("Name: {name}"));
        }
        self.transcript.notice(lines.join("\n"), Role::Muted);
    }

    fn name_session(&mut self, name: &str) {
        if name.is_empty() {
            let current = self.session.session_name().unwrap_or_else(|| "(none)".to_owned());
            self.transcript.notice(format!("Session name: {current}. Set it with /name <name>."), Role::Muted);
            return;
        }
        match self.session.set_session_name(name) {
            Ok(()) => self.transcript.notice(format!("Session named {name}."), Role::Muted),
            Err(error) => self.transcript.notice(format!("Error: {error}"), Role::Error),
        }
    }

    /// Puts the last answer on the clipboard with OSC 52 (the terminal, also over ssh and in tmux, sets it).
    fn copy_last_answer(&mut self) {
        let Some(text) = self.session.last_assistant_text() else {
            self.transcript.notice("There is no answer to copy yet.", Role::Muted);
            return;
        };
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        let sequence = format!("\x1b]52;c;{encoded}\x07");
        let _ = std::io::Write::write_all(&mut std::io::stdout(), sequence.as_bytes());
        self.transcript.notice("Copied the last answer to the clipboard.", Role::Muted);
    }

    fn compact(&mut self, focus: &str) {
        if self.refuse_while_busy() {
            return;
        }
        let session = self.session.clone();
        let sender = self.sender.clone();
        let focus = (!focus.is_empty()).then(|| focus.to_owned());
        self.status = Some("Compacting the context...".to_owned());
        let task = tokio::task::spawn_local(async move {
            let notice = match session.compact_now(focus.as_deref()).await {
                Ok(Some(_)) => None,
                Ok(None) => Some("Nothing to compact yet.".to_owned()),
                Err(error) => Some(format!("Compaction failed: {error}")),
            };
            let _ = sender.send(UiEvent::TaskFinished(notice));
        });
        self.keep(task);
    }

    fn new_session(&mut self) {
        if self.refuse_while_busy() {
            return;
        }
        let session = self.session.clone();
        let sender = self.sender.clone();
        let task = tokio::task::spawn_local(async move {
            let notice = match session.new_session(None).await {
                Ok(true) => "Started a new session.".to_owned(),
                Ok(false) => "An extension kept this session.".to_owned(),
                Err(error) => format!("Error: {error}"),
            };
            let _ = sender.send(UiEvent::TaskFinished(Some(notice)));
        });
        self.keep(task);
        self.transcript.clear_conversation();
    }

    /// `/model` lists the models that have a key; `/model text` switches to the one model that matches.
    fn switch_model(&mut self, query: &str) {
        let available = self.models.available_ids();
        let query_lower = query.to_lowercase();
        let matches: Vec<&(String, String)> = available
            .iter()
            .filter(|(provider, id)| {
                let full = format!("{provider}/{id}").to_lowercase();
                query.is_empty() || full == query_lower || full.contains(&query_lower)
            })
            .collect();
        let exact = matches.iter().find(|(provider, id)| {
            id.to_lowercase() == query_lower || format!("{provider}/{id}").to_lowercase() == query_lower
        });
        let chosen = exact.copied().or_else(|| (matches.len() == 1 && !query.is_empty()).then(|| matches[0]));
        let Some((provider, id)) = chosen.cloned() else {
            let list: Vec<String> = matches.iter().map(|(provider, id)| format!("  {provider}/{id}")).collect();
            let text = if list.is_empty() {
                format!("No model with a key matches {query}.")
            } else {
                format!("Models (switch with /model <name>):\n{}", list.join("\n"))
            };
            self.transcript.notice(text, Role::Muted);
            return;
        };
        self.apply_model(provider, id, ModelSelectSource::Set);
    }
}
