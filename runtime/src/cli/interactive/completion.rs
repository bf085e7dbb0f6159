//! What the editor suggests: slash commands (built-in, extension, prompt templates, skills) after `/`, files
//! under the working directory after `@`, and paths on Tab.

use std::path::{Path, PathBuf};

use pi_tui::editor::{AutocompleteItem, AutocompleteProvider, CompletionTrigger, Suggestions};

use super::commands::{BUILTIN_COMMANDS, THINKING_COMMAND, TRUST_COMMAND};
use crate::agent_session::AgentSession;
use crate::cli::resources::Resources;

/// Files looked at for one `@` completion, at most.
const FILE_SCAN_LIMIT: usize = 5_000;
/// Suggestions offered at most.
const SUGGESTION_LIMIT: usize = 50;

/// The suggestion source of the interactive editor.
pub struct CommandCompletion {
    /// Name and description of every slash command, built-ins first.
    commands: Vec<(String, String)>,
    cwd: PathBuf,
}

impl CommandCompletion {
    pub fn new(session: &AgentSession, resources: &Resources, cwd: PathBuf) -> Self {
        let mut commands: Vec<(String, String)> = Vec::with_capacity(BUILTIN_COMMANDS.len() + 1);
        for (name, description) in BUILTIN_COMMANDS {
            commands.push(((*name).to_owned(), (*description).to_owned()));
            if *name == "tree" && session.agent().pi_compat().is_v1_5() {
                commands.push((THINKING_COMMAND.0.to_owned(), THINKING_COMMAND.1.to_owned()));
            }
            if *name == "fork" && session.agent().pi_compat().is_v1_5() {
                commands.push((TRUST_COMMAND.0.to_owned(), TRUST_COMMAND.1.to_owned()));
            }
        }
        for command in session.extensions().commands() {
            commands.push((command.name.clone(), command.description.clone()));
        }
        commands.extend(crate::cli::yaml_commands::command_items(&resources.commands));
        for template in &resources.templates {
            commands.push((template.name.clone(), template.description.clone()));
        }
        for skill in &resources.skills {
            commands.push((format!("skill:{}", skill.name), skill.description.clone()));
        }
        Self { commands, cwd }
    }

    fn slash(&self, line: &str, cursor: usize) -> Suggestions {
        let typed = line.get(1..cursor).unwrap_or_default().to_lowercase();
        let mut prefixed = Vec::new();
        let mut containing = Vec::new();
        for (name, description) in &self.commands {
            let lower = name.to_lowercase();
            let bucket = if lower.starts_with(&typed) {
                &mut prefixed
            } else if lower.contains(&typed) {
                &mut containing
            } else {
                continue;
            };
            let mut item = AutocompleteItem::new(format!("/{name}")).with_label(name.clone()).submitting_on_enter();
            if !description.is_empty() {
                item = item.with_description(first_line(description));
            }
            bucket.push(item);
        }
        prefixed.extend(containing);
        Suggestions { items: prefixed, replace: 0..cursor }
    }

    fn file_reference(&self, line: &str, cursor: usize) -> Suggestions {
        let start = word_start(line, cursor);
        let query = line.get(start + 1..cursor).unwrap_or_default().to_lowercase();
        let mut prefixed = Vec::new();
        let mut containing = Vec::new();
        let walker = ignore::WalkBuilder::new(&self.cwd).hidden(false).max_depth(Some(8)).build();
        for entry in walker.flatten().take(FILE_SCAN_LIMIT) {
            let Ok(relative) = entry.path().strip_prefix(&self.cwd) else { continue };
            let relative = relative.to_string_lossy().into_owned();
            if relative.is_empty() || relative.starts_with(".git/") || relative == ".git" {
                continue;
            }
            let is_dir = entry.file_type().is_some_and(|kind| kind.is_dir());
            let shown = if is_dir { format!("{relative}/") } else { relative };
            let lower = shown.to_lowercase();
            let file_name = lower.rsplit('/').find(|part| !part.is_empty()).unwrap_or_default();
            let item = AutocompleteItem::new(format!("@{shown}")).with_label(shown.clone());
            if file_name.starts_with(&query) || lower.starts_with(&query) {
                prefixed.push(item);
            } else if lower.contains(&query) {
                containing.push(item);
            }
        }
        prefixed.sort_by_key(|item| (item.label.matches('/').count(), item.label.clone()));
        prefixed.extend(containing);
        prefixed.truncate(SUGGESTION_LIMIT);
        Suggestions { items: prefixed, replace: start..cursor }
    }

    fn path(&self, line: &str, cursor: usize) -> Suggestions {
        let start = word_start(line, cursor);
        let word = line.get(start..cursor).unwrap_or_default();
        let (prefix, word) = match word.strip_prefix('@') {
            Some(rest) => ("@", rest),
            None => ("", word),
        };
        let (dir_part, name_part) = match word.rfind('/') {
            Some(at) => (&word[..=at], &word[at + 1..]),
            None => ("", word),
        };
        let dir = resolve_dir(&self.cwd, dir_part);
        let Ok(entries) = std::fs::read_dir(&dir) else { return Suggestions::default() };
        let mut items: Vec<AutocompleteItem> = entries
            .flatten()
            .filter_map(|entry| {
                let name = entry.file_name().to_string_lossy().into_owned();
                if !name.starts_with(name_part) || (name.starts_with('.') && !name_part.starts_with('.')) {
                    return None;
                }
                let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
                let shown = if is_dir { format!("{name}/") } else { name };
                Some(AutocompleteItem::new(format!("{prefix}{dir_part}{shown}")).with_label(shown))
            })
            .collect();
        items.sort_by(|a, b| a.label.cmp(&b.label));
        items.truncate(SUGGESTION_LIMIT);
        Suggestions { items, replace: start..cursor }
    }
}

impl AutocompleteProvider for CommandCompletion {
    fn suggest(&mut self, line: &str, cursor: usize, trigger: CompletionTrigger) -> Suggestions {
        let cursor = cursor.min(line.len());
        match trigger {
            CompletionTrigger::SlashCommand => self.slash(line, cursor),
            CompletionTrigger::FileReference => self.file_reference(line, cursor),
            _ => self.path(line, cursor),
        }
    }
}

/// The byte where the word ending at `cursor` starts (after the last whitespace).
fn word_start(line: &str, cursor: usize) -> usize {
    line.get(..cursor).and_then(|before| before.rfind(char::is_whitespace)).map_or(0, |at| at + 1)
}

fn resolve_dir(cwd: &Path, dir_part: &str) -> PathBuf {
    if dir_part.is_empty() {
        return cwd.to_path_buf();
    }
    let expanded = crate::cli::expand_home(Path::new(dir_part));
    if expanded.is_absolute() { expanded } else { cwd.join(expanded) }
}

fn first_line(text: &str) -> String {
    text.lines().next().unwrap_or_default().to_owned()
}
