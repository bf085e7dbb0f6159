//! Prompt template tests: pi's own `prompt-templates.test.ts` behaviours, pi-facts section 4 cases
//! 1–3, and extra cases whose expected values were produced by running pi 0.73.1's `substituteArgs`,
//! `parseCommandArgs`, `expandPromptTemplate` and resource loader under node.

use std::path::{Path, PathBuf};

use super::resources::{DiagnosticKind, ResourceLocations, ResourceSource};
use super::templates::{
    PromptTemplate, expand_prompt_template, load_prompt_template_file, load_prompt_templates, parse_command_args,
    substitute_args,
};
use super::tests_skills::materialize;

const PROMPTS_TREE: &str = include_str!("../../fixtures/skills/prompts-tree.json");

fn args(values: &[&str]) -> Vec<String> {
    values.iter().map(|value| (*value).to_owned()).collect()
}

fn sub(content: &str, values: &[&str]) -> String {
    substitute_args(content, &args(values))
}

#[test]
fn pi_facts_acceptance_cases() {
    // Case 1.
    assert_eq!(substitute_args("$1 and ${@:2}", &parse_command_args("a \"b c\" d")), "a and b c d");
    // Case 2.
    assert_eq!(sub("${@:2:3}|$3|$9|$@", &["a", "b", "c", "d", "e"]), "b c d|c||a b c d e");
    assert_eq!(sub("${@:0}", &["a", "b", "c"]), "a b c");
    assert_eq!(sub("$0", &["a", "b"]), "");
    assert_eq!(sub("$1.5", &["a"]), "a.5");
    assert_eq!(sub("$ARGUMENTS", &["$1", "$ARGUMENTS"]), "$1 $ARGUMENTS");
    // Case 3.
    assert_eq!(parse_command_args("\"\" \" \""), args(&[" "]));
    assert_eq!(parse_command_args("\"quoted \\\"text\\\"\""), args(&["quoted \\text\\"]));
}

#[test]
fn substitute_all_argument_placeholders() {
    assert_eq!(sub("Test: $ARGUMENTS", &["a", "b", "c"]), "Test: a b c");
    assert_eq!(sub("Test: $@", &["a", "b", "c"]), "Test: a b c");
    assert_eq!(sub("$@ and $ARGUMENTS", &["x", "y", "z"]), "x y z and x y z");
    assert_eq!(sub("$ARGUMENTS and $@", &["x", "y", "z"]), "x y z and x y z");
    assert_eq!(sub("$ARGUMENTS and $ARGUMENTS", &["a", "b"]), "a b and a b");
    assert_eq!(sub("$1: $ARGUMENTS", &["prefix", "a", "b"]), "prefix: prefix a b");
    assert_eq!(
        sub("$1: $@ ($ARGUMENTS)", &["first", "second", "third"]),
        "first: first second third (first second third)"
    );
    assert_eq!(sub("Test: $ARGUMENTS", &[]), "Test: ");
    assert_eq!(sub("Test: $@", &[]), "Test: ");
    assert_eq!(sub("Test: $1", &[]), "Test: ");
    assert_eq!(sub("pre$ARGUMENTS", &["a", "b"]), "prea b");
    assert_eq!(sub("pre$@", &["a", "b"]), "prea b");
    assert_eq!(sub("$ARGUMENTS", &["a", "", "c"]), "a  c");
    assert_eq!(sub("$ARGUMENTS", &["  leading  ", "trailing  "]), "  leading   trailing  ");
    assert_eq!(sub("Prefix $ARGUMENTS suffix", &["ARGUMENTS"]), "Prefix ARGUMENTS suffix");
    assert_eq!(sub("$A $$ $ $ARGS", &["a"]), "$A $$ $ $ARGS");
    assert_eq!(sub("$arguments $Arguments $ARGUMENTS", &["a", "b"]), "$arguments $Arguments a b");
    assert_eq!(sub("$ARGUMENTS", &["日本語", "🎉", "café"]), "日本語 🎉 café");
    assert_eq!(sub("Just plain text", &["a", "b"]), "Just plain text");
    let hundred: Vec<String> = (0..100).map(|index| format!("arg{index}")).collect();
    assert_eq!(substitute_args("$ARGUMENTS", &hundred), hundred.join(" "));
}

