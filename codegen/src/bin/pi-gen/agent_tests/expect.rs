//! Checking a case's expectations against what was observed. Each failure names the expectation (its
//! YAML path in the test file) and shows what was expected and what happened.

use serde_json::Value;

use super::case_file::{Expect, FileExpect, TestCase, file_expect};
use super::observe::{Observed, ObservedCall};
use pi_codegen::problem::YamlPath;

/// One expectation that did not hold.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    /// The expectation's place in the test file.
    pub at: YamlPath,
    pub message: String,
    /// Expected and actual text, shown as a diff when both are there.
    pub expected: Option<String>,
    pub actual: Option<String>,
}

impl Failure {
    fn new(at: YamlPath, message: impl Into<String>) -> Self {
        Self { at, message: message.into(), expected: None, actual: None }
    }

    fn with_diff(mut self, expected: impl Into<String>, actual: impl Into<String>) -> Self {
        self.expected = Some(expected.into());
        self.actual = Some(actual.into());
        self
    }
}

/// Every expectation of `case` that `observed` breaks.
pub fn check(case: &TestCase, observed: &Observed) -> Vec<Failure> {
    let at = case.at.key("expect");
    let expect = &case.expect;
    let mut failures = Vec::new();
    if observed.timed_out {
        let message = format!("the agent was still running after {} s and was stopped", case.timeout_secs);
        failures.push(Failure::new(case.at.key("timeout"), message));
        return failures;
    }
    let wanted_code = expect.exit_code.unwrap_or(0);
    if observed.exit_code != Some(wanted_code) {
        let actual = observed.exit_code.map_or_else(|| "killed by a signal".to_owned(), |code| code.to_string());
        let stderr = observed.stderr.trim();
        let tail = if stderr.is_empty() { String::new() } else { format!("; its stderr:\n{stderr}") };
        failures.push(Failure::new(
            at.key("exit_code"),
            format!("the agent exited with {actual}, expected {wanted_code}{tail}"),
        ));
    }
    let wanted_calls = expect.model_calls.unwrap_or(case.script.responses.len());
    if observed.model_calls != wanted_calls {
        let place = if expect.model_calls.is_some() { at.key("model_calls") } else { case.at.key("model") };
        let message = if expect.model_calls.is_some() {
            format!("the model was asked {} time(s), expected {wanted_calls}", observed.model_calls)
        } else {
            format!(
                "the model was asked {} time(s) but the script has {wanted_calls} response(s); \
                 set `expect.model_calls` if that is intended",
                observed.model_calls
            )
        };
        failures.push(Failure::new(place, message));
    }
    if let Some(tools) = &expect.tools {
        check_tools(tools, &observed.calls, &at.key("tools"), &mut failures);
    }
    for name in &expect.not_called {
        if observed.calls.iter().any(|call| &call.name == name) {
            failures.push(Failure::new(at.key("not_called"), format!("`{name}` was called")));
        }
    }
    check_answer(expect, &observed.answer, &at, &mut failures);
    for wanted in &expect.stderr_contains {
        if !observed.stderr.contains(wanted.as_str()) {
            failures.push(
                Failure::new(at.key("stderr_contains"), format!("stderr does not contain \"{wanted}\""))
                    .with_diff(wanted.clone(), observed.stderr.clone()),
            );
        }
    }
    for (name, value) in &expect.files {
        if let Ok(wanted) = file_expect(value) {
            check_file(name, &wanted, observed, &at.key("files").key(name.clone()), &mut failures);
        }
    }
    failures
}

