//! Property tests of the prompt inputs users write: frontmatter (`split_frontmatter`, `parse_frontmatter`,
//! `strip_frontmatter`), prompt templates (`parse_command_args`, `substitute_args`,
//! `expand_prompt_template`, template files) and `/skill:name` expansion. Random and mutated text never
//! panics or hangs; errors point at a line of the file; substitution follows pi's rules. Bounded for CI;
//! `scripts/fuzz` runs more cases.

mod fuzz_support;

use std::path::PathBuf;

use fuzz_support::{apply_edits, config, tricky_text, within};
use pi_runtime::prompt::{
    FrontmatterValue, PromptTemplate, ResourceSource, Skill, load_prompt_template_file, load_skill_file,
    parse_command_args, parse_frontmatter, split_frontmatter, strip_frontmatter, substitute_args,
    try_expand_skill_command,
};
use proptest::prelude::*;
use proptest::sample::Index;

/// pi's frontmatter cases (content strings of `fixtures/skills/frontmatter-cases.json`), the mutation seeds.
fn frontmatter_seeds() -> Vec<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/skills/frontmatter-cases.json");
    let cases: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("fixture")).expect("JSON");
    cases
        .as_array()
        .expect("a list of cases")
        .iter()
        .filter_map(|case| case.get("content").and_then(serde_json::Value::as_str).map(str::to_owned))
        .collect()
}

/// JavaScript's `trim` (what pi applies to a body and to skill arguments).
fn js_trim(text: &str) -> &str {
    text.trim_matches(|c: char| (c.is_whitespace() && c != '\u{85}') || c == '\u{feff}')
}

/// Parses `content` every way on a guarded thread, checking that the three entry points agree and that an
/// error names a line of the file.
fn check_frontmatter(content: String) -> Result<(), TestCaseError> {
    let shown = content.clone();
    let lines = content.replace("\r\n", "\n").replace('\r', "\n").lines().count();
    let (split, parsed, stripped) = within(
        move || format!("{shown:?}"),
        move || (split_frontmatter(&content), parse_frontmatter(&content), strip_frontmatter(&content)),
    );
    let (_, body) = split;
    prop_assert_eq!(stripped.as_ref().map(String::as_str), parsed.as_ref().map(|parsed| parsed.body.as_str()));
    match parsed {
        Ok(parsed) => prop_assert_eq!(parsed.body, body),
        Err(error) => {
            prop_assert!((1..=lines + 1).contains(&error.line), "{error}, in a file of {lines} lines");
            prop_assert!(!error.reason.is_empty(), "{error}");
        }
    }
    Ok(())
}

/// YAML's core-schema words, which a plain scalar or key cannot be without changing type.
fn is_yaml_keyword(text: &str) -> bool {
    ["true", "false", "null"].contains(&text.to_ascii_lowercase().as_str())
}

/// One edit to a frontmatter file, in characters that matter to YAML.
fn edit() -> impl Strategy<Value = (Index, Index, String)> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            ":", ": ", "#", " #", "|", "|-", "|+", "|2", ">", ">-", "-", "- ", "'", "\"", "\\", "\n", "\r\n", "\r",
            "  ", "\t", "---", "\n---\n", "[", "]", "{", "}", ",", "&a", "*a", "!!str ", "%", "@", "`", "?", "~",
            "null", "true", "0x1F", "1e3", ".nan", "\u{feff}", "\u{85}", "\u{2028}", "é", "😀",
        ])
        .prop_map(str::to_owned),
        "[ -~]{1,4}",
    ];
    (any::<Index>(), any::<Index>(), piece)
}

/// A frontmatter of plain keys with values written in forms the reader must give back exactly.
#[derive(Debug, Clone)]
enum Written {
    Quoted(String),
    Plain(String),
    Bool(bool),
    Integer(i64),
    Null,
}

fn written() -> impl Strategy<Value = Written> {
    prop_oneof![
        "[ -~éü日本語😀]{0,20}".prop_map(Written::Quoted),
        "[a-zA-Z][a-zA-Z0-9 ._/()é日本-]{0,20}[a-zA-Z0-9)é]"
            .prop_filter("a plain string", |text| !is_yaml_keyword(text))
            .prop_map(Written::Plain),
        any::<bool>().prop_map(Written::Bool),
        any::<i64>().prop_map(Written::Integer),
        Just(Written::Null),
    ]
}

fn yaml_of(value: &Written) -> String {
    match value {
        Written::Quoted(text) => serde_json::to_string(text).expect("a string encodes"),
        Written::Plain(text) => text.clone(),
        Written::Bool(flag) => flag.to_string(),
        Written::Integer(number) => number.to_string(),
        Written::Null => String::new(),
    }
}

