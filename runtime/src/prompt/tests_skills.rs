//! Skills tests. The fixture trees under `fixtures/skills/*-tree.json` are materialised in a temp
//! dir; the expected skills and diagnostics (order included) were recorded by running pi 0.73.1's own
//! resource loader (`DefaultResourceLoader`) on the same trees under node.

use std::path::{Path, PathBuf};

use serde_json::Value;
use tempfile::TempDir;

use super::resources::{DiagnosticKind, ResourceDiagnostic, ResourceLocations, ResourceSource};
use super::skill_discovery::{load_skills, load_skills_from_dir};
use super::skills::{
    Skill, escape_xml, expand_skill_command, format_skills_for_prompt, load_skill_file, try_expand_skill_command,
};

const SCAN_TREE: &str = include_str!("../../fixtures/skills/scan-tree.json");
const LOCATIONS_TREE: &str = include_str!("../../fixtures/skills/locations-tree.json");
const SETTINGS_TREE: &str = include_str!("../../fixtures/skills/settings-tree.json");

/// Writes a fixture tree (`files`, `symlinks`, `dirs`) under a new temp dir; returns it and its real
/// path.
pub(super) fn materialize(tree_json: &str) -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = std::fs::canonicalize(dir.path()).expect("canonical tempdir");
    let tree: Value = serde_json::from_str(tree_json).expect("fixture JSON");
    for (path, content) in tree["files"].as_object().into_iter().flatten() {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::fs::write(&full, content.as_str().expect("file content")).expect("write");
    }
    for dir in tree["dirs"].as_array().into_iter().flatten() {
        std::fs::create_dir_all(root.join(dir.as_str().expect("dir"))).expect("mkdir");
    }
    #[cfg(unix)]
    for (path, target) in tree["symlinks"].as_object().into_iter().flatten() {
        let full = root.join(path);
        std::fs::create_dir_all(full.parent().expect("parent")).expect("mkdir");
        std::os::unix::fs::symlink(target.as_str().expect("target"), &full).expect("symlink");
    }
    (dir, root)
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).expect("under the fixture root").to_string_lossy().into_owned()
}

fn names_and_paths(root: &Path, skills: &[Skill]) -> Vec<(String, String)> {
    skills.iter().map(|skill| (skill.name.clone(), relative(root, &skill.file_path))).collect()
}

/// Diagnostics with paths relative to the root and parser messages blanked (they are our wording).
fn diagnostic_summary(root: &Path, diagnostics: &[ResourceDiagnostic]) -> Vec<(DiagnosticKind, String)> {
    diagnostics
        .iter()
        .map(|diagnostic| {
            let kind = match &diagnostic.kind {
                DiagnosticKind::InvalidFrontmatter { .. } => {
                    DiagnosticKind::InvalidFrontmatter { reason: String::new() }
                }
                DiagnosticKind::Collision { name, winner } => {
                    DiagnosticKind::Collision { name: name.clone(), winner: PathBuf::from(relative(root, winner)) }
                }
                other => other.clone(),
            };
            (kind, relative(root, &diagnostic.path))
        })
        .collect()
}

fn mismatch(name: &str, directory: &str) -> DiagnosticKind {
    DiagnosticKind::NameMismatch { name: name.to_owned(), directory: directory.to_owned() }
}

fn owned(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(a, b)| ((*a).to_owned(), (*b).to_owned())).collect()
}

fn explicit_only(root: &Path, cwd: &Path, paths: &[&str]) -> ResourceLocations {
    let mut locations = ResourceLocations::new(cwd, root.join("agent"), root.join("home"));
    locations.include_defaults = false;
    locations.cli_paths = paths.iter().map(|path| (*path).to_owned()).collect();
    locations
}

