//! The rules the runtime applies to a skill's frontmatter (`runtime/src/prompt/skills.rs`), restated for
//! pi-gen's checks: what keeps a skill from loading, and what pi warns about at every start. The codegen
//! error model has no warnings, so both are errors; the warning-only ones say that pi would still load it.

use pi_frontmatter::{Frontmatter, FrontmatterValue, js_trim, split_frontmatter};

/// The longest name the Agent Skills spec allows (UTF-16 units, as pi counts).
const MAX_NAME_LENGTH: usize = 64;
/// The longest description the Agent Skills spec allows.
const MAX_DESCRIPTION_LENGTH: usize = 1024;
/// Said of problems that pi only warns about.
const WARNED: &str = "pi loads the skill but warns about this at every start";

/// One problem of a skill file, at the value of `key` (or at the top of the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillProblem {
    pub key: Option<&'static str>,
    pub message: String,
}

fn problem(key: Option<&'static str>, message: String) -> SkillProblem {
    SkillProblem { key, message }
}

/// What is wrong with a skill whose frontmatter parsed, in the runtime's order; `directory` names the
/// folder holding its `SKILL.md`.
pub fn skill_problems(frontmatter: &Frontmatter, directory: &str) -> Vec<SkillProblem> {
    let mut problems = Vec::new();
    let description = frontmatter.get("description");
    match description {
        Some(FrontmatterValue::String(text)) if !js_trim(text).is_empty() => {
            let length = utf16_length(text);
            if length > MAX_DESCRIPTION_LENGTH {
                let message = format!(
                    "the description has {length} characters, more than the {MAX_DESCRIPTION_LENGTH} allowed; {WARNED}"
                );
                problems.push(problem(Some("description"), message));
            }
        }
        Some(value) if value.is_truthy() && value.as_str().is_none() => {
            let message = "`description` must be text; the skill is not loaded".to_owned();
            return vec![problem(Some("description"), message)];
        }
        _ => {
            let message =
                "the skill has no `description` in its frontmatter, so it is not loaded; add one saying when to use it";
            problems.push(problem(description.map(|_| "description"), message.to_owned()));
        }
    }
    let name = match frontmatter.get("name") {
        Some(FrontmatterValue::String(text)) if !text.is_empty() => text.clone(),
        Some(value) if value.is_truthy() => {
            problems.push(problem(Some("name"), "`name` must be text; the skill is not loaded".to_owned()));
            return problems;
        }
        _ => directory.to_owned(),
    };
    let at = frontmatter.get("name").map(|_| "name");
    problems.extend(name_problems(&name, directory).into_iter().map(|message| problem(at, message)));
    problems
}

/// The Agent Skills naming rules pi warns about.
fn name_problems(name: &str, directory: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if name != directory {
        problems.push(format!("the name `{name}` differs from its folder `{directory}`; {WARNED}"));
    }
    let length = utf16_length(name);
    if length > MAX_NAME_LENGTH {
        problems.push(format!("the name has {length} characters, more than the {MAX_NAME_LENGTH} allowed; {WARNED}"));
    }
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-') {
        problems.push(format!("the name `{name}` should use only lowercase letters, digits and hyphens; {WARNED}"));
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push(format!("the name `{name}` should not begin or end with a hyphen; {WARNED}"));
    }
    if name.contains("--") {
        problems.push(format!("the name `{name}` should not contain two hyphens in a row; {WARNED}"));
    }
    problems
}

fn utf16_length(text: &str) -> usize {
    text.encode_utf16().count()
}

/// The line and column of `key`'s value in the frontmatter of `content` (the file's first line when there
/// is no key, or it is not found).
pub fn frontmatter_position(content: &str, key: Option<&str>) -> (usize, usize) {
    let (Some(key), (Some(yaml), _)) = (key, split_frontmatter(content)) else { return (1, 1) };
    for (index, line) in yaml.split('\n').enumerate() {
        if let Some(rest) = line.strip_prefix(key).and_then(|rest| rest.strip_prefix(':')) {
            let value = rest.trim_start_matches([' ', '\t']);
            let column = key.chars().count() + 1 + (rest.len() - value.len()) + 1;
            let column = if value.is_empty() { 1 } else { column };
            return (index + 2, column);
        }
    }
    (1, 1)
}