fn expected(value: &Written) -> FrontmatterValue {
    match value {
        Written::Quoted(text) | Written::Plain(text) => FrontmatterValue::String(text.clone()),
        Written::Bool(flag) => FrontmatterValue::Bool(*flag),
        Written::Integer(number) => FrontmatterValue::Number(number.to_string()),
        Written::Null => FrontmatterValue::Null,
    }
}

proptest! {
    #![proptest_config(config(128))]

    #[test]
    fn random_text_as_frontmatter(text in any::<String>()) {
        check_frontmatter(text.clone())?;
        check_frontmatter(format!("---\n{text}\n---\nbody"))?;
    }

    #[test]
    fn mutated_frontmatter(seed in any::<Index>(), edits in prop::collection::vec(edit(), 1..6)) {
        let seeds = frontmatter_seeds();
        check_frontmatter(apply_edits(&seeds[seed.index(seeds.len())], &edits, 3))?;
    }

    /// Keys with quoted, plain, boolean, integer and empty values, CRLF or LF, read back as written; the
    /// body after the block is trimmed.
    #[test]
    fn written_frontmatter_reads_back(
        fields in prop::collection::btree_map(
            "[a-z][a-z0-9_-]{0,10}".prop_filter("a plain key", |key| !is_yaml_keyword(key)),
            written(),
            0..6,
        ),
        body in tricky_text(10),
        crlf in any::<bool>(),
    ) {
        let yaml: String = fields.iter().map(|(key, value)| format!("{key}: {}\n", yaml_of(value))).collect();
        let mut block = format!("---\n{yaml}---\n");
        if crlf {
            block = block.replace('\n', "\r\n");
        }
        let content = block + &body;
        let parsed = parse_frontmatter(&content).map_err(|error| TestCaseError::fail(format!("{error}\n{content:?}")))?;
        let wanted: Vec<(String, FrontmatterValue)> =
            fields.iter().map(|(key, value)| (key.clone(), expected(value))).collect();
        prop_assert_eq!(parsed.fields, wanted);
        let normalized = body.replace("\r\n", "\n").replace('\r', "\n");
        prop_assert_eq!(parsed.body, js_trim(&normalized));
    }

    /// Quotes group, spaces and tabs separate, nothing else splits: unquoted words come back as they were.
    #[test]
    fn command_args_split_like_pi(words in prop::collection::vec("[^ \t'\"]{1,8}", 0..6), quoted in "[^\"]{0,12}") {
        prop_assert_eq!(parse_command_args(&words.join(" \t ")), words.clone());
        let mut with_quoted = words.clone();
        let line = format!("{} \"{quoted}\"", words.join(" "));
        if !quoted.is_empty() {
            with_quoted.push(quoted.clone());
        }
        prop_assert_eq!(parse_command_args(&line), with_quoted);
    }

    /// Templates made of text and placeholders (`$N`, `${@:N}`, `${@:N:L}`, `$@`, `$ARGUMENTS`) expand as pi
    /// expands them, for arguments without `$`.
    #[test]
    fn placeholders_expand_like_pi(
        parts in prop::collection::vec(part(), 0..10),
        args in prop::collection::vec("[^$ \t'\"]{1,6}", 0..6),
    ) {
        let template: String = parts.iter().map(Part::source).collect();
        let wanted: String = parts.iter().map(|part| part.expanded(&args)).collect();
        prop_assert_eq!(substitute_args(&template, &args), wanted);
        let templates = vec![PromptTemplate {
            name: "fuzz".into(),
            description: String::new(),
            argument_hint: None,
            content: template.clone(),
            file_path: PathBuf::from("/fuzz.md"),
            source: ResourceSource::Agent,
        }];
        let typed = format!("/fuzz {}", args.join(" "));
        let expanded = pi_runtime::prompt::expand_prompt_template(&typed, &templates);
        prop_assert_eq!(expanded, Some(substitute_args(&template, &args)));
        prop_assert_eq!(pi_runtime::prompt::expand_prompt_template("/other x", &templates), None);
    }

    /// Any content with any arguments (including `$&`, `` $` ``, `$'`, `$$`) substitutes without a panic.
    #[test]
    fn any_substitution_is_total(
        content in tricky_dollars(),
        args in prop::collection::vec(tricky_dollars(), 0..5),
        line in tricky_dollars(),
    ) {
        let shown = format!("{content:?} {args:?} {line:?}");
        within(move || shown, move || {
            let _ = substitute_args(&content, &args);
            let _ = parse_command_args(&line);
        });
    }

    /// Template and skill files with any content: loading never panics; `/skill:name args` gives the body in
    /// a `<skill>` element followed by the arguments, or a frontmatter error.
    #[test]
    fn template_and_skill_files(
        seed in any::<Index>(),
        edits in prop::collection::vec(edit(), 0..4),
        args in tricky_text(6),
    ) {
        let seeds = frontmatter_seeds();
        let content = apply_edits(&seeds[seed.index(seeds.len())], &edits, 3);
        let shown = content.clone();
        let outcome = within(move || shown, move || {
            let dir = tempfile::tempdir().expect("temp dir");
            let skill_dir = dir.path().join("fuzz-skill");
            std::fs::create_dir(&skill_dir).expect("skill dir");
            let path = skill_dir.join("SKILL.md");
            std::fs::write(&path, &content).expect("write");
            let _ = load_prompt_template_file(&path, ResourceSource::Project);
            let _ = load_skill_file(&path, ResourceSource::Project);
            let skill = Skill {
                name: "fuzz-skill".into(),
                description: "d".into(),
                file_path: path.clone(),
                base_dir: skill_dir,
                disable_model_invocation: false,
                source: ResourceSource::Project,
            };
            let typed = format!("/skill:fuzz-skill {args}");
            let expanded =
                try_expand_skill_command(&typed, std::slice::from_ref(&skill)).map_err(|error| error.to_string());
            (expanded, strip_frontmatter(&content).is_ok(), js_trim(&args).to_owned())
        });
        match outcome {
            (Ok(Some(block)), true, args) => {
                prop_assert!(block.starts_with("<skill name=\"fuzz-skill\" location=\""), "{block}");
                let tail = if args.is_empty() { "</skill>".to_owned() } else { format!("</skill>\n\n{args}") };
                prop_assert!(block.ends_with(&tail), "{block:?} does not end with {tail:?}");
            }
            (Err(error), false, _) => prop_assert!(error.contains("invalid frontmatter at line"), "{error}"),
            other => prop_assert!(false, "unexpected: {other:?}"),
        }
    }
}

