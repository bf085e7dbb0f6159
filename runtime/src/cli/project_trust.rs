//! pi 1.5's project trust: whether a run uses the files a working folder brings along (the project's
//! `settings.json`, `mcp.json`, skills, prompt templates, themes, `SYSTEM.md`, `APPEND_SYSTEM.md` and
//! `.agents/skills` up the tree). Decisions are saved per folder in `<agent dir>/trust.json`, the closest
//! saved folder up the tree applying, and shared with pi's own processes (same file, same lock). Context
//! files (AGENTS.md) are read either way, as in pi.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::args::CliArgs;
use super::file_lock::FileLock;
use super::settings::Settings;
use crate::AgentDefinition;

/// The entries of the project config directory that make a folder ask for trust.
const PROTECTED_ENTRIES: [&str; 8] =
    ["settings.json", "mcp.json", "extensions", "skills", "prompts", "themes", "SYSTEM.md", "APPEND_SYSTEM.md"];

/// The settings key (agent directory only) that says what to do for a folder with no saved decision.
pub const DEFAULT_PROJECT_TRUST_KEY: &str = "defaultProjectTrust";

/// What happens to a folder with protected files and no saved decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DefaultProjectTrust {
    /// Ask in interactive mode; elsewhere the files are not used.
    #[default]
    Ask,
    Always,
    Never,
}

impl DefaultProjectTrust {
    /// The setting's value; `None` for anything but `ask`, `always` or `never`.
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "ask" => Some(Self::Ask),
            "always" => Some(Self::Always),
            "never" => Some(Self::Never),
            _ => None,
        }
    }
}

/// A saved decision and the folder it was saved for (the working folder or one above it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SavedDecision {
    pub path: String,
    pub trusted: bool,
}

/// One choice offered for a folder: what it means for this run and what it saves (`None` removes a
/// folder's saved decision).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustChoice {
    pub label: String,
    pub trusted: bool,
    pub updates: Vec<(PathBuf, Option<bool>)>,
    /// The folder whose saved decision this choice is (none for the session-only choices).
    pub saved_path: Option<PathBuf>,
}

/// The choices for `cwd`: trust it, trust its parent, do not trust it; with `session_only`, also the two
/// choices that save nothing.
pub fn trust_choices(cwd: &Path, session_only: bool) -> Vec<TrustChoice> {
    let folder = canonical(cwd);
    let mut choices = vec![TrustChoice {
        label: "Trust this folder".to_owned(),
        trusted: true,
        updates: vec![(folder.clone(), Some(true))],
        saved_path: Some(folder.clone()),
    }];
    if let Some(parent) = folder.parent().filter(|parent| *parent != folder) {
        choices.push(TrustChoice {
            label: format!("Trust the parent folder ({})", parent.display()),
            trusted: true,
            updates: vec![(parent.to_path_buf(), Some(true)), (folder.clone(), None)],
            saved_path: Some(parent.to_path_buf()),
        });
    }
    if session_only {
        choices.push(TrustChoice {
            label: "Trust for this session only".to_owned(),
            trusted: true,
            updates: Vec::new(),
            saved_path: None,
        });
    }
    choices.push(TrustChoice {
        label: "Do not trust".to_owned(),
        trusted: false,
        updates: vec![(folder.clone(), Some(false))],
        saved_path: Some(folder),
    });
    if session_only {
        choices.push(TrustChoice {
            label: "Do not trust for this session only".to_owned(),
            trusted: false,
            updates: Vec::new(),
            saved_path: None,
        });
    }
    choices
}

/// Whether `cwd` brings files that are used only in a trusted folder: a protected entry in its config
/// directory (`config_dir_name`), or `.agents/skills` in it or a folder above it (the user's own
/// `~/.agents/skills` aside).
pub fn has_protected_resources(cwd: &Path, config_dir_name: &str, home: &Path) -> bool {
    let folder = canonical(cwd);
    let config_dir = folder.join(config_dir_name);
    if PROTECTED_ENTRIES.iter().any(|entry| config_dir.join(entry).exists()) {
        return true;
    }
    let user_skills = canonical(home).join(".agents").join("skills");
    folder.ancestors().any(|dir| {
        let skills = dir.join(".agents").join("skills");
        skills != user_skills && skills.exists()
    })
}

/// The saved decisions, `<agent dir>/trust.json`.
#[derive(Debug, Clone)]
pub struct TrustStore {
    path: PathBuf,
}

impl TrustStore {
    pub fn new(agent_dir: &Path) -> Self {
        Self { path: agent_dir.join("trust.json") }
    }

    /// The decision saved for `cwd` or the closest folder above it.
    pub fn decision(&self, cwd: &Path) -> Result<Option<SavedDecision>, String> {
        let _lock = self.lock()?;
        let data = self.read()?;
        let folder = canonical(cwd);
        Ok(folder.ancestors().find_map(|dir| {
            let key = dir.to_string_lossy();
            match data.get(key.as_ref()) {
                Some(Value::Bool(trusted)) => Some(SavedDecision { path: key.into_owned(), trusted: *trusted }),
                _ => None,
            }
        }))
    }

    /// Saves `updates` (a `None` decision removes the folder's entry), keeping every other entry.
    pub fn save(&self, updates: &[(PathBuf, Option<bool>)]) -> Result<(), String> {
        let _lock = self.lock()?;
        let mut data = self.read()?;
        for (folder, decision) in updates {
            let key = canonical(folder).to_string_lossy().into_owned();
            match decision {
                Some(trusted) => data.insert(key, Value::Bool(*trusted)),
                None => data.remove(&key),
            };
        }
        let sorted: std::collections::BTreeMap<_, _> = data.into_iter().collect();
        let mut text = serde_json::to_string_pretty(&sorted).map_err(|error| error.to_string())?;
        text.push('\n');
        // Written beside the file and renamed over it, so a crash leaves the old file or the new one.
        let temporary = self.path.with_extension("json.tmp");
        std::fs::write(&temporary, text)
            .and_then(|()| std::fs::rename(&temporary, &self.path))
            .map_err(|error| format!("cannot write {}: {error}", self.path.display()))
    }