#[test]
fn substitute_positional_placeholders() {
    assert_eq!(sub("$1 $2 $3", &["a", "b", "c"]), "a b c");
    assert_eq!(sub("$1 $2 $3 $4 $5", &["a", "b"]), "a b   ");
    assert_eq!(sub("$1$2", &["a", "b"]), "ab");
    assert_eq!(sub("$1 $2: $ARGUMENTS", &["arg100", "@user"]), "arg100 @user: arg100 @user");
    assert_eq!(sub("$1 $2", &["line1\nline2", "tab\tthere"]), "line1\nline2 tab\tthere");
    assert_eq!(sub("$1 $2 $@", &["a", "b", "c"]), "a b a b c");
    let fifteen: Vec<String> = (0..15).map(|index| format!("val{index}")).collect();
    assert_eq!(substitute_args("$10 $12 $15", &fifteen), "val9 val11 val14");
    assert_eq!(sub("$007 $01", &["a", "b", "c", "d", "e", "f", "g"]), "g a");
    assert_eq!(sub("$99999999999999999999999", &["a"]), "");
    // No escape mechanism: the backslash stays and `$100` is an (empty) placeholder.
    assert_eq!(sub("Price: \\$100", &[]), "Price: \\");
}

#[test]
fn substitute_bash_style_slices() {
    let abcd = ["a", "b", "c", "d"];
    assert_eq!(sub("${@:2}", &abcd), "b c d");
    assert_eq!(sub("${@:1}", &["a", "b", "c"]), "a b c");
    assert_eq!(sub("${@:3}", &abcd), "c d");
    assert_eq!(sub("${@:2:2}", &abcd), "b c");
    assert_eq!(sub("${@:1:1}", &["a", "b", "c"]), "a");
    assert_eq!(sub("${@:3:1}", &abcd), "c");
    assert_eq!(sub("${@:2:3}", &["a", "b", "c", "d", "e"]), "b c d");
    assert_eq!(sub("${@:99}", &["a", "b"]), "");
    assert_eq!(sub("${@:10:5}", &["a", "b"]), "");
    assert_eq!(sub("${@:2:0}", &["a", "b", "c"]), "");
    assert_eq!(sub("${@:2:99}", &["a", "b", "c"]), "b c");
    assert_eq!(sub("${@:2} vs $@", &["a", "b", "c"]), "b c vs a b c");
    assert_eq!(sub("First: ${@:1:1}, All: $@", &["x", "y", "z"]), "First: x, All: x y z");
    assert_eq!(sub("$1: ${@:2}", &["cmd", "arg1", "arg2"]), "cmd: arg1 arg2");
    assert_eq!(sub("${@:2}", &[]), "");
    assert_eq!(sub("${@:2}", &["only"]), "");
    assert_eq!(sub("${@:1:2} vs ${@:3:2}", &["a", "b", "c", "d", "e"]), "a b vs c d");
    assert_eq!(sub("prefix${@:2}suffix", &["a", "b", "c"]), "prefixb csuffix");
    assert_eq!(sub("${@:2}", &["cmd", "$100", "@user", "#tag"]), "$100 @user #tag");
    assert_eq!(
        sub("Run $1 on ${@:2:2}, then process $@", &["eslint", "file1.ts", "file2.ts", "file3.ts"]),
        "Run eslint on file1.ts file2.ts, then process eslint file1.ts file2.ts file3.ts"
    );
    let ten: Vec<String> = (1..=10).map(|index| format!("arg{index}")).collect();
    assert_eq!(substitute_args("${@:5:100}", &ten), "arg5 arg6 arg7 arg8 arg9 arg10");
    assert_eq!(sub("${@:99999999999999999999999}", &["a"]), "");
    assert_eq!(sub("${@:1:99999999999999999999999}", &["a", "b"]), "a b");
    assert_eq!(sub("${@:}", &["a"]), "${@:}");
    assert_eq!(sub("${@:1:}", &["a"]), "${@:1:}");
}