#[test]
fn scan_rules_match_pi_on_the_scan_fixture() {
    let (_guard, root) = materialize(SCAN_TREE);
    let load = load_skills(&explicit_only(&root, &root, &["skills"]));
    let long_name = "a".repeat(65);
    let expected_skills = owned(&[
        ("-edge-", "skills/-edge-/SKILL.md"),
        ("Bad_Name", "skills/bad-name/SKILL.md"),
        ("crlf", "skills/crlf/SKILL.md"),
        ("double--hyphen", "skills/double--hyphen/SKILL.md"),
        ("draft-keep", "skills/draft-keep.md"),
        ("shared", "skills/dup-a/SKILL.md"),
        ("folded", "skills/folded/SKILL.md"),
        ("hidden-model", "skills/hidden-model/SKILL.md"),
        ("long-desc", "skills/long-desc/SKILL.md"),
        (&long_name, "skills/long-name/SKILL.md"),
        ("multiline", "skills/multiline/SKILL.md"),
        ("child-skill", "skills/nested/group/child-skill/SKILL.md"),
        ("not-bool", "skills/not-bool/SKILL.md"),
        ("skills", "skills/plain-root.md"),
        ("root-note", "skills/root-note.md"),
        ("keep", "skills/sub/keep/SKILL.md"),
        ("valid-skill", "skills/valid-skill/SKILL.md"),
    ]);
    assert_eq!(names_and_paths(&root, &load.skills), expected_skills);

    let expected_diagnostics = vec![
        (DiagnosticKind::NameHyphenAtEdge, "skills/-edge-/SKILL.md"),
        (mismatch("Bad_Name", "bad-name"), "skills/bad-name/SKILL.md"),
        (DiagnosticKind::NameInvalidCharacters, "skills/bad-name/SKILL.md"),
        (DiagnosticKind::MissingDescription, "skills/blank-desc/SKILL.md"),
        (DiagnosticKind::NameConsecutiveHyphens, "skills/double--hyphen/SKILL.md"),
        (mismatch("draft-keep", "skills"), "skills/draft-keep.md"),
        (mismatch("shared", "dup-a"), "skills/dup-a/SKILL.md"),
        (mismatch("shared", "dup-b"), "skills/dup-b/SKILL.md"),
        (DiagnosticKind::InvalidFrontmatter { reason: String::new() }, "skills/invalid-yaml/SKILL.md"),
        (DiagnosticKind::DescriptionTooLong { length: 1025 }, "skills/long-desc/SKILL.md"),
        (mismatch(&long_name, "long-name"), "skills/long-name/SKILL.md"),
        (DiagnosticKind::NameTooLong { length: 65 }, "skills/long-name/SKILL.md"),
        (DiagnosticKind::MissingDescription, "skills/no-desc/SKILL.md"),
        (DiagnosticKind::MissingDescription, "skills/no-frontmatter/SKILL.md"),
        (mismatch("root-note", "skills"), "skills/root-note.md"),
        (
            DiagnosticKind::Collision { name: "shared".to_owned(), winner: PathBuf::from("skills/dup-a/SKILL.md") },
            "skills/dup-b/SKILL.md",
        ),
    ];
    let expected_diagnostics: Vec<(DiagnosticKind, String)> =
        expected_diagnostics.into_iter().map(|(kind, path)| (kind, path.to_owned())).collect();
    assert_eq!(diagnostic_summary(&root, &load.diagnostics), expected_diagnostics);
}

#[test]
fn skill_fields_match_pi_on_the_scan_fixture() {
    let (_guard, root) = materialize(SCAN_TREE);
    let load = load_skills(&explicit_only(&root, &root, &["skills"]));
    let find = |name: &str| load.skills.iter().find(|skill| skill.name == name).expect(name);
    let valid = find("valid-skill");
    assert_eq!(valid.description, "A valid skill for testing.");
    assert_eq!(valid.base_dir, root.join("skills/valid-skill"));
    assert_eq!(valid.source, ResourceSource::Path);
    assert!(!valid.disable_model_invocation);
    assert_eq!(find("multiline").description, "Line one.\nLine two.\n");
    assert_eq!(find("folded").description, "Folded one and two.\nSecond paragraph.\n");
    assert_eq!(find("crlf").description, "Windows line endings.");
    assert!(find("hidden-model").disable_model_invocation);
    assert!(!find("not-bool").disable_model_invocation, "only a YAML boolean true hides a skill");
    assert_eq!(find("long-desc").description.len(), 1025);
    let root_note = find("root-note");
    assert_eq!(root_note.base_dir, root.join("skills"));
}

