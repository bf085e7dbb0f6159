//! Finding skills: the directory scan (a directory with `SKILL.md` is one skill; otherwise root-level
//! `*.md` files count and the scan recurses, skipping dot entries, `node_modules` and ignored paths),
//! the default locations, and `load_skills`, where the first skill of each name wins.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use super::ignore_rules::IgnoreRules;
use super::resources::{
    ConfiguredPath, DiagnosticKind, ResourceDiagnostic, ResourceLocations, ResourceSource, canonical, configured_paths,
    normalize, read_dir_sorted, relative_path,
};
use super::skills::{Skill, SkillLoad, load_skill_file};

/// The file that makes a directory a skill.
pub const SKILL_FILE_NAME: &str = "SKILL.md";

/// Loads skills from every configured location: the project config dir's `skills/`, `.agents/skills`
/// in the cwd and its ancestors (up to the git root), the agent dir's `skills/`, `~/.agents/skills`,
/// settings entries and CLI paths. Root-level `*.md` files count only in the config-dir and agent-dir
/// locations and in explicit paths. Diagnostics list load problems first, then name collisions.
pub fn load_skills(locations: &ResourceLocations) -> SkillLoad {
    let (auto_project, auto_user) = if locations.include_defaults {
        (project_skill_files(locations), user_skill_files(locations))
    } else {
        (Vec::new(), Vec::new())
    };
    let collect_dir = |dir: &Path| scan_skill_files(dir, true);
    let configured = configured_paths(locations, "skills", &collect_dir, &auto_project, &auto_user);
    let mut collector = SkillCollector::default();
    for ConfiguredPath { path, source, .. } in configured {
        load_configured_path(&path, source, &mut collector);
    }
    let mut diagnostics = collector.diagnostics;
    diagnostics.extend(collector.collisions);
    SkillLoad { skills: collector.skills, diagnostics }
}

/// Loads every skill under `dir` with the scan rules (root-level `*.md` included). Name collisions
/// are not resolved here.
pub fn load_skills_from_dir(dir: &Path, source: ResourceSource) -> SkillLoad {
    let mut load = SkillLoad::default();
    for file in scan_skill_files(dir, true) {
        let (skill, diagnostics) = load_skill_file(&file, source);
        load.diagnostics.extend(diagnostics);
        load.skills.extend(skill);
    }
    load
}

/// Keeps the first skill of each name and of each real file.
#[derive(Default)]
struct SkillCollector {
    skills: Vec<Skill>,
    real_paths: HashSet<PathBuf>,
    diagnostics: Vec<ResourceDiagnostic>,
    collisions: Vec<ResourceDiagnostic>,
}

impl SkillCollector {
    fn add(&mut self, skill: Skill) {
        let real = canonical(&skill.file_path);
        if self.real_paths.contains(&real) {
            return;
        }
        if let Some(winner) = self.skills.iter().find(|existing| existing.name == skill.name) {
            let kind = DiagnosticKind::Collision { name: skill.name.clone(), winner: winner.file_path.clone() };
            self.collisions.push(ResourceDiagnostic::new(kind, &skill.file_path));
            return;
        }
        self.real_paths.insert(real);
        self.skills.push(skill);
    }

    fn load_file(&mut self, file: &Path, source: ResourceSource) {
        let (skill, diagnostics) = load_skill_file(file, source);
        self.diagnostics.extend(diagnostics);
        if let Some(skill) = skill {
            self.add(skill);
        }
    }
}

fn load_configured_path(path: &Path, source: ResourceSource, collector: &mut SkillCollector) {
    let metadata = match std::fs::metadata(path) {
        Ok(metadata) => metadata,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            collector.diagnostics.push(ResourceDiagnostic::new(DiagnosticKind::PathMissing, path));
            return;
        }
        Err(error) => {
            let kind = DiagnosticKind::Unreadable { reason: error.to_string() };
            collector.diagnostics.push(ResourceDiagnostic::new(kind, path));
            return;
        }
    };
    if metadata.is_dir() {
        for file in scan_skill_files(path, true) {
            collector.load_file(&file, source);
        }
    } else if metadata.is_file() && path.to_string_lossy().ends_with(".md") {
        collector.load_file(path, source);
    } else {
        collector.diagnostics.push(ResourceDiagnostic::new(DiagnosticKind::NotMarkdown, path));
    }
}

