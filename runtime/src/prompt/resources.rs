//! Shared plumbing for skills and prompt templates: the locations the caller hands in, where each
//! resource came from, load diagnostics, and the resolution of settings entries, auto-discovered
//! directories and CLI paths into one ordered, de-duplicated list (pi's package-manager rules).

use std::collections::HashSet;
use std::fmt;
use std::path::{Component, Path, PathBuf};

use super::ignore_rules::{GlobPattern, to_posix};

/// Where to look for skills or prompt templates. Nothing here reads the real environment: the caller
/// passes the agent directory, the home directory and the project config directory name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceLocations {
    /// The working directory (absolute).
    pub cwd: PathBuf,
    /// The agent directory (`~/.pi/agent` for pi); its `skills/` and `prompts/` are scanned.
    pub agent_dir: PathBuf,
    /// The home directory: `~/.agents/skills` and `~` expansion.
    pub home_dir: PathBuf,
    /// The project config directory name (`.pi` for pi); `<cwd>/<name>/skills|prompts` are scanned.
    pub config_dir_name: String,
    /// Scan the default locations and use the settings entries (false for `--no-skills` /
    /// `--no-prompt-templates`; CLI paths still load).
    pub include_defaults: bool,
    /// This resource's entries in the project settings (paths relative to `<cwd>/<config dir>`, globs,
    /// `!pattern`, `+path`, `-path`).
    pub project_settings: Vec<String>,
    /// This resource's entries in the user settings (relative to the agent directory).
    pub user_settings: Vec<String>,
    /// Paths given on the command line (`--skill`, `--prompt-template`), relative to the cwd.
    pub cli_paths: Vec<String>,
    /// The agent's own directories (compiled into its binary and unpacked), read after every other
    /// location so the user's resources win name collisions; skipped when `include_defaults` is false.
    pub agent_paths: Vec<PathBuf>,
    /// Discover the project's own resources (false in a folder pi 1.5's project trust keeps out).
    pub include_project: bool,
}

impl ResourceLocations {
    /// Default locations with pi's `.pi` project directory and no settings or CLI entries.
    pub fn new(cwd: impl Into<PathBuf>, agent_dir: impl Into<PathBuf>, home_dir: impl Into<PathBuf>) -> Self {
        Self {
            cwd: cwd.into(),
            agent_dir: agent_dir.into(),
            home_dir: home_dir.into(),
            config_dir_name: ".pi".to_owned(),
            include_defaults: true,
            project_settings: Vec::new(),
            user_settings: Vec::new(),
            cli_paths: Vec::new(),
            agent_paths: Vec::new(),
            include_project: true,
        }
    }

    fn project_base(&self) -> PathBuf {
        normalize(&self.cwd.join(&self.config_dir_name))
    }
}

/// Which location a skill or template was loaded from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ResourceSource {
    /// The agent directory, `~/.agents/skills`, or a user settings entry.
    User,
    /// The project config directory, `.agents/skills` in the cwd or its ancestors, or a project
    /// settings entry.
    Project,
    /// An explicit path (command line).
    Path,
    /// Compiled into the agent's binary (the YAML's skills and prompt templates).
    Agent,
}

/// A problem found while loading resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceDiagnostic {
    pub kind: DiagnosticKind,
    /// The file or path concerned.
    pub path: PathBuf,
}

impl ResourceDiagnostic {
    pub fn new(kind: DiagnosticKind, path: impl Into<PathBuf>) -> Self {
        Self { kind, path: path.into() }
    }

    /// A human-readable description.
    pub fn message(&self) -> String {
        self.kind.to_string()
    }

    /// A name collision (the resource was skipped because an earlier one has its name).
    pub fn is_collision(&self) -> bool {
        matches!(self.kind, DiagnosticKind::Collision { .. })
    }
}