/// Each pass runs over the previous pass's output, so values inserted by an earlier pass can be
/// replaced by a later one, while values inserted by `$ARGUMENTS`/`$@` are never revisited.
#[test]
fn substitution_passes_chain_exactly_like_pi() {
    assert_eq!(sub("$@", &["$100", "$1"]), "$100 $1");
    assert_eq!(sub("$ARGUMENTS", &["$100", "$1"]), "$100 $1");
    assert_eq!(sub("${@:1}", &["${@:2}", "test"]), "${@:2} test");
    assert_eq!(sub("${@:2}", &["a", "${@:3}", "c"]), "${@:3} c");
    assert_eq!(sub("$1", &["$ARGUMENTS", "x"]), "$ARGUMENTS x");
    assert_eq!(sub("$1", &["${@:2}", "x"]), "x");
    assert_eq!(sub("$2", &["a", "$1"]), "$1");
    assert_eq!(sub("${@:2}", &["a", "$1", "$@"]), "$1 a $1 $@");
    assert_eq!(sub("$ARGUMENT $@@", &["a"]), "$ARGUMENT a@");
}

/// `$ARGUMENTS` and `$@` go through JavaScript's string `replace`, whose replacement patterns
/// (`$$`, `$&`, `` $` ``, `$'`) apply to the joined arguments.
#[test]
fn javascript_replacement_patterns_apply_to_joined_arguments() {
    assert_eq!(sub("$ARGUMENTS", &["a$$b", "$&", "x$`y", "$'"]), "a$b $ARGUMENTS xy ");
    assert_eq!(sub("pre $@ post", &["$$", "$&"]), "pre $ $@ post");
}

#[test]
fn parse_command_args_follows_pi_quoting() {
    assert_eq!(parse_command_args("a b c"), args(&["a", "b", "c"]));
    assert_eq!(parse_command_args("\"first arg\" second"), args(&["first arg", "second"]));
    assert_eq!(parse_command_args("'first arg' second"), args(&["first arg", "second"]));
    assert_eq!(parse_command_args("\"double\" 'single' \"double again\""), args(&["double", "single", "double again"]));
    assert_eq!(parse_command_args(""), Vec::<String>::new());
    assert_eq!(parse_command_args("a  b   c"), args(&["a", "b", "c"]));
    assert_eq!(parse_command_args("a\tb\tc"), args(&["a", "b", "c"]));
    assert_eq!(parse_command_args("$100 @user #tag"), args(&["$100", "@user", "#tag"]));
    assert_eq!(parse_command_args("日本語 🎉 café"), args(&["日本語", "🎉", "café"]));
    assert_eq!(parse_command_args("\"line1\nline2\" second"), args(&["line1\nline2", "second"]));
    assert_eq!(parse_command_args("a b c   "), args(&["a", "b", "c"]));
    assert_eq!(parse_command_args("   a b c"), args(&["a", "b", "c"]));
    assert_eq!(parse_command_args("a'b c'd e"), args(&["ab cd", "e"]));
    assert_eq!(parse_command_args("  x\t\ty  "), args(&["x", "y"]));
    assert_eq!(parse_command_args("'unterminated text"), args(&["unterminated text"]));
    assert_eq!(parse_command_args("a\"b\"c"), args(&["abc"]));
}

#[test]
fn parse_and_substitute_work_together() {
    let parsed = parse_command_args("Button \"onClick handler\" \"disabled support\"");
    assert_eq!(
        substitute_args("Create a React component named $1 with features: $ARGUMENTS", &parsed),
        "Create a React component named Button with features: Button onClick handler disabled support"
    );
    let features = parse_command_args("feature1 feature2 feature3");
    assert_eq!(substitute_args("Implement: $@", &features), substitute_args("Implement: $ARGUMENTS", &features));
}

fn template(name: &str, content: &str) -> PromptTemplate {
    PromptTemplate {
        name: name.to_owned(),
        description: String::new(),
        argument_hint: None,
        content: content.to_owned(),
        file_path: PathBuf::from(format!("/prompts/{name}.md")),
        source: ResourceSource::Path,
    }
}

