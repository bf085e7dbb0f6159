//! Tests for the skills and templates of a run, with the agent's compiled-in ones unpacked for real.

use std::borrow::Cow;

use super::*;
use crate::cli::embedded::COMPLETE_MARKER;
use crate::definition::{EmbeddedFile, EmbeddedResources};

fn file(path: &str, contents: String) -> EmbeddedFile {
    EmbeddedFile { path: path.to_owned(), contents: Cow::Owned(contents.into_bytes()), executable: false }
}

fn skill(name: &str, description: &str) -> String {
    format!("---\nname: {name}\ndescription: {description}\n---\nDo the {name} thing.\n")
}

/// An agent with two skills and two prompt templates compiled in.
fn definition() -> AgentDefinition {
    AgentDefinition {
        name: "scout".to_owned(),
        resources: EmbeddedResources {
            hash: "h1".to_owned(),
            files: vec![
                file("skills/0/review/SKILL.md", skill("review", "The agent's review.")),
                file("skills/0/triage/SKILL.md", skill("triage", "The agent's triage.")),
                file("prompts/0/fix.md", "---\ndescription: The agent's fix\n---\nFix $1".to_owned()),
                file("prompts/0/ship.md", "Ship it".to_owned()),
            ],
            skill_dirs: vec!["skills/0".to_owned()],
            prompt_dirs: vec!["prompts/0".to_owned()],
            source_dirs: vec![
                ("skills/0".to_owned(), "skills".to_owned()),
                ("prompts/0".to_owned(), "prompts".to_owned()),
            ],
        },
        ..AgentDefinition::default()
    }
}

struct Place {
    _dir: tempfile::TempDir,
    agent: std::path::PathBuf,
    cwd: std::path::PathBuf,
}

/// An agent directory whose user has their own `review` skill and `fix` template.
fn place() -> Place {
    let dir = tempfile::tempdir().expect("tempdir");
    let agent = dir.path().join("agent");
    let cwd = dir.path().join("project");
    std::fs::create_dir_all(agent.join("skills/review")).expect("mkdir");
    std::fs::create_dir_all(agent.join("prompts")).expect("mkdir");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    std::fs::write(agent.join("skills/review/SKILL.md"), skill("review", "The user's review.")).expect("write");
    std::fs::write(agent.join("prompts/fix.md"), "---\ndescription: The user's fix\n---\nMine $1").expect("write");
    Place { _dir: dir, agent, cwd }
}

fn args(list: &[&str]) -> CliArgs {
    crate::cli::args::parse_args(&AgentDefinition::default(), list.iter().map(|a| (*a).to_owned())).expect("parses")
}

fn load(place: &Place, definition: &AgentDefinition, list: &[&str]) -> Resources {
    load_resources(definition, &args(list), &place.agent, &place.cwd, &Settings::default())
}

fn skill_named<'a>(resources: &'a Resources, name: &str) -> Option<&'a Skill> {
    resources.skills.iter().find(|skill| skill.name == name)
}

fn template_named<'a>(resources: &'a Resources, name: &str) -> Option<&'a PromptTemplate> {
    resources.templates.iter().find(|template| template.name == name)
}

#[test]
fn the_agents_resources_are_unpacked_and_found_after_the_users() {
    let place = place();
    let definition = definition();
    let root = place.agent.join("embedded").join("scout-h1");
    let resources = load(&place, &definition, &[]);
    assert!(root.join(COMPLETE_MARKER).is_file(), "unpacked into the agent dir");

    let review = skill_named(&resources, "review").expect("review");
    assert_eq!(review.description, "The user's review.", "the user's skill wins the collision");
    let triage = skill_named(&resources, "triage").expect("the agent's own skill");
    assert_eq!(triage.file_path, root.join("skills/0/triage/SKILL.md"), "a real path the model can read");
    let fix = template_named(&resources, "fix").expect("fix");
    assert_eq!(fix.description, "The user's fix");
    assert!(template_named(&resources, "ship").is_some_and(|t| t.file_path.starts_with(&root)));
    assert_eq!(resources.expand("/ship"), "Ship it");

    // A second run reuses the unpacked files (a local edit survives) and finds the same resources.
    std::fs::write(root.join("prompts/0/ship.md"), "Ship it now").expect("edit");
    let again = load(&place, &definition, &[]);
    assert_eq!(again.expand("/ship"), "Ship it now");
    assert!(skill_named(&again, "triage").is_some());
}

