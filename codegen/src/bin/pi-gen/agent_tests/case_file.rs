//! Reading a test file: YAML with `cases:`, each a prompt, the scripted model's responses and what must
//! happen. Every problem is located as `file:line:col`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;

use pi_codegen::error::{Located, SpecError};
use pi_codegen::problem::{Target, YamlPath};
use pi_codegen::yaml::locate;
use pi_runtime::testing::{MockScript, MockScriptError};

/// A test file's cases, with the file's text (for locating expectations in reports).
#[derive(Debug)]
pub struct TestFile {
    pub path: PathBuf,
    pub text: String,
    pub cases: Vec<TestCase>,
}

/// One case: what the agent is asked, what the model answers, and what must happen.
#[derive(Debug)]
pub struct TestCase {
    pub name: String,
    /// Its place in the file (`cases[2]`).
    pub at: YamlPath,
    pub prompts: Vec<String>,
    pub args: Vec<String>,
    pub env: BTreeMap<String, String>,
    /// Files written into the scratch working directory before the run (path relative to it → content).
    pub files: BTreeMap<String, String>,
    pub script: MockScript,
    pub expect: Expect,
    pub timeout_secs: u64,
}

/// What must hold after the run. Absent fields are not checked, except the exit code (0) and the number
/// of model calls (every scripted response used, no more).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    /// Every tool call, in order.
    pub tools: Option<Vec<ToolExpect>>,
    /// Tools that must not be called at all.
    #[serde(default)]
    pub not_called: Vec<String>,
    /// Files of the working directory after the run: `unchanged`, `absent`, `exists`, `{contains: text}`
    /// or `{equals: text}`.
    #[serde(default)]
    pub files: BTreeMap<String, serde_yaml::Value>,
    /// The final answer's text, exactly (surrounding whitespace ignored).
    pub answer: Option<String>,
    /// Text the final answer contains (one or a list).
    #[serde(default, deserialize_with = "one_or_many")]
    pub answer_contains: Vec<String>,
    /// Text the agent's stderr contains (one or a list).
    #[serde(default, deserialize_with = "one_or_many")]
    pub stderr_contains: Vec<String>,
    pub exit_code: Option<i32>,
    /// How many requests the model gets (default: exactly the script's responses).
    pub model_calls: Option<usize>,
}

/// One expected tool call.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolExpect {
    pub name: String,
    /// These arguments at least (objects compared key by key; other keys may be there too).
    pub arguments: Option<Value>,
    /// Text the tool's result contains.
    pub result_contains: Option<String>,
    /// Whether the result is an error.
    pub error: Option<bool>,
    /// A hook (or a permission rule) blocked the call: its result is an error, and with a text, that text is in
    /// the reason.
    pub blocked: Option<Value>,
}

/// What a file must look like after the run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileExpect {
    Unchanged,
    Absent,
    Exists,
    Contains(String),
    Equals(String),
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawFile {
    cases: Vec<RawCase>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCase {
    name: String,
    prompt: Option<String>,
    #[serde(default)]
    prompts: Vec<String>,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    #[serde(default)]
    files: BTreeMap<String, String>,
    model: Value,
    #[serde(default)]
    expect: Expect,
    timeout: Option<u64>,
}

fn one_or_many<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<Vec<String>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum OneOrMany {
        One(String),
        Many(Vec<String>),
    }
    match OneOrMany::deserialize(deserializer) {
        Ok(OneOrMany::One(text)) => Ok(vec![text]),
        Ok(OneOrMany::Many(texts)) => Ok(texts),
        Err(_) => Err(serde::de::Error::custom("expected a text or a list of texts")),
    }
}

/// The seconds a case may run when it does not say.
pub const DEFAULT_TIMEOUT_SECS: u64 = 60;

/// Reads and checks the test file at `path`.
pub fn load_test_file(path: &Path) -> Result<TestFile, SpecError> {
    let text = std::fs::read_to_string(path).map_err(|source| SpecError::Read { path: path.to_path_buf(), source })?;
    let raw: RawFile = serde_yaml::from_str(&text).map_err(|error| {
        let (line, column) = error.location().map_or((1, 1), |at| (at.line(), at.column()));
        let message = error.to_string();
        let message = message.find(" at line ").map_or(message.as_str(), |at| &message[..at]).to_owned();
        SpecError::Invalid(vec![Located::new(path, line, column, message)])
    })?;
    let base = path.parent().unwrap_or_else(|| Path::new(""));
    let mut problems = Vec::new();
    let mut cases = Vec::new();
    for (index, raw) in raw.cases.into_iter().enumerate() {
        let at = YamlPath::root().key("cases").index(index);
        let mut report = |at: &YamlPath, message: String| {
            let (line, column) = locate(&text, at, Target::Value);
            problems.push(Located::new(path, line, column, format!("{at}: {message}")));
        };
        let mut prompts = raw.prompts;
        if let Some(prompt) = raw.prompt {
            prompts.insert(0, prompt);
        }
        if prompts.is_empty() {
            report(&at, "a case needs `prompt: <text>` (or `prompts:` for several messages)".to_owned());
        }
        let script = match model_script(&raw.model, base) {
            Ok(script) => script,
            Err((item, message)) => {
                let place = item.map_or_else(|| at.key("model"), |item| at.key("model").index(item));
                report(&place, message);
                MockScript::default()
            }
        };
        for name in raw.files.keys() {
            if !is_inside(name) {
                report(&at.key("files").key(name.clone()), format!("`{name}` {OUTSIDE}"));
            }
        }
        for (name, value) in &raw.expect.files {
            if !is_inside(name) {
                report(&at.key("expect").key("files").key(name.clone()), format!("`{name}` {OUTSIDE}"));
                continue;
            }
            let place = at.key("expect").key("files").key(name.clone());
            match file_expect(value) {
                Err(message) => report(&place, message),
                Ok(FileExpect::Unchanged) if !raw.files.contains_key(name) => report(
                    &place,
                    format!("`unchanged` compares with the file as the case wrote it: add `{name}` under `files:`"),
                ),
                Ok(_) => {}
            }
        }
        for (tool, expected) in raw.expect.tools.iter().flatten().enumerate() {
            if let Some(blocked) = &expected.blocked
                && !matches!(blocked, Value::Bool(_) | Value::String(_))
            {
                let place = at.key("expect").key("tools").index(tool).key("blocked");
                report(&place, "`blocked` is true, false or a text the block reason contains".to_owned());
            }
        }
        cases.push(TestCase {
            name: raw.name,
            at,
            prompts,
            args: raw.args,
            env: raw.env,
            files: raw.files,
            script,
            expect: raw.expect,
            timeout_secs: raw.timeout.unwrap_or(DEFAULT_TIMEOUT_SECS),
        });
    }
    if !problems.is_empty() {
        return Err(SpecError::Invalid(problems));
    }
    Ok(TestFile { path: path.to_path_buf(), text, cases })
}