fn check_tools(tools: &[super::case_file::ToolExpect], calls: &[ObservedCall], at: &YamlPath, out: &mut Vec<Failure>) {
    let names = |calls: &mut dyn Iterator<Item = &str>| calls.collect::<Vec<_>>().join(", ");
    if tools.len() != calls.len() {
        let expected = names(&mut tools.iter().map(|tool| tool.name.as_str()));
        let actual = names(&mut calls.iter().map(|call| call.name.as_str()));
        out.push(
            Failure::new(at.clone(), format!("{} tool call(s) expected, {} made", tools.len(), calls.len()))
                .with_diff(format!("[{expected}]"), format!("[{actual}]")),
        );
    }
    for (index, (wanted, call)) in tools.iter().zip(calls).enumerate() {
        let at = at.index(index);
        if wanted.name != call.name {
            out.push(Failure::new(
                at.key("name"),
                format!("call {} is `{}`, expected `{}`", index + 1, call.name, wanted.name),
            ));
            continue;
        }
        if let Some(arguments) = &wanted.arguments
            && !contains_value(&call.arguments, arguments)
        {
            out.push(
                Failure::new(at.key("arguments"), format!("`{}` was called with other arguments", call.name))
                    .with_diff(pretty(arguments), pretty(&call.arguments)),
            );
        }
        if let Some(text) = &wanted.result_contains
            && !call.result.contains(text.as_str())
        {
            out.push(
                Failure::new(at.key("result_contains"), format!("the result of `{}` does not contain it", call.name))
                    .with_diff(text.clone(), call.result.clone()),
            );
        }
        let blocked_error = match &wanted.blocked {
            Some(Value::Bool(blocked)) => Some(*blocked),
            Some(Value::String(_)) => Some(true),
            _ => None,
        };
        for (key, want_error) in [("error", wanted.error), ("blocked", blocked_error)] {
            if let Some(want_error) = want_error
                && want_error != call.is_error
            {
                let state = if call.is_error { "failed" } else { "succeeded" };
                let wanted_state = match (key, want_error) {
                    ("blocked", true) => "be blocked",
                    ("blocked", false) => "not be blocked",
                    (_, true) => "fail",
                    _ => "succeed",
                };
                out.push(
                    Failure::new(at.key(key), format!("`{}` {state}; it should {wanted_state}", call.name))
                        .with_diff(String::new(), call.result.clone()),
                );
            }
        }
        if let Some(Value::String(reason)) = &wanted.blocked
            && call.is_error
            && !call.result.contains(reason.as_str())
        {
            out.push(
                Failure::new(at.key("blocked"), format!("`{}` failed, but not with this reason", call.name))
                    .with_diff(reason.clone(), call.result.clone()),
            );
        }
    }
}

fn check_answer(expect: &Expect, answer: &str, at: &YamlPath, out: &mut Vec<Failure>) {
    if let Some(wanted) = &expect.answer
        && wanted.trim() != answer.trim()
    {
        out.push(Failure::new(at.key("answer"), "the final answer differs").with_diff(wanted.trim(), answer.trim()));
    }
    for wanted in &expect.answer_contains {
        if !answer.contains(wanted.as_str()) {
            out.push(
                Failure::new(at.key("answer_contains"), format!("the final answer does not contain \"{wanted}\""))
                    .with_diff(wanted.clone(), answer.to_owned()),
            );
        }
    }
}

fn check_file(name: &str, wanted: &FileExpect, observed: &Observed, at: &YamlPath, out: &mut Vec<Failure>) {
    let before = observed.files_before.get(name);
    let after = observed.files_after.get(name);
    let text = |bytes: &Vec<u8>| String::from_utf8_lossy(bytes).into_owned();
    let failure = match (wanted, after) {
        (FileExpect::Absent, Some(_)) => Some(Failure::new(at.clone(), format!("{name} exists; it should not"))),
        (FileExpect::Absent, None) => None,
        (_, None) => Some(Failure::new(at.clone(), format!("{name} does not exist after the run"))),
        (FileExpect::Exists, Some(_)) => None,
        (FileExpect::Unchanged, Some(after)) => (before != Some(after)).then(|| {
            Failure::new(at.clone(), format!("{name} was changed"))
                .with_diff(before.map(text).unwrap_or_default(), text(after))
        }),
        (FileExpect::Contains(wanted), Some(after)) => (!text(after).contains(wanted.as_str())).then(|| {
            Failure::new(at.clone(), format!("{name} does not contain the text")).with_diff(wanted.clone(), text(after))
        }),
        (FileExpect::Equals(wanted), Some(after)) => (text(after) != *wanted).then(|| {
            Failure::new(at.clone(), format!("{name} has other contents")).with_diff(wanted.clone(), text(after))
        }),
    };
    out.extend(failure);
}

/// Whether `actual` has everything `wanted` has: objects key by key (other keys allowed), anything else equal.
pub fn contains_value(actual: &Value, wanted: &Value) -> bool {
    match (actual, wanted) {
        (Value::Object(actual), Value::Object(wanted)) => {
            wanted.iter().all(|(key, value)| actual.get(key).is_some_and(|present| contains_value(present, value)))
        }
        // YAML numbers may read as floats where the agent sends integers, or the reverse.
        (Value::Number(actual), Value::Number(wanted)) => actual.as_f64() == wanted.as_f64(),
        _ => actual == wanted,
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn arguments_match_when_the_expected_keys_match() {
        let actual = json!({"path": "src/a.rs", "limit": 20, "nested": {"a": 1, "b": 2}});
        assert!(contains_value(&actual, &json!({"path": "src/a.rs"})));
        assert!(contains_value(&actual, &json!({"limit": 20.0, "nested": {"b": 2}})));
        assert!(!contains_value(&actual, &json!({"path": "src/b.rs"})));
        assert!(!contains_value(&actual, &json!({"missing": null})));
        assert!(!contains_value(&json!(["a", "b"]), &json!(["a"])));
    }
}