/// Auto-discovered project skill files: `<cwd>/<config dir>/skills` (root `*.md` included), then
/// `.agents/skills` from the cwd up to the git root (or `/`), without `~/.agents/skills`.
fn project_skill_files(locations: &ResourceLocations) -> Vec<PathBuf> {
    let config_skills = normalize(&locations.cwd.join(&locations.config_dir_name).join("skills"));
    let mut files = scan_skill_files(&config_skills, true);
    let home_agents = normalize(&locations.home_dir.join(".agents").join("skills"));
    for dir in ancestor_agents_skill_dirs(&locations.cwd) {
        if dir != home_agents {
            files.extend(scan_skill_files(&dir, false));
        }
    }
    files
}

/// Auto-discovered user skill files: `<agent dir>/skills` (root `*.md` included) and
/// `~/.agents/skills`.
fn user_skill_files(locations: &ResourceLocations) -> Vec<PathBuf> {
    let mut files = scan_skill_files(&normalize(&locations.agent_dir.join("skills")), true);
    files.extend(scan_skill_files(&normalize(&locations.home_dir.join(".agents").join("skills")), false));
    files
}

/// `<dir>/.agents/skills` for the cwd and each ancestor, stopping at the git repository root (the
/// nearest directory holding `.git`) or the file system root.
fn ancestor_agents_skill_dirs(cwd: &Path) -> Vec<PathBuf> {
    let start = normalize(cwd);
    let git_root = start.ancestors().find(|dir| dir.join(".git").exists()).map(Path::to_path_buf);
    let mut dirs = Vec::new();
    for dir in start.ancestors() {
        dirs.push(dir.join(".agents").join("skills"));
        if git_root.as_deref() == Some(dir) {
            break;
        }
    }
    dirs
}

/// The skill files under `dir`: a directory holding `SKILL.md` yields just that file; otherwise
/// root-level `*.md` files (when `include_root_files`) and the files of subdirectories. Dot entries,
/// `node_modules` and paths ignored by `.gitignore`/`.ignore`/`.fdignore` are skipped; symlinks are
/// followed, and a directory already on the current path is not entered again.
pub(crate) fn scan_skill_files(dir: &Path, include_root_files: bool) -> Vec<PathBuf> {
    let mut scan =
        SkillScan { root: dir.to_path_buf(), rules: IgnoreRules::new(), active: Vec::new(), files: Vec::new() };
    scan.visit(dir, include_root_files);
    scan.files
}

struct SkillScan {
    root: PathBuf,
    rules: IgnoreRules,
    /// Real paths of the directories being visited (symlink loop guard).
    active: Vec<PathBuf>,
    files: Vec<PathBuf>,
}

impl SkillScan {
    fn visit(&mut self, dir: &Path, include_root_files: bool) {
        if !dir.is_dir() {
            return;
        }
        let real = canonical(dir);
        if self.active.contains(&real) {
            return;
        }
        self.active.push(real);
        self.rules.add_ignore_files(dir, &self.root);
        let entries = read_dir_sorted(dir);
        let skill_file = entries.iter().find(|entry| entry.name == SKILL_FILE_NAME);
        if let Some(entry) = skill_file.filter(|entry| entry.is_file)
            && !self.rules.is_ignored(&relative_path(&self.root, &entry.path), false)
        {
            self.files.push(entry.path.clone());
            self.active.pop();
            return;
        }
        for entry in &entries {
            if entry.name.starts_with('.') || entry.name == "node_modules" {
                continue;
            }
            let relative = relative_path(&self.root, &entry.path);
            if self.rules.is_ignored(&relative, entry.is_dir) {
                continue;
            }
            if entry.is_dir {
                self.visit(&entry.path, false);
            } else if include_root_files && entry.is_file && entry.name.ends_with(".md") {
                self.files.push(entry.path.clone());
            }
        }
        self.active.pop();
    }
}