/// What a diagnostic is about.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum DiagnosticKind {
    /// No (or a blank) `description`: the skill is not loaded.
    MissingDescription,
    /// The description is longer than 1024 UTF-16 units.
    DescriptionTooLong { length: usize },
    /// The skill name differs from the name of the directory holding the file.
    NameMismatch { name: String, directory: String },
    /// The skill name is longer than 64 UTF-16 units.
    NameTooLong { length: usize },
    /// The skill name uses characters other than `a-z`, `0-9` and `-`.
    NameInvalidCharacters,
    /// The skill name starts or ends with `-`.
    NameHyphenAtEdge,
    /// The skill name contains `--`.
    NameConsecutiveHyphens,
    /// A frontmatter field has a type that cannot be used (e.g. a numeric name).
    InvalidField { field: String },
    /// The frontmatter is not valid YAML.
    InvalidFrontmatter { reason: String },
    /// The file could not be read.
    Unreadable { reason: String },
    /// A configured path does not exist.
    PathMissing,
    /// A configured path is a file that is not markdown.
    NotMarkdown,
    /// Another resource already uses this name; this one was skipped.
    Collision { name: String, winner: PathBuf },
}

impl fmt::Display for DiagnosticKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::MissingDescription => write!(f, "no description in the frontmatter, so the skill is skipped"),
            Self::DescriptionTooLong { length } => {
                write!(f, "the description has {length} characters, more than the 1024 allowed")
            }
            Self::NameMismatch { name, directory } => {
                write!(f, "the name \"{name}\" differs from the directory name \"{directory}\"")
            }
            Self::NameTooLong { length } => write!(f, "the name has {length} characters, more than the 64 allowed"),
            Self::NameInvalidCharacters => write!(f, "the name should use only lowercase letters, digits and hyphens"),
            Self::NameHyphenAtEdge => write!(f, "the name should not begin or end with a hyphen"),
            Self::NameConsecutiveHyphens => write!(f, "the name should not contain two hyphens in a row"),
            Self::InvalidField { field } => write!(f, "the frontmatter field `{field}` has an unusable type"),
            Self::InvalidFrontmatter { reason } => write!(f, "{reason}"),
            Self::Unreadable { reason } => write!(f, "cannot read the file: {reason}"),
            Self::PathMissing => write!(f, "the path does not exist"),
            Self::NotMarkdown => write!(f, "the path is not a markdown (.md) file"),
            Self::Collision { name, winner } => {
                write!(f, "\"{name}\" is already provided by {}, so this one is skipped", winner.display())
            }
        }
    }
}

/// One entry of the ordered list a loader reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ConfiguredPath {
    pub(crate) path: PathBuf,
    pub(crate) source: ResourceSource,
    /// Given on the command line (not discovered or configured in settings).
    pub(crate) explicit: bool,
}

/// A resource candidate with pi's precedence rank (lower wins).
struct Candidate {
    path: PathBuf,
    rank: u8,
    enabled: bool,
    source: ResourceSource,
}

/// The files and directories a loader reads, in precedence order: project settings entries, project
/// auto-discovery, user settings entries, user auto-discovery, CLI paths, then the agent's own paths. `resource_dir` is the
/// resource's directory name (`skills`, `prompts`); `collect_dir` expands a directory named by a
/// settings entry; `auto_project` / `auto_user` list the auto-discovered files.
pub(crate) fn configured_paths(
    locations: &ResourceLocations,
    resource_dir: &str,
    collect_dir: &dyn Fn(&Path) -> Vec<PathBuf>,
    auto_project: &[PathBuf],
    auto_user: &[PathBuf],
) -> Vec<ConfiguredPath> {
    let mut ordered: Vec<ConfiguredPath> = Vec::new();
    if locations.include_defaults {
        let project_base = locations.project_base();
        let user_base = normalize(&locations.agent_dir);
        let home = &locations.home_dir;
        let mut candidates: Vec<Candidate> = Vec::new();
        let mut seen: HashSet<PathBuf> = HashSet::new();
        let mut add = |candidate: Candidate| {
            if seen.insert(candidate.path.clone()) {
                candidates.push(candidate);
            }
        };
        let settings = [
            (&locations.project_settings, &project_base, 0, ResourceSource::Project),
            (&locations.user_settings, &user_base, 2, ResourceSource::User),
        ];
        for (entries, base, rank, source) in settings {
            for (path, enabled) in settings_entries(entries, base, home, collect_dir) {
                add(Candidate { path, rank, enabled, source });
            }
        }
        let auto = [
            (auto_project, &locations.project_settings, &project_base, 1, ResourceSource::Project),
            (auto_user, &locations.user_settings, &user_base, 3, ResourceSource::User),
        ];
        for (paths, overrides, base, rank, source) in auto {
            let paths = if source == ResourceSource::Project && !locations.include_project { &[][..] } else { paths };
            for path in paths {
                let enabled = enabled_by_overrides(path, overrides, base);
                add(Candidate { path: path.clone(), rank, enabled, source });
            }
        }
        candidates.sort_by_key(|candidate| candidate.rank);
        let mut canonical_seen: HashSet<PathBuf> = HashSet::new();
        for candidate in candidates {
            if canonical_seen.insert(canonical(&candidate.path)) && candidate.enabled {
                ordered.push(ConfiguredPath { path: candidate.path, source: candidate.source, explicit: false });
            }
        }
    }
    for raw in &locations.cli_paths {
        let path = resolve_user_path(raw, &locations.cwd, &locations.home_dir);
        let source = explicit_path_source(&path, locations, resource_dir);
        ordered.push(ConfiguredPath { path, source, explicit: true });
    }
    if locations.include_defaults {
        for path in &locations.agent_paths {
            ordered.push(ConfiguredPath { path: normalize(path), source: ResourceSource::Agent, explicit: false });
        }
    }
    let mut merged_seen: HashSet<PathBuf> = HashSet::new();
    ordered.retain(|entry| merged_seen.insert(canonical(&entry.path)));
    ordered
}