#[test]
fn load_skills_from_dir_keeps_every_skill_without_collision_handling() {
    let (_guard, root) = materialize(SCAN_TREE);
    let load = load_skills_from_dir(&root.join("skills"), ResourceSource::User);
    let shared: Vec<&Skill> = load.skills.iter().filter(|skill| skill.name == "shared").collect();
    assert_eq!(shared.len(), 2);
    assert!(load.skills.iter().all(|skill| skill.source == ResourceSource::User));
    assert!(!load.diagnostics.iter().any(ResourceDiagnostic::is_collision));
    assert!(load_skills_from_dir(&root.join("does-not-exist"), ResourceSource::User).skills.is_empty());
}

#[test]
fn locations_precedence_matches_pi() {
    let (_guard, root) = materialize(LOCATIONS_TREE);
    let cwd = root.join("repo/sub");
    let mut locations = ResourceLocations::new(&cwd, root.join("agent"), root.join("home"));
    locations.cli_paths = vec![
        "../../extra/cli-skill".to_owned(),
        ".pi/skills/alpha/SKILL.md".to_owned(),
        "missing-dir".to_owned(),
        "notes.txt".to_owned(),
    ];
    let load = load_skills(&locations);
    let expected = owned(&[
        ("alpha", "repo/sub/.pi/skills/alpha/SKILL.md"),
        ("gamma", "repo/sub/.pi/skills/gamma.md"),
        ("delta", "repo/sub/.agents/skills/delta/SKILL.md"),
        ("eps", "repo/.agents/skills/eps/SKILL.md"),
        ("linked", "agent/skills/linked/SKILL.md"),
        ("skills", "agent/skills/root-user.md"),
        ("beta", "home/.agents/skills/beta/SKILL.md"),
        ("cli-skill", "extra/cli-skill/SKILL.md"),
    ]);
    assert_eq!(names_and_paths(&root, &load.skills), expected);
    let sources: Vec<ResourceSource> = load.skills.iter().map(|skill| skill.source).collect();
    use ResourceSource::{Path as Explicit, Project, User};
    assert_eq!(sources, vec![Project, Project, Project, Project, User, User, User, Explicit]);
    assert_eq!(load.skills[4].base_dir, root.join("agent/skills/linked"), "symlinked skill keeps its link path");

    let expected_diagnostics: Vec<(DiagnosticKind, String)> = vec![
        (mismatch("gamma", "skills"), "repo/sub/.pi/skills/gamma.md".to_owned()),
        (DiagnosticKind::PathMissing, "repo/sub/missing-dir".to_owned()),
        (DiagnosticKind::NotMarkdown, "repo/sub/notes.txt".to_owned()),
        (
            DiagnosticKind::Collision {
                name: "alpha".to_owned(),
                winner: PathBuf::from("repo/sub/.pi/skills/alpha/SKILL.md"),
            },
            "agent/skills/alpha/SKILL.md".to_owned(),
        ),
    ];
    assert_eq!(diagnostic_summary(&root, &load.diagnostics), expected_diagnostics);
}

#[test]
fn agents_dirs_stop_at_the_git_root_and_skip_home() {
    let (_guard, root) = materialize(LOCATIONS_TREE);
    // Without `.git` the walk goes up to `/`, so the `.agents` dir above the repo is found.
    std::fs::remove_dir(root.join("repo/.git")).expect("remove .git");
    let load = load_skills(&ResourceLocations::new(root.join("repo/sub"), root.join("agent"), root.join("home")));
    assert!(load.skills.iter().any(|skill| skill.name == "zeta"));
    // A cwd inside home does not list `~/.agents/skills` as a project dir (it stays a user dir).
    let load = load_skills(&ResourceLocations::new(root.join("home"), root.join("agent"), root.join("home")));
    let beta = load.skills.iter().find(|skill| skill.name == "beta").expect("beta");
    assert_eq!(beta.source, ResourceSource::User);
}

#[test]
fn no_defaults_loads_only_explicit_paths() {
    let (_guard, root) = materialize(LOCATIONS_TREE);
    let load = load_skills(&explicit_only(&root, &root.join("repo/sub"), &["../../extra/cli-skill/SKILL.md"]));
    assert_eq!(names_and_paths(&root, &load.skills), owned(&[("cli-skill", "extra/cli-skill/SKILL.md")]));
    assert!(load.diagnostics.is_empty());
}