/// A piece of a template.
#[derive(Debug, Clone)]
enum Part {
    Text(String),
    Positional(usize),
    From(usize),
    Slice(usize, usize),
    All,
    Arguments,
}

fn part() -> impl Strategy<Value = Part> {
    prop_oneof![
        3 => "[a-zA-Z .,!é日{}@:-]{1,6}".prop_map(Part::Text),
        2 => (0usize..8).prop_map(Part::Positional),
        1 => (0usize..8).prop_map(Part::From),
        1 => (0usize..8, 0usize..8).prop_map(|(start, length)| Part::Slice(start, length)),
        1 => Just(Part::All),
        1 => Just(Part::Arguments),
    ]
}

impl Part {
    fn source(&self) -> String {
        match self {
            // A space after `$N` keeps a following digit or text from joining the placeholder.
            Self::Text(text) => text.clone(),
            Self::Positional(n) => format!("${n} "),
            Self::From(n) => format!("${{@:{n}}}"),
            Self::Slice(n, length) => format!("${{@:{n}:{length}}}"),
            Self::All => "$@".to_owned(),
            Self::Arguments => "$ARGUMENTS".to_owned(),
        }
    }

    /// pi's expansion (`substituteArgs`): missing positions are empty, slices are clamped, 0 counts as 1.
    fn expanded(&self, args: &[String]) -> String {
        let slice = |start: usize, end: usize| {
            let start = start.saturating_sub(1).min(args.len());
            args[start..end.max(start).min(args.len())].join(" ")
        };
        match self {
            Self::Text(text) => text.clone(),
            Self::Positional(n) => {
                format!("{} ", n.checked_sub(1).and_then(|index| args.get(index)).cloned().unwrap_or_default())
            }
            Self::From(n) => slice(*n, usize::MAX),
            Self::Slice(n, length) => slice(*n, n.saturating_sub(1) + length),
            Self::All | Self::Arguments => args.join(" "),
        }
    }
}

/// Text dense in `$` patterns (JavaScript replacement patterns included) and multi-byte characters.
fn tricky_dollars() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        prop::sample::select(vec![
            "$",
            "$1",
            "$01",
            "$99999999999999999999",
            "${@:",
            "${@:0}",
            "${@:1:0}",
            "${@:2:99999999999999999999}",
            "}",
            "$@",
            "$ARGUMENTS",
            "$$",
            "$&",
            "$`",
            "$'",
            "$<x>",
            "\"",
            "'",
            " ",
            "\t",
            "é",
            "😀",
        ])
        .prop_map(str::to_owned),
        "[ -~]{1,3}",
    ];
    prop::collection::vec(piece, 0..12).prop_map(|pieces| pieces.concat())
}
