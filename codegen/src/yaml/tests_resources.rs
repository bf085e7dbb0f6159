//! Tests for the checks of compiled-in skill and prompt-template files: each problem located in the file
//! the author wrote, read with the runtime's frontmatter reader.

use std::path::Path;

use super::test_support::errors_in;

fn write(root: &Path, relative: &str, content: &str) {
    let path = root.join(relative);
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("mkdir");
    }
    std::fs::write(path, content).expect("write");
}

const AGENT: &str = "\
version: 1
name: a
skills:
  dirs: [skills]
prompts:
  dirs: [prompts]
";

#[test]
fn skill_and_template_files_are_checked_where_the_author_wrote_them() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "skills/changelog/SKILL.md", "---\nname: changelog\ndescription: Review: the diff\n---\nBody\n");
    write(root, "skills/release/SKILL.md", "---\nname: releases\ndescription: Cut a release.\n---\nBody\n");
    write(root, "skills/nodesc/SKILL.md", "---\nname: nodesc\n---\nBody\n");
    write(root, "skills/Bad_Name/SKILL.md", "---\ndescription: Fine.\n---\nBody\n");
    write(root, "skills/group/deep/SKILL.md", "---\nname: deep\ndescription: \"ok\" extra\n---\n");
    write(root, "skills/good/SKILL.md", "---\nname: good\ndescription: Fine.\n---\nBody\n");
    write(root, "skills/notes.md", "Loose notes\n");
    write(root, "prompts/review.md", "---\ndescription: Review: the diff\n---\nReview $1\n");
    write(root, "prompts/fine.md", "---\ndescription: \"Review: the diff\"\n---\nReview $1\n");
    let file = root.join("agent.yaml");
    let found = errors_in(&file, AGENT);
    let at = |relative: &str| root.join(relative).display().to_string();
    let expected = [
        format!(
            "{}:1:1: pi loads every `*.md` file directly in a skills dir as a skill named after the folder it is \
             unpacked to (`0`), not after this folder; move it to `<skill name>/SKILL.md`",
            at("skills/notes.md")
        ),
        format!(
            "{}:1:1: the name `Bad_Name` should use only lowercase letters, digits and hyphens; pi loads the skill \
             but warns about this at every start",
            at("skills/Bad_Name/SKILL.md")
        ),
        format!(
            "{}:3:20: invalid frontmatter: a plain value cannot contain `: `; quote the value; the skill is not loaded",
            at("skills/changelog/SKILL.md")
        ),
        format!(
            "{}:3:19: invalid frontmatter: unexpected text after a quoted value; the skill is not loaded",
            at("skills/group/deep/SKILL.md")
        ),
        format!(
            "{}:1:1: the skill has no `description` in its frontmatter, so it is not loaded; add one saying when to \
             use it",
            at("skills/nodesc/SKILL.md")
        ),
        format!(
            "{}:2:7: the name `releases` differs from its folder `release`; pi loads the skill but warns about this at \
             every start",
            at("skills/release/SKILL.md")
        ),
        format!(
            "{}:2:20: invalid frontmatter: a plain value cannot contain `: `; quote the value; the template is not \
             loaded",
            at("prompts/review.md")
        ),
    ];
    assert_eq!(found, expected);
}

#[test]
fn long_and_malformed_skill_fields_are_located_at_their_values() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    let long_name = "a".repeat(65);
    write(root, &format!("skills/{long_name}/SKILL.md"), &format!("---\ndescription: x\nname: {long_name}\n---\n"));
    write(root, "skills/long/SKILL.md", &format!("---\nname: long\ndescription:  {}\n---\n", "d".repeat(1025)));
    write(root, "skills/listed/SKILL.md", "---\nname: listed\ndescription: [a, b]\n---\n");
    write(root, "skills/x--y-/SKILL.md", "---\ndescription: ok\n---\n");
    let found = errors_in(&root.join("agent.yaml"), "version: 1\nname: a\nskills:\n  dirs: [skills]\n");
    let expected = [
        format!(
            "{}:3:7: the name has 65 characters, more than the 64 allowed; pi loads the skill but warns about this at \
             every start",
            root.join(format!("skills/{long_name}/SKILL.md")).display()
        ),
        format!(
            "{}:3:14: `description` must be text; the skill is not loaded",
            root.join("skills/listed/SKILL.md").display()
        ),
        format!(
            "{}:3:15: the description has 1025 characters, more than the 1024 allowed; pi loads the skill but warns \
             about this at every start",
            root.join("skills/long/SKILL.md").display()
        ),
        format!(
            "{}:1:1: the name `x--y-` should not begin or end with a hyphen; pi loads the skill but warns about this \
             at every start",
            root.join("skills/x--y-/SKILL.md").display()
        ),
        format!(
            "{}:1:1: the name `x--y-` should not contain two hyphens in a row; pi loads the skill but warns about this \
             at every start",
            root.join("skills/x--y-/SKILL.md").display()
        ),
    ];
    assert_eq!(found, expected);
}

#[test]
fn a_skill_file_at_the_top_of_a_skills_dir_is_refused() {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = dir.path();
    write(root, "tools/SKILL.md", "---\nname: tools\ndescription: ok\n---\n");
    let found = errors_in(&root.join("agent.yaml"), "version: 1\nname: a\nskills:\n  dirs: [tools]\n");
    let expected = format!(
        "{}:1:1: a SKILL.md directly in a skills dir makes the whole dir one skill, named after the folder it is \
         unpacked to (`0`); list the parent directory in `skills.dirs` instead",
        root.join("tools/SKILL.md").display()
    );
    assert_eq!(found, [expected]);
}

#[test]
fn inline_template_content_with_frontmatter_is_checked_in_the_yaml() {
    let yaml = "\
version: 1
name: a
prompts:
  templates:
    - name: review
      content: \"---\\ndescription: Review: the diff\\n---\\nReview $1\"
    - name: ship
      description: Ship it
      content: \"---\\nargument-hint: <tag>\\n---\\nShip $1\"
    - name: fine
      content: \"---\\ndescription: Fine\\n---\\nFine $1\"
";
    let found = errors_in(Path::new("agent.yaml"), yaml);
    assert_eq!(
        found,
        [
            "agent.yaml:6:16: prompts.templates[0].content: the content's frontmatter is invalid at its line 2, \
             column 20: a plain value cannot contain `: `; quote the value; the template is not loaded",
            "agent.yaml:9:16: prompts.templates[1].content: the content starts with a `---` frontmatter block, but \
             `description` already gives the template one, so this block would be sent to the model as text; move \
             its fields into the YAML",
        ]
    );
}
