//! The types of the settings keys pi-gen reads: a value of the wrong type (`compaction: "yes"`,
//! `retry.maxRetries: "lots"`, `defaultModel: 5`) is ignored, and said so with the key's name, instead of
//! silently.

use serde_json::{Map, Value};

/// What a key must hold.
#[derive(Clone, Copy)]
enum Kind {
    Text,
    Flag,
    /// A whole number (zero or more).
    Count,
    Texts,
    Object(&'static [(&'static str, Kind)]),
}

const COMPACTION: &[(&str, Kind)] =
    &[("enabled", Kind::Flag), ("reserveTokens", Kind::Count), ("keepRecentTokens", Kind::Count)];
const RETRY_PROVIDER: &[(&str, Kind)] =
    &[("timeoutMs", Kind::Count), ("maxRetries", Kind::Count), ("maxRetryDelayMs", Kind::Count)];
const RETRY: &[(&str, Kind)] = &[
    ("enabled", Kind::Flag),
    ("maxRetries", Kind::Count),
    ("baseDelayMs", Kind::Count),
    ("maxDelayMs", Kind::Count),
    ("provider", Kind::Object(RETRY_PROVIDER)),
];
const THINKING_BUDGETS: &[(&str, Kind)] =
    &[("minimal", Kind::Count), ("low", Kind::Count), ("medium", Kind::Count), ("high", Kind::Count)];

/// The top-level keys read, with their kinds.
const KEYS: &[(&str, Kind)] = &[
    ("defaultProvider", Kind::Text),
    ("defaultModel", Kind::Text),
    ("defaultThinkingLevel", Kind::Text),
    ("steeringMode", Kind::Text),
    ("followUpMode", Kind::Text),
    ("piCompat", Kind::Text),
    ("shellPath", Kind::Text),
    ("shellCommandPrefix", Kind::Text),
    ("theme", Kind::Text),
    ("tuiMode", Kind::Text),
    ("enableSkillCommands", Kind::Flag),
    ("skills", Kind::Texts),
    ("prompts", Kind::Texts),
    ("enabledModels", Kind::Texts),
    ("compaction", Kind::Object(COMPACTION)),
    ("retry", Kind::Object(RETRY)),
    ("thinkingBudgets", Kind::Object(THINKING_BUDGETS)),
];

/// One message per key of `settings` whose value has the wrong type, naming the key by its dotted path.
pub fn type_problems(settings: &Map<String, Value>) -> Vec<String> {
    let mut problems = Vec::new();
    check_object(settings, KEYS, "", &mut problems);
    problems
}

fn check_object(object: &Map<String, Value>, keys: &[(&str, Kind)], prefix: &str, problems: &mut Vec<String>) {
    for (key, kind) in keys {
        let Some(value) = object.get(*key) else { continue };
        let path = format!("{prefix}{key}");
        match (kind, value) {
            (Kind::Text, Value::String(_)) | (Kind::Flag, Value::Bool(_)) => {}
            (Kind::Count, Value::Number(number)) if number.is_u64() => {}
            (Kind::Texts, Value::Array(items)) if items.iter().all(Value::is_string) => {}
            (Kind::Object(fields), Value::Object(inner)) => check_object(inner, fields, &format!("{path}."), problems),
            (Kind::Texts, Value::Array(_)) => {
                problems.push(format!("`{path}` should be a list of strings; the items that are not are ignored"));
            }
            (kind, value) => problems.push(format!(
                "`{path}` should be {} but is {}; it is ignored",
                expected(*kind),
                described(value)
            )),
        }
    }
}

fn expected(kind: Kind) -> &'static str {
    match kind {
        Kind::Text => "a string",
        Kind::Flag => "true or false",
        Kind::Count => "a whole number",
        Kind::Texts => "a list of strings",
        Kind::Object(_) => "an object",
    }
}

fn described(value: &Value) -> String {
    match value {
        Value::Null => "null".to_owned(),
        Value::Bool(flag) => flag.to_string(),
        Value::Number(number) => number.to_string(),
        Value::String(text) => format!("the string {text:?}"),
        Value::Array(_) => "a list".to_owned(),
        Value::Object(_) => "an object".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrong_types_are_named_by_their_path() {
        let settings: Value = serde_json::from_str(
            r#"{"defaultModel": 5, "compaction": "yes", "retry": {"maxRetries": "lots", "provider": {"timeoutMs": -1}},
                "theme": "dark", "skills": ["a", 1], "thinkingBudgets": {"low": 1000}, "unknownKey": 3}"#,
        )
        .expect("json");
        let problems = type_problems(settings.as_object().expect("object"));
        assert_eq!(
            problems,
            [
                "`defaultModel` should be a string but is 5; it is ignored",
                "`skills` should be a list of strings; the items that are not are ignored",
                "`compaction` should be an object but is the string \"yes\"; it is ignored",
                "`retry.maxRetries` should be a whole number but is the string \"lots\"; it is ignored",
                "`retry.provider.timeoutMs` should be a whole number but is -1; it is ignored",
            ]
        );
        assert!(type_problems(&Map::new()).is_empty());
    }
}