/// A CLI path inside the agent or project resource directory counts as user or project, as in pi.
fn explicit_path_source(path: &Path, locations: &ResourceLocations, resource_dir: &str) -> ResourceSource {
    if path.starts_with(normalize(&locations.agent_dir.join(resource_dir))) {
        ResourceSource::User
    } else if path.starts_with(locations.project_base().join(resource_dir)) {
        ResourceSource::Project
    } else {
        ResourceSource::Path
    }
}

/// Expands one settings list: plain entries name files or directories (relative to `base`), the
/// rest are include globs or `!`/`+`/`-` overrides applied to what the plain entries found.
fn settings_entries(
    entries: &[String],
    base: &Path,
    home: &Path,
    collect_dir: &dyn Fn(&Path) -> Vec<PathBuf>,
) -> Vec<(PathBuf, bool)> {
    let (patterns, plain): (Vec<&String>, Vec<&String>) = entries.iter().partition(|entry| is_pattern(entry));
    let mut files: Vec<PathBuf> = Vec::new();
    for entry in plain {
        let path = resolve_user_path(entry, base, home);
        match std::fs::metadata(&path) {
            Ok(metadata) if metadata.is_file() => files.push(path),
            Ok(metadata) if metadata.is_dir() => files.extend(collect_dir(&path)),
            _ => {}
        }
    }
    let includes: Vec<&str> = patterns.iter().filter(|p| !p.starts_with(['!', '+', '-'])).map(|p| p.as_str()).collect();
    let prefixed =
        |prefix: char| -> Vec<&str> { patterns.iter().filter_map(|pattern| pattern.strip_prefix(prefix)).collect() };
    let (excludes, force_includes, force_excludes) = (prefixed('!'), prefixed('+'), prefixed('-'));
    files
        .into_iter()
        .map(|file| {
            let mut enabled = includes.is_empty() || matches_any_pattern(&file, &includes, base);
            if enabled && matches_any_pattern(&file, &excludes, base) {
                enabled = false;
            }
            if !enabled && matches_any_exact(&file, &force_includes, base) {
                enabled = true;
            }
            if matches_any_exact(&file, &force_excludes, base) {
                enabled = false;
            }
            (file, enabled)
        })
        .collect()
}

fn is_pattern(entry: &str) -> bool {
    entry.starts_with(['!', '+', '-']) || entry.contains(['*', '?'])
}

/// Applies the `!`/`+`/`-` settings overrides to an auto-discovered file.
fn enabled_by_overrides(path: &Path, entries: &[String], base: &Path) -> bool {
    let prefixed =
        |prefix: char| -> Vec<&str> { entries.iter().filter_map(|entry| entry.strip_prefix(prefix)).collect() };
    let mut enabled = !matches_any_pattern(path, &prefixed('!'), base);
    if matches_any_exact(path, &prefixed('+'), base) {
        enabled = true;
    }
    if matches_any_exact(path, &prefixed('-'), base) {
        enabled = false;
    }
    enabled
}

