//! Tests of the YAML's commands: lookup, hints, prompt expansion, and shell commands run for real.

use super::*;
use crate::cli::resources::Resources;
use crate::definition::CommandArgument;

fn argument(name: &str, required: bool) -> CommandArgument {
    CommandArgument { name: name.to_owned(), description: None, required }
}

fn prompt_command(name: &str, template: &str, arguments: Vec<CommandArgument>) -> CommandDefinition {
    let action = CommandAction::Prompt { template: template.to_owned() };
    CommandDefinition { name: name.to_owned(), description: format!("The {name} command"), arguments, action }
}

fn shell_command(name: &str, script: &str, send: bool, timeout_secs: Option<u64>) -> CommandDefinition {
    let action = CommandAction::Shell { command: script.to_owned(), send, timeout_secs };
    CommandDefinition { name: name.to_owned(), description: format!("The {name} command"), arguments: vec![], action }
}

fn commands() -> Vec<CommandDefinition> {
    vec![
        prompt_command(
            "focus",
            "Review $1 closely. Focus: ${@:2}",
            vec![argument("file", true), argument("focus", false)],
        ),
        prompt_command("plain", "Say $ARGUMENTS", vec![]),
        shell_command("args", "printf '[%s]' \"$@\"; printf ' %s' \"$0\"", false, None),
        shell_command("send", "echo sent: \"$1\"", true, None),
    ]
}

async fn run(commands: &[CommandDefinition], text: &str, dir: &std::path::Path) -> Option<YamlCommandOutcome> {
    run_yaml_command(commands, text, &ToolEnvironment::new(dir), &CancellationToken::new()).await
}

#[test]
fn commands_are_found_by_name_with_their_argument_text() {
    let commands = commands();
    let (command, args) = find_yaml_command(&commands, "/focus  src/a.rs  errors").expect("found");
    assert_eq!((command.name.as_str(), args), ("focus", "src/a.rs  errors"));
    assert_eq!(find_yaml_command(&commands, "/plain").map(|(_, args)| args), Some(""));
    assert!(find_yaml_command(&commands, "/focu x").is_none());
    assert!(find_yaml_command(&commands, "focus x").is_none(), "only a leading slash invokes");
}

#[test]
fn items_put_the_argument_hint_before_the_description() {
    let definition = AgentDefinition { commands: commands(), ..AgentDefinition::default() };
    let items = yaml_command_items(&definition);
    assert_eq!(items[0], ("focus".to_owned(), "<file> [focus] — The focus command".to_owned()));
    assert_eq!(items[1], ("plain".to_owned(), "The plain command".to_owned()));
    assert_eq!(items.len(), 4);
}

#[tokio::test]
async fn a_prompt_command_expands_with_the_template_placeholders() {
    let dir = tempfile::tempdir().expect("tempdir");
    let commands = commands();
    let outcome = run(&commands, "/focus src/a.rs \"error handling\" too", dir.path()).await;
    assert_eq!(outcome, Some(YamlCommandOutcome::Prompt("Review src/a.rs closely. Focus: error handling too".into())));
    let outcome = run(&commands, "/plain hi there", dir.path()).await;
    assert_eq!(outcome, Some(YamlCommandOutcome::Prompt("Say hi there".to_owned())));
    assert_eq!(run(&commands, "hello", dir.path()).await, None);
}

#[tokio::test]
async fn a_missing_required_argument_is_an_error_with_the_usage() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outcome = run(&commands(), "/focus", dir.path()).await;
    let expected = "/focus needs the argument <file>; usage: /focus <file> [focus]";
    assert_eq!(outcome, Some(YamlCommandOutcome::Error(expected.to_owned())));
    assert_eq!(expand_prompt_command(&commands(), "/focus"), Some(Err(expected.to_owned())));
    assert_eq!(expand_prompt_command(&commands(), "/focus a"), Some(Ok("Review a closely. Focus: ".to_owned())));
    assert_eq!(expand_prompt_command(&commands(), "/args a"), None, "a shell command is not expanded");
}

#[tokio::test]
async fn shell_arguments_are_positional_parameters_and_never_run() {
    let dir = tempfile::tempdir().expect("tempdir");
    let outcome = run(&commands(), "/args 'x; touch pwned' $(touch pwned2) `touch pwned3`", dir.path()).await;
    let shown = "[x; touch pwned][$(touch][pwned2)][`touch][pwned3`] args";
    assert_eq!(outcome, Some(YamlCommandOutcome::Show(shown.to_owned())));
    for name in ["pwned", "pwned2", "pwned3"] {
        assert!(!dir.path().join(name).exists(), "{name} was created");
    }
}

#[tokio::test]
async fn shell_commands_run_in_the_working_directory_and_send_their_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(dir.path().join("marker.txt"), "here").expect("write");
    let commands = vec![shell_command("ls", "ls", false, None), shell_command("quiet", "true", true, None)];
    let outcome = run(&commands, "/ls", dir.path()).await;
    assert_eq!(outcome, Some(YamlCommandOutcome::Show("marker.txt".to_owned())));
    let outcome = run(&self::commands(), "/send it", dir.path()).await;
    assert_eq!(outcome, Some(YamlCommandOutcome::Prompt("sent: it".to_owned())));
    let outcome = run(&commands, "/quiet", dir.path()).await;
    let nothing = "/quiet printed nothing, so there is nothing to send";
    assert_eq!(outcome, Some(YamlCommandOutcome::Error(nothing.to_owned())));
}

#[tokio::test]
async fn failures_and_timeouts_are_errors_carrying_the_output() {
    let dir = tempfile::tempdir().expect("tempdir");
    let commands = vec![
        shell_command("fail", "echo broken; exit 3", false, None),
        shell_command("slow", "sleep 5", false, Some(1)),
    ];
    let outcome = run(&commands, "/fail", dir.path()).await;
    assert_eq!(outcome, Some(YamlCommandOutcome::Error("/fail exited with code 3:\nbroken".to_owned())));
    let started = std::time::Instant::now();
    let outcome = run(&commands, "/slow", dir.path()).await;
    assert_eq!(outcome, Some(YamlCommandOutcome::Error("/slow timed out".to_owned())));
    assert!(started.elapsed() < std::time::Duration::from_secs(4), "killed at the timeout");
}

#[test]
fn shell_commands_are_not_queued_and_prompt_commands_need_their_arguments() {
    let commands = commands();
    assert!(queue_refusal(&commands, "/args x").is_some_and(|error| error.contains("cannot be queued")));
    assert!(queue_refusal(&commands, "/focus").is_some_and(|error| error.contains("needs the argument <file>")));
    assert_eq!(queue_refusal(&commands, "/focus a.rs"), None);
    assert_eq!(queue_refusal(&commands, "just text"), None);
}

#[test]
fn the_prompt_expander_expands_prompt_commands_before_templates() {
    let resources = Resources { commands: commands(), ..Resources::default() };
    assert_eq!(resources.expand("/plain hi"), "Say hi");
    assert_eq!(resources.expand("/args hi"), "/args hi", "shell commands are never run by the expander");
    assert_eq!(resources.expand("/focus"), "/focus", "a missing argument leaves the text as typed");
}

#[test]
fn notify_requests_have_pis_shape() {
    let request = notify_request("three files", false);
    assert_eq!(request["type"], "extension_ui_request");
    assert_eq!(request["method"], "notify");
    assert_eq!(request["message"], "three files");
    assert_eq!(request["notifyType"], "info");
    assert!(request["id"].as_str().is_some_and(|id| id.len() == 36));
}
