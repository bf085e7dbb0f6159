//! Tests for building and selecting the agent's custom tools.

use serde_json::json;

use super::*;
use crate::prompt::{SystemPromptBuilder, SystemPromptOptions};
use crate::protocol::{AgentToolResult, UserContent};

/// A Rust implementation that answers with a fixed text; its own metadata differs from the YAML's.
struct Echo {
    name: &'static str,
    parameters: Value,
}

impl Echo {
    fn tool(name: &'static str) -> Arc<dyn AgentTool> {
        Arc::new(Self { name, parameters: json!({"type": "object", "properties": {}}) })
    }
}

impl AgentTool for Echo {
    fn name(&self) -> &str {
        self.name
    }
    fn label(&self) -> &str {
        "Echo (impl)"
    }
    fn description(&self) -> &str {
        "the implementation's description"
    }
    fn parameters(&self) -> &Value {
        &self.parameters
    }
    fn execute(&self, args: Value, _ctx: ToolContext) -> ToolFuture<'_> {
        Box::pin(async move {
            Ok(AgentToolResult {
                content: vec![UserContent::text(format!("echo {args}"))],
                details: None,
                ..AgentToolResult::default()
            })
        })
    }
}

fn declared(name: &str, handler: CustomToolHandler) -> CustomToolDefinition {
    CustomToolDefinition {
        name: name.to_owned(),
        label: format!("{name} label"),
        description: format!("{name} does things"),
        prompt_snippet: Some(format!("{name}: the snippet")),
        prompt_guidelines: vec![format!("Use {name} with care")],
        parameters: r#"{"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}"#
            .to_owned(),
        handler,
    }
}

fn command(name: &str) -> CustomToolDefinition {
    declared(name, CustomToolHandler::Command { template: "echo {{ text }}".to_owned(), timeout_secs: Some(5) })
}

fn rust(name: &str) -> CustomToolDefinition {
    declared(name, CustomToolHandler::Rust)
}

fn agent(custom_tools: Vec<CustomToolDefinition>) -> AgentDefinition {
    AgentDefinition { custom_tools, ..AgentDefinition::default() }
}

fn env() -> ToolEnvironment {
    ToolEnvironment::new("/work")
}

fn names(tools: &[Arc<dyn AgentTool>]) -> Vec<String> {
    tools.iter().map(|tool| tool.name().to_owned()).collect()
}

fn args(list: &[&str]) -> CliArgs {
    crate::cli::args::parse_args(&AgentDefinition::default(), list.iter().map(|a| (*a).to_owned())).expect("parses")
}

fn error_of(definition: &AgentDefinition, rust_tools: Vec<Arc<dyn AgentTool>>) -> String {
    match build_custom_tools(definition, rust_tools, &env()) {
        Ok(tools) => panic!("expected an error, built {:?}", names(&tools)),
        Err(error) => error.to_string(),
    }
}

#[test]
fn custom_tools_are_built_in_yaml_order() {
    let definition = agent(vec![rust("lookup"), command("greet"), rust("store")]);
    let tools = build_custom_tools(&definition, vec![Echo::tool("store"), Echo::tool("lookup")], &env()).expect("ok");
    assert_eq!(names(&tools), ["lookup", "greet", "store"]);
    assert_eq!(tools[1].description(), "greet does things");
}

#[test]
fn a_declared_rust_tool_without_implementation_stops_startup() {
    let definition = agent(vec![command("greet"), rust("lookup")]);
    let error = error_of(&definition, Vec::new());
    assert!(error.contains("\"lookup\"") && error.contains("run_with_tools"), "{error}");
}

#[test]
fn an_implementation_nobody_declared_stops_startup() {
    let error = error_of(&agent(vec![rust("lookup")]), vec![Echo::tool("lookup"), Echo::tool("stray")]);
    assert!(error.contains("\"stray\"") && error.contains("does not declare"), "{error}");
    // A command tool's name is not a Rust declaration.
    let error = error_of(&agent(vec![command("greet")]), vec![Echo::tool("greet")]);
    assert!(error.contains("\"greet\"") && error.contains("does not declare"), "{error}");
}