#[test]
fn expand_prompt_template_matches_pi() {
    let templates = [template("rev", "[$1|$2|$@]")];
    assert_eq!(expand_prompt_template("/rev  x y", &templates).as_deref(), Some("[x|y|x y]"));
    assert_eq!(expand_prompt_template("/rev", &templates).as_deref(), Some("[||]"));
    assert_eq!(expand_prompt_template("/rev\tx", &templates), None, "only a space ends the name");
    assert_eq!(expand_prompt_template("/nope x", &templates), None);
    assert_eq!(expand_prompt_template("rev x", &templates), None);
}

fn relative(root: &Path, path: &Path) -> String {
    path.strip_prefix(root).expect("under root").to_string_lossy().into_owned()
}

/// Recorded from pi 0.73.1's `DefaultResourceLoader` on the same tree.
#[test]
fn loading_matches_pi_on_the_prompts_fixture() {
    let (_guard, root) = materialize(PROMPTS_TREE);
    let mut locations = ResourceLocations::new(root.join("project"), root.join("agent"), root.join("home"));
    locations.cli_paths = ["../cli/extra", "../cli/single.md", "../cli/missing.md"].map(str::to_owned).to_vec();
    let load = load_prompt_templates(&locations);
    let summary: Vec<(String, String, Option<String>, String, String)> = load
        .templates
        .iter()
        .map(|t| {
            (
                t.name.clone(),
                t.description.clone(),
                t.argument_hint.clone(),
                t.content.clone(),
                relative(&root, &t.file_path),
            )
        })
        .collect();
    let row = |name: &str, description: &str, hint: Option<&str>, content: &str, path: &str| {
        (name.to_owned(), description.to_owned(), hint.map(str::to_owned), content.to_owned(), path.to_owned())
    };
    let expected = vec![
        row(
            "blank-start",
            "  Indented first line",
            None,
            "\n\n   \n  Indented first line\nsecond\n",
            "project/.pi/prompts/blank-start.md",
        ),
        row("empty", "", None, "", "project/.pi/prompts/empty.md"),
        row(
            "exact",
            "123456789012345678901234567890123456789012345678901234567890",
            None,
            "123456789012345678901234567890123456789012345678901234567890\n",
            "project/.pi/prompts/exact.md",
        ),
        row(
            "long",
            "This first line is definitely longer than sixty characters, ...",
            None,
            "This first line is definitely longer than sixty characters, so it gets cut.\nSecond line.\n",
            "project/.pi/prompts/long.md",
        ),
        row("shared", "Project shared", None, "project version $ARGUMENTS", "project/.pi/prompts/shared.md"),
        row(
            "review",
            "Review code",
            Some("[file | #PR | PR-URL]"),
            "Review $1 carefully.\n\nFocus: ${@:2}",
            "agent/prompts/review.md",
        ),
        row(".dot", "CLI directories keep dot files.", None, "CLI directories keep dot files.\n", "cli/extra/.dot.md"),
        row("one", "Fallback from body", None, "Fallback from body", "cli/extra/one.md"),
        row("single", "Single file", None, "single $@", "cli/single.md"),
    ];
    assert_eq!(summary, expected);
    let sources: Vec<ResourceSource> = load.templates.iter().map(|t| t.source).collect();
    use ResourceSource::{Path as Explicit, Project, User};
    assert_eq!(sources, vec![Project, Project, Project, Project, Project, User, Explicit, Explicit, Explicit]);

    assert_eq!(load.diagnostics.len(), 2);
    assert_eq!(
        load.diagnostics[0].kind,
        DiagnosticKind::Collision { name: "/shared".to_owned(), winner: root.join("project/.pi/prompts/shared.md") }
    );
    assert_eq!(load.diagnostics[0].path, root.join("agent/prompts/shared.md"));
    assert_eq!(load.diagnostics[1].kind, DiagnosticKind::PathMissing);
    assert_eq!(load.diagnostics[1].path, root.join("cli/missing.md"));
}

