//! Frontmatter reader tests: every case of `fixtures/skills/frontmatter-cases.json`, whose expected
//! values were produced by pi's own `parseFrontmatter` (the `yaml` package) under node.

use serde_json::{Map, Value, json};

use super::frontmatter::{FrontmatterValue, parse_frontmatter, split_frontmatter, strip_frontmatter};

const CASES: &str = include_str!("../../fixtures/skills/frontmatter-cases.json");

fn number_value(text: &str) -> Value {
    let parsed = if let Some(hex) = text.strip_prefix("0x") {
        i64::from_str_radix(hex, 16).map(|value| value as f64).ok()
    } else if let Some(octal) = text.strip_prefix("0o") {
        i64::from_str_radix(octal, 8).map(|value| value as f64).ok()
    } else {
        text.parse::<f64>().ok()
    };
    json!({ "number": parsed.expect("a numeric literal") })
}

fn as_json(value: &FrontmatterValue) -> Value {
    match value {
        FrontmatterValue::Null => Value::Null,
        FrontmatterValue::Bool(flag) => Value::Bool(*flag),
        FrontmatterValue::Number(text) => number_value(text),
        FrontmatterValue::String(text) => Value::String(text.clone()),
        FrontmatterValue::Nested => Value::String("<nested>".to_owned()),
        other => panic!("a value kind this test does not know: {other:?}"),
    }
}

/// Compares numbers by value (node prints `-1500` for `-1.5e3`).
fn normalize_numbers(value: &Value) -> Value {
    match value {
        Value::Object(map) if map.contains_key("number") => {
            json!({ "number": map["number"].as_f64().expect("number") })
        }
        Value::Object(map) => Value::Object(map.iter().map(|(k, v)| (k.clone(), normalize_numbers(v))).collect()),
        other => other.clone(),
    }
}

#[test]
fn frontmatter_matches_pi_yaml_parser_on_every_fixture_case() {
    let cases: Vec<Value> = serde_json::from_str(CASES).expect("fixture JSON");
    assert!(cases.len() >= 50, "fixture has {} cases", cases.len());
    for case in cases {
        let content = case["content"].as_str().expect("content");
        let parsed = parse_frontmatter(content);
        if case.get("error").is_some() {
            assert!(parsed.is_err(), "expected an error for {content:?}, got {parsed:?}");
            continue;
        }
        let frontmatter = parsed.unwrap_or_else(|error| panic!("{content:?} failed: {error}"));
        let fields: Map<String, Value> =
            frontmatter.fields.iter().map(|(key, value)| (key.clone(), as_json(value))).collect();
        assert_eq!(
            normalize_numbers(&Value::Object(fields)),
            normalize_numbers(&case["fields"]),
            "fields of {content:?}"
        );
        assert_eq!(frontmatter.body, case["body"].as_str().expect("body"), "body of {content:?}");
    }
}

#[test]
fn frontmatter_error_names_the_file_line() {
    let error = parse_frontmatter("---\nname: ok\ndescription: broken: value\n---\n").expect_err("invalid YAML");
    assert_eq!(error.line, 3);
    assert!(error.to_string().contains("at line 3"), "{error}");
}

#[test]
fn split_frontmatter_keeps_raw_yaml_and_normalizes_line_endings() {
    let (yaml, body) = split_frontmatter("---\r\na: 1\r\nb: two\r\n---\r\nText\r\nmore\r\n");
    assert_eq!(yaml.as_deref(), Some("a: 1\nb: two"));
    assert_eq!(body, "Text\nmore");
    let (yaml, body) = split_frontmatter("plain\r\ntext");
    assert_eq!(yaml, None);
    assert_eq!(body, "plain\ntext");
}

#[test]
fn strip_frontmatter_returns_trimmed_body_or_error() {
    assert_eq!(strip_frontmatter("---\nname: a\n---\n\n  Hello  \n").expect("valid"), "Hello");
    assert!(strip_frontmatter("---\nname: [unclosed\n---\nbody").is_err());
}

#[test]
fn frontmatter_accessors_follow_javascript_truthiness() {
    let frontmatter = parse_frontmatter(
        "---\non: true\noff: false\nquoted: \"true\"\nzero: 0\nempty: ''\nlist: [a]\ntext: hi\n---\n",
    )
    .expect("valid");
    assert!(frontmatter.flag("on"));
    assert!(!frontmatter.flag("off"));
    assert!(!frontmatter.flag("quoted"), "a quoted \"true\" is a string, not a boolean");
    assert_eq!(frontmatter.text("text"), Some("hi"));
    assert_eq!(frontmatter.text("on"), None);
    let truthy = |key: &str| frontmatter.get(key).is_some_and(FrontmatterValue::is_truthy);
    assert!(truthy("on") && truthy("list") && truthy("text") && truthy("quoted"));
    assert!(!truthy("off") && !truthy("zero") && !truthy("empty") && !truthy("missing"));
}