#[test]
fn duplicate_names_and_broken_definitions_stop_startup() {
    let error = error_of(&agent(vec![rust("lookup")]), vec![Echo::tool("lookup"), Echo::tool("lookup")]);
    assert!(error.contains("\"lookup\"") && error.contains("twice"), "{error}");
    let error = error_of(&agent(vec![command("greet"), command("greet")]), Vec::new());
    assert!(error.contains("\"greet\"") && error.contains("twice"), "{error}");
    let mut broken = command("greet");
    broken.parameters = "{ nope".to_owned();
    let error = error_of(&agent(vec![broken]), Vec::new());
    assert!(error.contains("\"greet\"") && error.contains("not valid JSON"), "{error}");
    let mut broken = rust("lookup");
    broken.parameters = "[".to_owned();
    let error = error_of(&agent(vec![broken]), vec![Echo::tool("lookup")]);
    assert!(error.contains("\"lookup\"") && error.contains("not valid JSON"), "{error}");
}

#[test]
fn a_rust_tool_shows_its_declaration_and_runs_its_implementation() {
    let definition = agent(vec![rust("lookup")]);
    let tools = build_custom_tools(&definition, vec![Echo::tool("lookup")], &env()).expect("ok");
    let tool = &tools[0];
    assert_eq!((tool.label(), tool.description()), ("lookup label", "lookup does things"));
    assert_eq!(tool.parameters()["required"], json!(["text"]));
    assert_eq!(tool.prompt_snippet(), Some("lookup: the snippet"));
    assert_eq!(tool.prompt_guidelines(), ["Use lookup with care"]);
    let runtime = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
    let result = runtime.block_on(tool.execute(json!({"text": "hi"}), ToolContext::new("call-1"))).expect("runs");
    assert_eq!(result.content, vec![UserContent::text(r#"echo {"text":"hi"}"#)]);
}

fn select(definition: &AgentDefinition, list: &[&str]) -> (Vec<String>, Vec<String>) {
    let custom = build_custom_tools(definition, vec![Echo::tool("lookup")], &env()).expect("builds");
    let (tools, warnings) = select_tools(definition, &args(list), &env(), custom);
    (names(&tools), warnings)
}

#[test]
fn custom_tools_follow_the_builtins_and_survive_no_tools() {
    let definition = agent(vec![command("greet"), rust("lookup")]);
    assert_eq!(select(&definition, &[]).0, ["read", "bash", "edit", "write", "greet", "lookup"]);
    assert_eq!(select(&definition, &["--no-tools"]).0, ["greet", "lookup"]);
}

#[test]
fn tools_filters_custom_tools_only_when_it_names_one() {
    let definition = agent(vec![command("greet"), rust("lookup")]);
    let (tools, warnings) = select(&definition, &["--tools", "grep,read"]);
    assert_eq!(tools, ["grep", "read", "greet", "lookup"], "built-in-only lists keep every custom tool");
    assert!(warnings.is_empty(), "{warnings:?}");
    let (tools, _) = select(&definition, &["--tools", "lookup,read"]);
    assert_eq!(tools, ["read", "lookup"]);
    let (tools, _) = select(&definition, &["--tools", "lookup,greet"]);
    assert_eq!(tools, ["greet", "lookup"], "custom tools keep YAML order");
    let (tools, _) = select(&definition, &["--no-tools", "--tools", "greet,read"]);
    assert_eq!(tools, ["greet"]);
}

#[test]
fn unknown_tool_warnings_list_the_custom_tools() {
    let definition = agent(vec![command("greet"), rust("lookup")]);
    let (tools, warnings) = select(&definition, &["--tools", "read,nope"]);
    assert_eq!(tools, ["read", "greet", "lookup"]);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("\"nope\"")
            && warnings[0].ends_with("read, bash, edit, write, grep, find, ls, greet, lookup")
    );
}

#[test]
fn a_custom_tool_replaces_the_builtin_of_its_name() {
    let definition = agent(vec![command("read")]);
    let custom = build_custom_tools(&definition, Vec::new(), &env()).expect("builds");
    let (tools, _) = select_tools(&definition, &args(&[]), &env(), custom);
    assert_eq!(names(&tools), ["bash", "edit", "write", "read"]);
    assert_eq!(tools[3].description(), "read does things");
}

#[test]
fn the_system_prompt_lists_custom_tools_with_snippets_and_guidelines() {
    let definition = agent(vec![command("greet"), rust("lookup")]);
    let custom = build_custom_tools(&definition, vec![Echo::tool("lookup")], &env()).expect("builds");
    let (tools, _) = select_tools(&definition, &args(&["--tools", "read"]), &env(), custom);
    let builder = SystemPromptBuilder::new(SystemPromptOptions {
        identity: "You help.".into(),
        date: Some("2026-01-02".into()),
        cwd: "/work".into(),
        ..SystemPromptOptions::default()
    });
    let prompt = builder.build(&tools);
    assert!(prompt.contains("- greet: greet: the snippet\n- lookup: lookup: the snippet"), "{prompt}");
    assert!(prompt.contains("- Use greet with care\n- Use lookup with care"), "{prompt}");
}

#[test]
fn plus_and_minus_entries_change_the_defaults() {
    let definition = agent(vec![command("greet"), rust("lookup")]);
    let (tools, warnings) = select(&definition, &["--tools", "+grep,-bash,+ls"]);
    assert_eq!(tools, ["read", "edit", "write", "grep", "ls", "greet", "lookup"]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(select(&definition, &["--tools", "-edit,-greet"]).0, ["read", "bash", "write", "lookup"]);
    assert_eq!(select(&definition, &["-nt", "--tools", "+grep"]).0, ["grep", "greet", "lookup"]);
    assert_eq!(select(&definition, &["--tools", "+read"]).0, ["read", "bash", "edit", "write", "greet", "lookup"]);
    let (_, warnings) = select(&definition, &["--tools", "+frob"]);
    assert!(warnings.len() == 1 && warnings[0].contains("\"frob\""), "{warnings:?}");
}

#[test]
fn patterns_pick_tools_after_the_names_given() {
    let definition = agent(vec![command("greet"), rust("lookup")]);
    let (tools, warnings) = select(&definition, &["--tools", "*"]);
    assert_eq!(tools, ["read", "bash", "edit", "write", "grep", "find", "ls", "greet", "lookup"]);
    assert!(warnings.is_empty(), "{warnings:?}");
    assert_eq!(select(&definition, &["--tools", "*s,read"]).0, ["read", "ls", "greet", "lookup"]);
    assert_eq!(select(&definition, &["--tools", "ls,*"]).0[..2], ["ls", "read"]);
    assert_eq!(select(&definition, &["--tools", "read,g*"]).0, ["read", "grep", "greet"]);
    assert_eq!(select(&definition, &["--tools", "?s"]).0, ["greet", "lookup"], "only * is special");
    assert!(select(&definition, &["--tools", "zz*"]).1.is_empty(), "a pattern matching nothing is no mistake");
}

#[test]
fn exclude_tools_turns_off_any_tool() {
    let definition = agent(vec![command("greet"), rust("lookup")]);
    assert_eq!(select(&definition, &["--exclude-tools", "bash,e*"]).0, ["read", "write", "greet", "lookup"]);
    assert_eq!(
        select(&definition, &["-xt", "lookup", "--tools", "+grep"]).0,
        ["read", "bash", "edit", "write", "grep", "greet"]
    );
    assert_eq!(
        select(&definition, &["-xt", "read", "-xt", "bash"]).0,
        ["read", "edit", "write", "greet", "lookup"],
        "the last list counts"
    );
    assert_eq!(select(&definition, &["--exclude-tools", "*"]).0, Vec::<String>::new());
    let args = args(&["--exclude-tools", "mcp__files__*"]);
    assert!(tool_excluded(&args, "mcp__files__read") && !tool_excluded(&args, "mcp__web__get"));
}

#[test]
fn tool_lists_and_patterns_parse() {
    let list = |entries: &[&str]| {
        let entries: Vec<String> = entries.iter().map(|e| (*e).to_owned()).collect();
        tool_list(Some(&entries))
    };
    assert_eq!(tool_list(None), Ok(ToolList::Defaults));
    assert_eq!(list(&[" read", "", "g*"]), Ok(ToolList::Only(vec!["read".into(), "g*".into()])));
    assert_eq!(
        list(&["+grep", " -bash"]),
        Ok(ToolList::Change { add: vec!["grep".into()], remove: vec!["bash".into()] })
    );
    assert!(list(&["read", "+grep"]).is_err_and(|e| e.contains("not both")));
    assert!(list(&["+g*"]).is_err_and(|e| e.contains("`+g*`")));
    assert!(list(&["-"]).is_err());
    for (pattern, name, expected) in [
        ("*", "read", true),
        ("re*", "read", true),
        ("*ad", "read", true),
        ("r*d", "read", true),
        ("r*a*d", "read", true),
        ("r*x", "read", false),
        ("read", "read", true),
        ("rea", "read", false),
        ("mcp__*__get", "mcp__web__get", true),
        ("a*a", "a", false),
    ] {
        assert_eq!(tool_pattern_matches(pattern, name), expected, "{pattern} vs {name}");
    }
}