#[test]
fn tilde_paths_expand_against_the_given_home() {
    let (_guard, root) = materialize(LOCATIONS_TREE);
    let load = load_skills(&explicit_only(&root, &root, &["~/.agents/skills"]));
    // An explicit directory is scanned with the root-file rule on, unlike auto-discovery.
    assert_eq!(
        names_and_paths(&root, &load.skills),
        owned(&[("beta", "home/.agents/skills/beta/SKILL.md"), ("root-agents", "home/.agents/skills/root-agents.md")])
    );
}

#[test]
fn settings_entries_and_overrides_match_pi() {
    let (_guard, root) = materialize(SETTINGS_TREE);
    let mut locations = ResourceLocations::new(root.join("project"), root.join("agent"), root.join("home"));
    locations.user_settings = ["../library", "lib-*", "-skills/two", "!off-*"].map(str::to_owned).to_vec();
    locations.project_settings = ["./local-skills", "!**/hidden-*"].map(str::to_owned).to_vec();
    let load = load_skills(&locations);
    let expected = owned(&[
        ("local-one", "project/.pi/local-skills/local-one/SKILL.md"),
        ("auto-one", "project/.pi/skills/auto-one/SKILL.md"),
        ("lib-a", "library/lib-a/SKILL.md"),
        ("lib-b", "library/lib-b.md"),
        ("one", "agent/skills/one/SKILL.md"),
    ]);
    assert_eq!(names_and_paths(&root, &load.skills), expected);
    let sources: Vec<ResourceSource> = load.skills.iter().map(|skill| skill.source).collect();
    use ResourceSource::{Project, User};
    assert_eq!(sources, vec![Project, Project, User, User, User]);
    assert_eq!(
        diagnostic_summary(&root, &load.diagnostics),
        vec![(mismatch("lib-b", "library"), "library/lib-b.md".to_owned())]
    );
}

#[cfg(unix)]
#[test]
fn symlink_loops_terminate_and_duplicates_are_dropped_silently() {
    let (_guard, root) = materialize(LOCATIONS_TREE);
    let skills_dir = root.join("repo/sub/.pi/skills");
    // `loop/self -> ..` points back at the skills dir; a second link reaches alpha by another path.
    std::os::unix::fs::symlink(skills_dir.join("alpha"), skills_dir.join("alias")).expect("symlink");
    let load = load_skills(&explicit_only(&root, &root.join("repo/sub"), &[".pi/skills"]));
    let names: Vec<&str> = load.skills.iter().map(|skill| skill.name.as_str()).collect();
    // `alias` sorts first and takes the directory name; alpha/SKILL.md is the same file, so it is
    // dropped without a collision (pi gives the same two skills).
    assert_eq!(names, vec!["alias", "gamma"]);
    assert!(!load.diagnostics.iter().any(ResourceDiagnostic::is_collision));
    // An explicit path inside the project skills dir counts as a project skill, as in pi.
    assert!(load.skills.iter().all(|skill| skill.source == ResourceSource::Project));
}

#[test]
fn skill_file_without_description_or_with_bad_types_is_skipped() {
    let dir = tempfile::tempdir().expect("tempdir");
    let write = |name: &str, content: &str| {
        let path = dir.path().join(name).join("SKILL.md");
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(&path, content).expect("write");
        path
    };
    let numeric = write("numeric", "---\ndescription: 42\n---\n");
    let (skill, diagnostics) = load_skill_file(&numeric, ResourceSource::Path);
    assert!(skill.is_none());
    assert_eq!(diagnostics[0].kind, DiagnosticKind::InvalidField { field: "description".to_owned() });
    let null_name = write("null-name", "---\nname: ~\ndescription: Name falls back.\n---\n");
    let (skill, diagnostics) = load_skill_file(&null_name, ResourceSource::Path);
    assert_eq!(skill.expect("loaded").name, "null-name");
    assert!(diagnostics.is_empty());
    let missing = dir.path().join("missing/SKILL.md");
    let (skill, diagnostics) = load_skill_file(&missing, ResourceSource::Path);
    assert!(skill.is_none());
    assert!(matches!(diagnostics[0].kind, DiagnosticKind::Unreadable { .. }));
    assert!(diagnostics[0].message().starts_with("cannot read the file"));
}

fn skill(name: &str, description: &str, file_path: &str, hidden: bool) -> Skill {
    let file_path = PathBuf::from(file_path);
    Skill {
        name: name.to_owned(),
        description: description.to_owned(),
        base_dir: file_path.parent().expect("parent").to_path_buf(),
        file_path,
        disable_model_invocation: hidden,
        source: ResourceSource::Path,
    }
}

