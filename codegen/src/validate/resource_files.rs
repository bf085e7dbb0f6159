//! The skill and prompt-template files compiled into the binary, read at check time with the runtime's own
//! frontmatter reader (`pi-frontmatter`): every problem that would make a file fail to load, load wrongly,
//! or draw a warning at each start is reported in that file, as `path/to/SKILL.md:line:column: message`.

use std::path::{Path, PathBuf};

use pi_frontmatter::{FrontmatterError, parse_frontmatter};

use super::skill_rules::{frontmatter_position, skill_problems};
use crate::error::Located;
use crate::problem::{Problem, YamlPath};
use crate::spec::AgentSpec;

/// The file that makes a directory a skill (the runtime's `SKILL_FILE_NAME`).
const SKILL_FILE_NAME: &str = "SKILL.md";
/// Directories never compiled in (`lower/resources.rs`), or skipped by the runtime's skill scan.
const SKIPPED_DIRS: [&str; 2] = ["node_modules", "target"];

/// Problems in the files of `skills.dirs` and `prompts.dirs` (located in those files), and in inline
/// templates whose `content` carries its own frontmatter (located in the YAML).
pub fn resource_file_problems(spec: &AgentSpec, spec_dir: &Path, problems: &mut Vec<Problem>) -> Vec<Located> {
    let mut located = Vec::new();
    for (index, dir) in spec.skills.iter().flat_map(|skills| &skills.dirs).enumerate() {
        let root = spec_dir.join(dir);
        if root.is_dir() {
            check_skill_dir(&root, index, &mut located);
        }
    }
    for dir in spec.prompts.iter().flat_map(|prompts| &prompts.dirs) {
        for file in markdown_files(&spec_dir.join(dir)) {
            if let Some(content) = read_text(&file, &mut located)
                && let Err(error) = parse_frontmatter(&content)
            {
                located.push(frontmatter_error(&file, &error, "the template is not loaded"));
            }
        }
    }
    inline_template_problems(spec, problems);
    located
}

/// The skills the runtime finds under one compiled-in directory: a folder with `SKILL.md` is one skill
/// (not searched further); other folders are searched; `*.md` files at the top are skills too.
fn check_skill_dir(root: &Path, index: usize, located: &mut Vec<Located>) {
    let own_skill = root.join(SKILL_FILE_NAME);
    if own_skill.is_file() {
        let message = format!(
            "a {SKILL_FILE_NAME} directly in a skills dir makes the whole dir one skill, named after the folder it \
             is unpacked to (`{index}`); list the parent directory in `skills.dirs` instead"
        );
        located.push(Located::new(&own_skill, 1, 1, message));
        return;
    }
    for file in markdown_files(root) {
        let message = format!(
            "pi loads every `*.md` file directly in a skills dir as a skill named after the folder it is unpacked \
             to (`{index}`), not after this folder; move it to `<skill name>/{SKILL_FILE_NAME}`"
        );
        located.push(Located::new(&file, 1, 1, message));
    }
    let mut stack = sub_dirs(root);
    stack.reverse();
    while let Some(dir) = stack.pop() {
        let skill_file = dir.join(SKILL_FILE_NAME);
        if skill_file.is_file() {
            check_skill_file(&skill_file, &dir, located);
            continue;
        }
        let mut children = sub_dirs(&dir);
        children.reverse();
        stack.extend(children);
    }
}

fn check_skill_file(file: &Path, dir: &Path, located: &mut Vec<Located>) {
    let Some(content) = read_text(file, located) else { return };
    let frontmatter = match parse_frontmatter(&content) {
        Ok(frontmatter) => frontmatter,
        Err(error) => {
            located.push(frontmatter_error(file, &error, "the skill is not loaded"));
            return;
        }
    };
    let directory = dir.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default();
    for problem in skill_problems(&frontmatter, &directory) {
        let (line, column) = frontmatter_position(&content, problem.key);
        located.push(Located::new(file, line, column, problem.message));
    }
}

/// An inline template's `content` that opens with its own `---` block.
fn inline_template_problems(spec: &AgentSpec, problems: &mut Vec<Problem>) {
    for (index, template) in spec.prompts.iter().flat_map(|prompts| &prompts.templates).enumerate() {
        if !template.content.starts_with("---") {
            continue;
        }
        let at = YamlPath::root().key("prompts").key("templates").index(index).key("content");
        if template.description.is_some() {
            problems.push(Problem::value(
                at,
                "the content starts with a `---` frontmatter block, but `description` already gives the template \
                 one, so this block would be sent to the model as text; move its fields into the YAML",
            ));
            continue;
        }
        match parse_frontmatter(&template.content) {
            Ok(_) => {}
            Err(error) => problems.push(Problem::value(
                at,
                format!(
                    "the content's frontmatter is invalid at its line {}, column {}: {}; the template is not loaded",
                    error.line, error.column, error.reason
                ),
            )),
        }
    }
}

fn frontmatter_error(file: &Path, error: &FrontmatterError, consequence: &str) -> Located {
    Located::new(file, error.line, error.column, format!("invalid frontmatter: {}; {consequence}", error.reason))
}

fn read_text(file: &Path, located: &mut Vec<Located>) -> Option<String> {
    match std::fs::read(file) {
        Ok(bytes) => Some(String::from_utf8_lossy(&bytes).into_owned()),
        Err(error) => {
            located.push(Located::new(file, 1, 1, format!("cannot read the file: {error}")));
            None
        }
    }
}

/// Non-hidden `*.md` files directly in `dir`, sorted.
fn markdown_files(dir: &Path) -> Vec<PathBuf> {
    entries(dir).into_iter().filter(|path| path.is_file() && name_of(path).ends_with(".md")).collect()
}

/// Non-hidden subdirectories of `dir` that are compiled in, sorted.
fn sub_dirs(dir: &Path) -> Vec<PathBuf> {
    entries(dir).into_iter().filter(|path| path.is_dir() && !SKIPPED_DIRS.contains(&name_of(path).as_str())).collect()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    let Ok(read) = std::fs::read_dir(dir) else { return Vec::new() };
    let mut paths: Vec<PathBuf> =
        read.filter_map(Result::ok).map(|entry| entry.path()).filter(|path| !name_of(path).starts_with('.')).collect();
    paths.sort();
    paths
}

fn name_of(path: &Path) -> String {
    path.file_name().map(|name| name.to_string_lossy().into_owned()).unwrap_or_default()
}