#[test]
fn no_skills_and_no_prompt_templates_leave_the_agents_out_too() {
    let place = place();
    let definition = definition();
    let resources = load(&place, &definition, &["--no-skills"]);
    assert!(skill_named(&resources, "triage").is_none() && skill_named(&resources, "review").is_none());
    assert!(template_named(&resources, "ship").is_some(), "templates still load");
    let resources = load(&place, &definition, &["--no-prompt-templates"]);
    assert!(template_named(&resources, "ship").is_none() && template_named(&resources, "fix").is_none());
    assert!(skill_named(&resources, "triage").is_some(), "skills still load");
}

#[test]
fn nothing_is_unpacked_when_nothing_would_be_read() {
    let place = place();
    let definition = definition();
    let resources = load(&place, &definition, &["--no-skills", "--no-prompt-templates"]);
    assert!(resources.skills.is_empty() && resources.templates.is_empty());
    assert!(!place.agent.join("embedded").exists());
    let plain = load(&place, &AgentDefinition::default(), &[]);
    assert!(skill_named(&plain, "review").is_some());
    assert!(!place.agent.join("embedded").exists(), "an agent without resources touches nothing");
}

#[test]
fn an_agent_resource_dir_outside_the_unpack_dir_is_ignored() {
    let place = place();
    std::fs::create_dir_all(place.agent.join("outside/evil")).expect("mkdir");
    std::fs::write(place.agent.join("outside/evil/SKILL.md"), skill("evil", "Outside.")).expect("write");
    let mut definition = definition();
    // `<agent>/embedded/scout-h1/../../outside` is `<agent>/outside`.
    definition.resources.skill_dirs = vec!["../../outside".to_owned(), "skills/0".to_owned()];
    let resources = load(&place, &definition, &[]);
    assert!(skill_named(&resources, "triage").is_some());
    assert!(skill_named(&resources, "evil").is_none(), "{:?}", resources.skills);
    let triage = skill_named(&resources, "triage").expect("triage");
    assert_eq!(triage.source, crate::prompt::ResourceSource::Agent);
}

#[test]
fn warnings_about_the_agents_own_files_name_the_authors_path() {
    let place = place();
    let mut definition = definition();
    definition.resources.hash = "h2".to_owned();
    definition.resources.files.extend([
        file(
            "skills/0/changelog/SKILL.md",
            "---\nname: changelog\ndescription: Review: the diff\n---\nBody".to_owned(),
        ),
        file("skills/0/release/SKILL.md", skill("releases", "Cuts a release.")),
        file("skills/0/twin/SKILL.md", skill("triage", "A second triage.")),
    ]);
    std::fs::create_dir_all(place.agent.join("skills/broken")).expect("mkdir");
    std::fs::write(place.agent.join("skills/broken/SKILL.md"), "---\nname: broken\n---\n").expect("write");
    let (_, warnings) = collect_resources(&definition, &args(&[]), &place.agent, &place.cwd, &Settings::default());
    let user_skill = place.agent.join("skills/broken/SKILL.md");
    assert_eq!(
        warnings,
        [
            format!("{}: no description in the frontmatter, so the skill is skipped", user_skill.display()),
            "skills/changelog/SKILL.md: invalid frontmatter at line 3, column 20: a plain value cannot contain `: `; \
             quote the value"
                .to_owned(),
            "skills/release/SKILL.md: the name \"releases\" differs from the directory name \"release\"".to_owned(),
            "skills/twin/SKILL.md: the name \"triage\" differs from the directory name \"twin\"".to_owned(),
            format!(
                "skills/review/SKILL.md: \"review\" is already provided by {}, so this one is skipped",
                place.agent.join("skills/review/SKILL.md").display()
            ),
            "skills/twin/SKILL.md: \"triage\" is already provided by skills/triage/SKILL.md, so this one is skipped"
                .to_owned(),
            format!(
                "prompts/fix.md: \"/fix\" is already provided by {}, so this one is skipped",
                place.agent.join("prompts/fix.md").display()
            ),
        ]
    );
}