#[test]
fn prompt_block_has_pi_layout_and_skips_hidden_skills() {
    let skills = [
        skill("skill-one", "First skill.", "/path/one/SKILL.md", false),
        skill("hidden-skill", "Hidden.", "/path/hidden/SKILL.md", true),
        skill("skill-two", "Uses <tags> & \"quotes\" 'too'.", "/path/two & more/SKILL.md", false),
    ];
    let expected = "\n\nThe following skills provide specialized instructions for specific tasks.\n\
Use the read tool to load a skill's file when the task matches its description.\n\
When a skill file references a relative path, resolve it against the skill directory.\n\
\n\
<available_skills>\n\
\x20 <skill>\n\
\x20   <name>skill-one</name>\n\
\x20   <description>First skill.</description>\n\
\x20   <location>/path/one/SKILL.md</location>\n\
\x20 </skill>\n\
\x20 <skill>\n\
\x20   <name>skill-two</name>\n\
\x20   <description>Uses &lt;tags&gt; &amp; &quot;quotes&quot; &apos;too&apos;.</description>\n\
\x20   <location>/path/two &amp; more/SKILL.md</location>\n\
\x20 </skill>\n\
</available_skills>";
    assert_eq!(format_skills_for_prompt(&skills), expected);
}

#[test]
fn prompt_block_is_empty_without_visible_skills() {
    assert_eq!(format_skills_for_prompt(&[]), "");
    assert_eq!(format_skills_for_prompt(&[skill("h", "Hidden.", "/h/SKILL.md", true)]), "");
}

#[test]
fn xml_escaping_covers_all_five_characters() {
    assert_eq!(escape_xml(r#"a&b<c>d"e'f"#), "a&amp;b&lt;c&gt;d&quot;e&apos;f");
    assert_eq!(escape_xml("&amp;"), "&amp;amp;", "escaping is not idempotent, as in pi");
}

/// Values recorded from pi 0.73.1 (`pi -p "/skill:alpha   some  args  "` against a mock server).
#[test]
fn skill_command_expansion_matches_pi() {
    let dir = tempfile::tempdir().expect("tempdir");
    let base = dir.path().join("alpha");
    std::fs::create_dir_all(&base).expect("mkdir");
    let file = base.join("SKILL.md");
    std::fs::write(&file, "---\ndescription: project alpha\n---\n\n  proj body line\n\nsecond  \n\n").expect("write");
    let skills = [skill("alpha", "project alpha", &file.to_string_lossy(), false)];
    let block = format!(
        "<skill name=\"alpha\" location=\"{}\">\nReferences are relative to {}.\n\nproj body line\n\nsecond\n</skill>",
        file.display(),
        base.display()
    );
    assert_eq!(expand_skill_command("/skill:alpha   some  args  ", &skills), Some(format!("{block}\n\nsome  args")));
    assert_eq!(expand_skill_command("/skill:alpha", &skills), Some(block.clone()));
    assert_eq!(expand_skill_command("/skill:alpha    ", &skills), Some(block), "blank args add nothing");
    assert_eq!(expand_skill_command("/skill:nope x", &skills), None);
    assert_eq!(expand_skill_command("/skill:alpha\nnext", &skills), None, "the name ends at a space only");
    assert_eq!(expand_skill_command("skill:alpha", &skills), None);
}

#[test]
fn skill_command_with_unreadable_file_reports_an_error() {
    let skills = [skill("gone", "Missing file.", "/nonexistent/gone/SKILL.md", false)];
    assert!(matches!(
        try_expand_skill_command("/skill:gone now", &skills),
        Err(super::skills::SkillExpansionError::Read { .. })
    ));
    assert_eq!(expand_skill_command("/skill:gone now", &skills), None);
}

#[test]
fn hidden_skills_still_expand() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("SKILL.md");
    std::fs::write(&file, "No frontmatter body\r\n").expect("write");
    let skills = [skill("hidden", "Hidden.", &file.to_string_lossy(), true)];
    let expanded = expand_skill_command("/skill:hidden", &skills).expect("expands");
    assert!(expanded.ends_with("\n\nNo frontmatter body\n</skill>"), "{expanded:?}");
}