#[test]
fn no_defaults_and_settings_entries() {
    let (_guard, root) = materialize(PROMPTS_TREE);
    let mut locations = ResourceLocations::new(root.join("project"), root.join("agent"), root.join("home"));
    locations.include_defaults = false;
    locations.cli_paths = vec!["../cli/single.md".to_owned()];
    let names: Vec<String> = load_prompt_templates(&locations).templates.into_iter().map(|t| t.name).collect();
    assert_eq!(names, vec!["single"]);

    // Settings directories are searched recursively, unlike CLI and auto-discovered ones.
    let mut locations = ResourceLocations::new(root.join("project"), root.join("agent"), root.join("home"));
    locations.user_settings = vec!["../cli".to_owned(), "!single.md".to_owned()];
    let load = load_prompt_templates(&locations);
    let names: Vec<&str> = load.templates.iter().map(|t| t.name.as_str()).collect();
    // Recorded from pi with the same `prompts` settings entries.
    assert_eq!(names, vec!["blank-start", "empty", "exact", "long", "shared", "two", "one", "review"]);
}

#[test]
fn template_file_fields() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("ship.md");
    std::fs::write(&path, "---\ndescription: Ship current work\n---\nShip it").expect("write");
    let loaded = load_prompt_template_file(&path, ResourceSource::User).expect("loads");
    assert_eq!(loaded.name, "ship");
    assert_eq!(loaded.description, "Ship current work");
    assert_eq!(loaded.argument_hint, None);
    assert_eq!(loaded.content, "Ship it");
    assert_eq!(loaded.source, ResourceSource::User);
    std::fs::write(&path, "---\ndescription: [unclosed\n---\nbody").expect("write");
    assert_eq!(load_prompt_template_file(&path, ResourceSource::User), None, "invalid YAML skips the file");
    let emoji = dir.path().join("emoji.md");
    std::fs::write(&emoji, format!("{}🎉tail", "x".repeat(59))).expect("write");
    let loaded = load_prompt_template_file(&emoji, ResourceSource::User).expect("loads");
    // pi cuts inside the surrogate pair (leaving half an emoji); a Rust string cannot hold that, so
    // the whole character is dropped. The length check still counts UTF-16 units.
    assert_eq!(loaded.description, format!("{}...", "x".repeat(59)));
}

#[test]
fn agent_paths_come_after_cli_paths_and_follow_include_defaults() {
    let root = tempfile::tempdir().expect("tempdir");
    let (cwd, agent, cli, own) =
        (root.path().join("cwd"), root.path().join("agent"), root.path().join("cli"), root.path().join("own"));
    for dir in [&cwd, &agent.join("prompts"), &cli, &own] {
        std::fs::create_dir_all(dir).expect("mkdir");
    }
    std::fs::write(agent.join("prompts/a.md"), "user a").expect("write");
    std::fs::write(cli.join("b.md"), "cli b").expect("write");
    for (name, body) in [("a.md", "own a"), ("b.md", "own b"), ("c.md", "own c")] {
        std::fs::write(own.join(name), body).expect("write");
    }
    let locations = ResourceLocations {
        cli_paths: vec![cli.to_string_lossy().into_owned()],
        agent_paths: vec![own.clone()],
        ..ResourceLocations::new(&cwd, &agent, root.path().join("home"))
    };
    let load = load_prompt_templates(&locations);
    let found: Vec<(&str, &str)> = load.templates.iter().map(|t| (t.name.as_str(), t.content.as_str())).collect();
    assert_eq!(found, [("a", "user a"), ("b", "cli b"), ("c", "own c")]);
    assert_eq!(load.templates[2].source, ResourceSource::Agent);
    assert_eq!(load.diagnostics.iter().filter(|d| matches!(d.kind, DiagnosticKind::Collision { .. })).count(), 2);
    let without_defaults = load_prompt_templates(&ResourceLocations { include_defaults: false, ..locations });
    let names: Vec<&str> = without_defaults.templates.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["b"], "only the explicit CLI path is left");
}