const OUTSIDE: &str = "is not a path inside the working directory; use a relative path without `..`";

/// Whether `path` names a place inside the case's working directory.
fn is_inside(path: &str) -> bool {
    let path = Path::new(path);
    !path.as_os_str().is_empty()
        && path.components().all(|component| matches!(component, std::path::Component::Normal(_)))
}

/// The mock script of a case: a list of responses, or the path of a script file (relative to the test file),
/// such as one `--record` wrote. An error names the response (its index) it is about, when it is one.
fn model_script(model: &Value, base: &Path) -> Result<MockScript, (Option<usize>, String)> {
    match model {
        Value::String(file) => MockScript::from_file(&base.join(file)).map_err(|error| (None, error.to_string())),
        Value::Array(responses) => {
            // Each response alone first, so an error points at its item.
            for (index, response) in responses.iter().enumerate() {
                let single = Value::Array(vec![response.clone()]).to_string();
                match MockScript::from_json_str(&single) {
                    Err(MockScriptError::Json { message, .. } | MockScriptError::Invalid { message, .. }) => {
                        return Err((Some(index), message));
                    }
                    Err(other) => return Err((Some(index), other.to_string())),
                    Ok(_) => {}
                }
            }
            MockScript::from_json_str(&model.to_string()).map_err(|error| (None, error.to_string()))
        }
        _ => Err((None, "`model` is a list of scripted responses or the path of a script file".to_owned())),
    }
}

/// A file expectation from its YAML value.
pub fn file_expect(value: &serde_yaml::Value) -> Result<FileExpect, String> {
    let wanted = "`unchanged`, `absent`, `exists`, `{contains: <text>}` or `{equals: <text>}`";
    match value {
        serde_yaml::Value::String(word) => match word.as_str() {
            "unchanged" => Ok(FileExpect::Unchanged),
            "absent" => Ok(FileExpect::Absent),
            "exists" => Ok(FileExpect::Exists),
            other => Err(format!("\"{other}\" is not a file expectation; use {wanted}")),
        },
        serde_yaml::Value::Mapping(map) if map.len() == 1 => {
            let (key, text) = map.iter().next().ok_or_else(|| wanted.to_owned())?;
            let text = text.as_str().ok_or_else(|| format!("the text to compare is a string; use {wanted}"))?;
            match key.as_str() {
                Some("contains") => Ok(FileExpect::Contains(text.to_owned())),
                Some("equals") => Ok(FileExpect::Equals(text.to_owned())),
                _ => Err(format!("not a file expectation; use {wanted}")),
            }
        }
        _ => Err(format!("not a file expectation; use {wanted}")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("cases.yaml");
        std::fs::write(&path, text).expect("write");
        match load_test_file(&path) {
            Ok(_) => Vec::new(),
            Err(SpecError::Invalid(located)) => located
                .iter()
                .map(|problem| format!("{}:{}: {}", problem.line, problem.column, problem.message))
                .collect(),
            Err(other) => vec![other.to_string()],
        }
    }

    #[test]
    fn files_stay_inside_the_working_directory() {
        assert!(is_inside("src/main.rs") && is_inside("a"));
        assert!(!is_inside("../a") && !is_inside("/etc/passwd") && !is_inside("") && !is_inside("a/../../b"));
        let found =
            problems("cases:\n  - name: x\n    prompt: hi\n    files: { ../up.txt: x }\n    model: [{ text: hi }]\n");
        assert_eq!(
            found,
            ["4:25: cases[0].files.../up.txt: `../up.txt` is not a path inside the working directory; use a relative \
              path without `..`"]
        );
    }

    #[test]
    fn a_valid_case_reads_with_its_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("cases.yaml");
        let text = "cases:\n  - name: x\n    prompts: [a, b]\n    model: [{ text: one }, { text: two }]\n    \
                    expect: { answer_contains: one }\n";
        std::fs::write(&path, text).expect("write");
        let file = load_test_file(&path).expect("valid");
        let case = &file.cases[0];
        assert_eq!(case.prompts, ["a", "b"]);
        assert_eq!(case.script.responses.len(), 2);
        assert_eq!(case.timeout_secs, DEFAULT_TIMEOUT_SECS);
        assert_eq!(case.expect.answer_contains, ["one"]);
        assert_eq!(case.at.to_string(), "cases[0]");
    }
}
