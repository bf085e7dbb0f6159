//! pi 1.5's project trust in the terminal: the question asked before the interactive mode starts in a folder
//! that brings its own files (nothing saved says whether to use them), and `/trust`, which saves a decision
//! for the runs to come.

use std::path::{Path, PathBuf};

use pi_tui::keys::{KeyEvent, is_key};
use pi_tui::renderer::{DiffRenderer, ScreenMode};
use pi_tui::terminal::{InputEvent, ProcessTerminal};
use pi_tui::text::{truncate_to_width, wrap_line};
use pi_tui::{ColorDepth, Role, Theme};

use super::app::App;
use super::selectors::Overlay;
use crate::cli::project_trust::{SavedDecision, TrustChoice, TrustStore, trust_choices};

/// Where `/trust` saves and what this run decided.
#[derive(Debug, Clone)]
pub struct TrustContext {
    pub agent_dir: PathBuf,
    /// Whether this run uses the project's files.
    pub trusted: bool,
}

/// What a key did to the selector.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustOutcome {
    Stay,
    Picked(usize),
    Closed,
}

/// A short list of trust choices under a few lines about the folder.
pub struct TrustSelector {
    header: Vec<String>,
    choices: Vec<TrustChoice>,
    selected: usize,
    /// The choice that is the saved decision, marked with a check (`/trust` only).
    saved: Option<usize>,
    confirm_word: &'static str,
    theme: Theme,
}

impl TrustSelector {
    /// The question at start-up, with the choices that save nothing.
    pub fn startup(cwd: &Path, agent_name: &str, config_dir: &str, choices: Vec<TrustChoice>, theme: Theme) -> Self {
        let header = vec![
            theme.bold(&theme.fg(Role::Accent, "Use this folder's own files?")),
            theme.fg(Role::Muted, &cwd.display().to_string()),
            String::new(),
            format!(
                "Trusting it lets {agent_name} read its {config_dir} settings, MCP servers, skills, prompt templates and system prompt files."
            ),
        ];
        Self { header, choices, selected: 0, saved: None, confirm_word: "select", theme }
    }

    /// `/trust`: the saved decision (marked) and this run's.
    pub fn command(cwd: &Path, saved: Option<SavedDecision>, session_trusted: bool, theme: Theme) -> Self {
        let choices = trust_choices(cwd, false);
        let saved_index = saved.as_ref().and_then(|saved| {
            choices.iter().position(|choice| {
                choice.trusted == saved.trusted
                    && choice.saved_path.as_ref().is_some_and(|path| path.to_string_lossy() == saved.path)
            })
        });
        let folder = std::fs::canonicalize(cwd).unwrap_or_else(|_| cwd.to_path_buf());
        let saved_text = match &saved {
            None => "none".to_owned(),
            Some(saved) => {
                let word = if saved.trusted { "trusted" } else { "not trusted" };
                if Path::new(&saved.path) == folder { word.to_owned() } else { format!("{word} (from {})", saved.path) }
            }
        };
        let header = vec![
            theme.bold(&theme.fg(Role::Accent, "Project trust")),
            theme.fg(Role::Muted, &cwd.display().to_string()),
            String::new(),
            theme.fg(Role::Muted, &format!("Saved decision: {saved_text}")),
            theme
                .fg(Role::Muted, &format!("This session: {}", if session_trusted { "trusted" } else { "not trusted" })),
        ];
        let selected = saved_index.unwrap_or(0);
        Self { header, choices, selected, saved: saved_index, confirm_word: "save", theme }
    }

    pub fn choice(&self, index: usize) -> Option<&TrustChoice> {
        self.choices.get(index)
    }

    pub fn handle_key(&mut self, key: &KeyEvent) -> TrustOutcome {
        if is_key(key, "up") || is_key(key, "k") {
            self.selected = self.selected.saturating_sub(1);
        } else if is_key(key, "down") || is_key(key, "j") {
            self.selected = (self.selected + 1).min(self.choices.len().saturating_sub(1));
        } else if is_key(key, "enter") {
            return TrustOutcome::Picked(self.selected);
        } else if is_key(key, "escape") || is_key(key, "ctrl+c") {
            return TrustOutcome::Closed;
        }
        TrustOutcome::Stay
    }

    pub fn render(&self, width: usize) -> Vec<String> {
        let theme = &self.theme;
        let rule = theme.fg(Role::Border, &"─".repeat(width));
        let fit = |line: &str| format!(" {}", truncate_to_width(line, width.saturating_sub(1), "..."));
        let mut lines = vec![rule.clone(), String::new()];
        // Header lines wrap (the explanation is long); list rows are cut to the width.
        for line in &self.header {
            lines.extend(wrap_line(line, width.saturating_sub(2).max(1)).into_iter().map(|part| format!(" {part}")));
        }
        lines.push(String::new());
        for (index, choice) in self.choices.iter().enumerate() {
            let arrow = if index == self.selected { theme.fg(Role::Accent, "→ ") } else { "  ".to_owned() };
            let check = match self.saved {
                Some(saved) if saved == index => theme.fg(Role::Accent, "✓ "),
                Some(_) => "  ".to_owned(),
                None => String::new(),
            };
            let label =
                if index == self.selected { theme.fg(Role::Accent, &choice.label) } else { choice.label.clone() };
            lines.push(fit(&format!("{arrow}{check}{label}")));
        }
        lines.push(String::new());
        let hint = format!("↑↓ move  enter {}  escape/ctrl+c cancel", self.confirm_word);
        lines.push(fit(&theme.fg(Role::Muted, &hint)));
        lines.push(String::new());
        lines.push(rule);
        lines
    }
}