/// The forms of a file's path that settings patterns are compared with: relative to the base, the
/// file name and the absolute path, plus the same for the directory of a `SKILL.md`.
fn match_candidates(file: &Path, base: &Path) -> (Vec<String>, Vec<String>) {
    let mut names = vec![relative_path(base, file), file_name(file), to_posix(file)];
    let mut exact = vec![relative_path(base, file), to_posix(file)];
    if file.file_name().is_some_and(|name| name == "SKILL.md")
        && let Some(parent) = file.parent()
    {
        names.extend([relative_path(base, parent), file_name(parent), to_posix(parent)]);
        exact.extend([relative_path(base, parent), to_posix(parent)]);
    }
    (names, exact)
}

fn matches_any_pattern(file: &Path, patterns: &[&str], base: &Path) -> bool {
    if patterns.is_empty() {
        return false;
    }
    let (names, _) = match_candidates(file, base);
    patterns.iter().any(|pattern| {
        let glob = GlobPattern::new(pattern);
        names.iter().any(|name| glob.is_match(name))
    })
}

fn matches_any_exact(file: &Path, patterns: &[&str], base: &Path) -> bool {
    if patterns.is_empty() {
        return false;
    }
    let (_, exact) = match_candidates(file, base);
    patterns.iter().any(|pattern| {
        let normalized = pattern.strip_prefix("./").or_else(|| pattern.strip_prefix(".\\")).unwrap_or(pattern);
        exact.iter().any(|candidate| candidate == normalized)
    })
}

fn file_name(path: &Path) -> String {
    path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
}

/// `~`, `~/x` and `~x` expand against `home`; other relative paths resolve against `base`; the result
/// is normalised like Node's `path.resolve`.
pub(crate) fn resolve_user_path(raw: &str, base: &Path, home: &Path) -> PathBuf {
    let trimmed = raw.trim();
    let expanded = if trimmed == "~" {
        home.to_path_buf()
    } else if let Some(rest) = trimmed.strip_prefix("~/") {
        home.join(rest)
    } else if let Some(rest) = trimmed.strip_prefix('~') {
        home.join(rest)
    } else {
        PathBuf::from(trimmed)
    };
    normalize(&base.join(expanded))
}

/// Removes `.` and resolves `..` lexically (no file system access).
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push(component);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// The real path, or the path itself when it cannot be resolved.
pub(crate) fn canonical(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Node's `path.relative(from, to)` with `/` separators (both paths absolute).
pub(crate) fn relative_path(from: &Path, to: &Path) -> String {
    let (from, to) = (normalize(from), normalize(to));
    let from: Vec<Component> = from.components().collect();
    let to: Vec<Component> = to.components().collect();
    let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
    let mut parts: Vec<String> = vec!["..".to_owned(); from.len() - common];
    parts.extend(to[common..].iter().map(|component| component.as_os_str().to_string_lossy().into_owned()));
    parts.join("/")
}

/// A directory entry with symlinks followed (broken links are left out).
#[derive(Debug, Clone)]
pub(crate) struct DirEntryInfo {
    pub(crate) name: String,
    pub(crate) path: PathBuf,
    pub(crate) is_dir: bool,
    pub(crate) is_file: bool,
}

/// The entries of `dir` sorted by name bytes (Node's `readdirSync` order); empty when unreadable.
pub(crate) fn read_dir_sorted(dir: &Path) -> Vec<DirEntryInfo> {
    let Ok(reader) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut entries: Vec<DirEntryInfo> = reader
        .filter_map(Result::ok)
        .filter_map(|entry| {
            let path = entry.path();
            let metadata = std::fs::metadata(&path).ok()?;
            Some(DirEntryInfo {
                name: entry.file_name().to_string_lossy().into_owned(),
                path,
                is_dir: metadata.is_dir(),
                is_file: metadata.is_file(),
            })
        })
        .collect();
    entries.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
    entries
}

/// The number of UTF-16 code units (JavaScript's `length`).
pub(crate) fn js_length(text: &str) -> usize {
    text.encode_utf16().count()
}