    fn lock(&self) -> Result<FileLock, String> {
        FileLock::acquire(&self.path).map_err(|error| format!("cannot lock {}: {error}", self.path.display()))
    }

    fn read(&self) -> Result<Map<String, Value>, String> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(text) => text,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(error) => return Err(format!("cannot read {}: {error}", self.path.display())),
        };
        let at = self.path.display();
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let value: Value = serde_json::from_str(text).map_err(|error| {
            format!("{at}:{}:{}: {error} (fix the file or remove it)", error.line(), error.column())
        })?;
        let Value::Object(map) = value else {
            return Err(format!("{at}: expected a JSON object of folder paths to true, false or null"));
        };
        if let Some((key, _)) = map.iter().find(|(_, value)| !matches!(value, Value::Bool(_) | Value::Null)) {
            return Err(format!("{at}: the value for \"{key}\" must be true, false or null"));
        }
        Ok(map)
    }
}

/// Where a folder's trust stands before anyone is asked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TrustStanding {
    Decided(bool),
    /// No flag, saved decision or setting decides: interactive mode asks, other modes do not trust.
    Ask,
}

/// What decides a folder's trust, in pi's order: `--approve` / `--no-approve`; the closest saved decision;
/// trusted when the folder brings nothing protected; `defaultProjectTrust`. A trust file that
/// cannot be read counts as no decision, with a warning.
pub fn standing(
    cwd: &Path,
    config_dir_name: &str,
    home: &Path,
    store: &TrustStore,
    flag: Option<bool>,
    default: DefaultProjectTrust,
    warnings: &mut Vec<String>,
) -> TrustStanding {
    if let Some(trusted) = flag {
        return TrustStanding::Decided(trusted);
    }
    let protected = has_protected_resources(cwd, config_dir_name, home);
    // A folder with nothing protected is trusted unless a decision says otherwise (no file: nothing to read).
    if protected || store.path.exists() {
        match store.decision(cwd) {
            Ok(Some(saved)) => return TrustStanding::Decided(saved.trusted),
            Ok(None) => {}
            Err(problem) => warnings.push(format!("ignoring saved trust decisions: {problem}")),
        }
    }
    if !protected {
        return TrustStanding::Decided(true);
    }
    match default {
        DefaultProjectTrust::Always => TrustStanding::Decided(true),
        DefaultProjectTrust::Never => TrustStanding::Decided(false),
        DefaultProjectTrust::Ask => TrustStanding::Ask,
    }
}

/// Asks the person at the terminal to pick one of the choices for a folder; `None` when they close the question.
pub type AskTrust<'a> = &'a mut dyn FnMut(&Path, &[TrustChoice]) -> Option<usize>;

/// Decides, for a run at level 1.5, whether the project's own files are used, and records it in
/// `args.project_trusted`. The level here is the one the agent directory's settings and the flag give (a
/// project cannot raise it before it is trusted); at 0.73 nothing is decided and the files are used, as
/// in pi 0.73. `ask` is the interactive question; without it an undecided folder is not trusted.
pub(super) fn decide(definition: &AgentDefinition, args: &mut CliArgs, ask: Option<AskTrust<'_>>) {
    let Ok(cwd) = std::env::current_dir() else { return };
    decide_in(definition, args, ask, &cwd);
}

/// [`decide`] for a run in `cwd` (a `serve` session's own directory).
pub(crate) fn decide_in(definition: &AgentDefinition, args: &mut CliArgs, ask: Option<AskTrust<'_>>, cwd: &Path) {
    let agent_dir = super::paths::agent_dir(definition);
    let (global, _) = Settings::load(&agent_dir, None);
    let level = args.pi_compat.or_else(|| global.global_string("piCompat").and_then(|value| value.parse().ok()));
    if !level.unwrap_or(definition.pi_compat).is_v1_5() {
        return;
    }
    let default = match global.global_string(DEFAULT_PROJECT_TRUST_KEY) {
        Some(value) => DefaultProjectTrust::parse(value).unwrap_or_else(|| {
            eprintln!("Warning: settings \"{DEFAULT_PROJECT_TRUST_KEY}\" is \"{value}\", expected ask, always or never; asking");
            DefaultProjectTrust::Ask
        }),
        None => DefaultProjectTrust::Ask,
    };
    let store = TrustStore::new(&agent_dir);
    let mut warnings = Vec::new();
    let home = super::paths::home_dir();
    let standing = standing(cwd, &definition.config_dir, &home, &store, args.trust_flag(), default, &mut warnings);
    for warning in warnings {
        eprintln!("Warning: {warning}");
    }
    let trusted = match (standing, ask) {
        (TrustStanding::Decided(trusted), _) => trusted,
        (TrustStanding::Ask, None) => false,
        (TrustStanding::Ask, Some(ask)) => {
            let choices = trust_choices(cwd, true);
            match ask(cwd, &choices).and_then(|index| choices.get(index)) {
                Some(choice) => {
                    if !choice.updates.is_empty()
                        && let Err(problem) = store.save(&choice.updates)
                    {
                        eprintln!("Warning: the trust decision was not saved: {problem}");
                    }
                    choice.trusted
                }
                None => false,
            }
        }
    };
    args.project_trusted = Some(trusted);
}

/// The path as the file system resolves it (symbolic links followed), or as given when it does not exist.
fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

#[cfg(test)]
#[path = "project_trust_tests.rs"]
mod tests;