/// Asks at the terminal, before the interactive mode draws anything, which choice applies to `cwd`; the
/// question is erased afterwards. `None` when it is closed (or the terminal cannot be used).
pub fn ask_at_start(
    cwd: &Path,
    choices: &[TrustChoice],
    agent_name: &str,
    config_dir: &str,
    theme_name: Option<&str>,
) -> Option<usize> {
    let depth = ColorDepth::detect(|name| std::env::var(name).ok());
    let theme = theme_name.and_then(|name| Theme::named(name, depth)).unwrap_or_else(|| Theme::dark(depth));
    let mut selector = TrustSelector::startup(cwd, agent_name, config_dir, choices.to_vec(), theme);
    let mut terminal = ProcessTerminal::start(ScreenMode::Inline).ok()?;
    let mut renderer = DiffRenderer::new(ScreenMode::Inline);
    let answer = loop {
        let (width, height) = terminal.size();
        let frame = renderer.render(&selector.render(usize::from(width)), usize::from(width), usize::from(height));
        if terminal.write(&frame).is_err() {
            break None;
        }
        match terminal.read_input() {
            Ok(InputEvent::Key(key)) => match selector.handle_key(&key) {
                TrustOutcome::Stay => {}
                TrustOutcome::Picked(index) => break Some(index),
                TrustOutcome::Closed => break None,
            },
            Ok(_) => {}
            Err(_) => break None,
        }
    };
    let (width, height) = terminal.size();
    let _ = terminal.write(&renderer.render(&[], usize::from(width), usize::from(height)));
    terminal.stop();
    answer
}

impl App {
    /// `/trust`: opens the selector over the editor.
    pub(super) fn open_trust_selector(&mut self) {
        let Some(context) = &self.trust else { return };
        let store = TrustStore::new(&context.agent_dir);
        let saved = match store.decision(&self.cwd) {
            Ok(saved) => saved,
            Err(problem) => {
                self.transcript.notice(format!("Error: {problem}"), Role::Error);
                return;
            }
        };
        let selector = TrustSelector::command(&self.cwd, saved, context.trusted, self.theme.clone());
        self.overlay = Some(Overlay::Trust(selector));
    }

    /// A key while `/trust` is open.
    pub(super) fn on_trust_key(&mut self, mut selector: TrustSelector, key: &KeyEvent) {
        match selector.handle_key(key) {
            TrustOutcome::Stay => self.overlay = Some(Overlay::Trust(selector)),
            TrustOutcome::Closed => {}
            TrustOutcome::Picked(index) => {
                let (Some(choice), Some(context)) = (selector.choice(index), &self.trust) else { return };
                let text = match TrustStore::new(&context.agent_dir).save(&choice.updates) {
                    Ok(()) => {
                        let word = if choice.trusted { "trusted" } else { "not trusted" };
                        (
                            format!("Saved: this folder is {word} from the next start of {} on.", self.agent_name),
                            Role::Muted,
                        )
                    }
                    Err(problem) => (format!("Error: {problem}"), Role::Error),
                };
                self.transcript.notice(text.0, text.1);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use pi_tui::keys::{KeyCode, KeyModifiers};
    use pi_tui::text::strip_escapes;

    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    fn plain(lines: Vec<String>) -> Vec<String> {
        lines.iter().map(|line| strip_escapes(line).trim_end().to_owned()).collect()
    }

    #[test]
    fn the_start_question_wraps_its_explanation_and_moves_between_choices() {
        let cwd = Path::new("/nowhere/project");
        let choices = trust_choices(cwd, true);
        let mut selector = TrustSelector::startup(cwd, "pi", ".pi", choices, Theme::dark(ColorDepth::None));
        let lines = plain(selector.render(40));
        assert!(lines.iter().all(|line| pi_tui::text::visible_width(line) <= 40), "{lines:#?}");
        assert!(lines.iter().any(|line| line.contains("system prompt files.")), "wrapped, not cut: {lines:#?}");
        assert_eq!(lines.iter().filter(|line| line.is_empty()).count(), 5, "{lines:#?}");
        assert!(lines.contains(&" → Trust this folder".to_owned()), "{lines:#?}");
        assert_eq!(selector.handle_key(&key(KeyCode::Up)), TrustOutcome::Stay);
        for _ in 0..10 {
            selector.handle_key(&key(KeyCode::Down));
        }
        assert_eq!(selector.handle_key(&key(KeyCode::Enter)), TrustOutcome::Picked(4), "stops at the last choice");
        assert_eq!(selector.handle_key(&key(KeyCode::Char('k'))), TrustOutcome::Stay);
        assert_eq!(selector.handle_key(&key(KeyCode::Enter)), TrustOutcome::Picked(3));
        assert_eq!(selector.handle_key(&key(KeyCode::Esc)), TrustOutcome::Closed);
    }

    #[test]
    fn trust_marks_the_saved_choice_and_tells_where_an_inherited_decision_comes_from() {
        let cwd = Path::new("/nowhere/project");
        let saved = SavedDecision { path: "/nowhere".to_owned(), trusted: true };
        let selector = TrustSelector::command(cwd, Some(saved), false, Theme::dark(ColorDepth::None));
        let lines = plain(selector.render(80));
        assert!(lines.contains(&" Saved decision: trusted (from /nowhere)".to_owned()), "{lines:#?}");
        assert!(lines.contains(&" This session: not trusted".to_owned()), "{lines:#?}");
        assert!(lines.contains(&" → ✓ Trust the parent folder (/nowhere)".to_owned()), "{lines:#?}");
        assert!(lines.contains(&"     Do not trust".to_owned()), "{lines:#?}");
        assert!(lines.iter().any(|line| line.contains("enter save")), "{lines:#?}");
    }
}
