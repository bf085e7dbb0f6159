//! `!command` and `!!command`: the person's own shell commands, run with the agent's shell, working directory
//! and command prefix. Their output joins the conversation as a `bashExecution` message (`!!` keeps it out of
//! the model's context); while the agent works, the message waits until its run ends, as in pi.

use pi_tui::Role;

use super::UiEvent;
use super::app::App;
use super::transcript::Item;
use crate::agent_session::StreamingBehavior;
use crate::cli::rpc::user_bash::run_user_bash;
use crate::cli::yaml_commands::{YamlCommandOutcome, run_command_definition, session_yaml_command};
use crate::protocol::AgentMessage;

impl App {
    /// Runs `text` when it invokes a command of the YAML's `commands:` (a Rust extension's command of the
    /// same name wins); returns whether it did. It runs at once, even while the agent works: a prompt it
    /// makes is sent (or queued), output it shows joins the conversation.
    pub(super) fn run_yaml_command(&mut self, text: &str, behavior: StreamingBehavior) -> bool {
        let Some((command, args)) = session_yaml_command(&self.session, &self.yaml_commands, text) else {
            return false;
        };
        let (command, args) = (command.clone(), args.to_owned());
        let sender = self.sender.clone();
        let env = self.tool_env.clone();
        if matches!(command.action, crate::definition::CommandAction::Shell { .. }) {
            self.status = Some(format!("Running /{}", command.name));
        }
        let cancel = self.stop.child_token();
        let task = tokio::task::spawn_local(async move {
            let event = match run_command_definition(&command, &args, &env, &cancel).await {
                YamlCommandOutcome::Prompt(prompt) => UiEvent::Prompt { text: prompt, behavior },
                YamlCommandOutcome::Show(output) => UiEvent::TaskFinished(Some(output)),
                YamlCommandOutcome::Error(error) => UiEvent::TaskFinished(Some(format!("Error: {error}"))),
            };
            let _ = sender.send(event);
        });
        self.keep(task);
        true
    }

    pub(super) fn run_user_bash(&mut self, command: String, excluded: bool) {
        if command.is_empty() {
            self.transcript.notice("Type a command after ! (or !! to keep its output from the model).", Role::Muted);
            return;
        }
        let session = self.session.clone();
        let sender = self.sender.clone();
        let env = self.tool_env.clone();
        let cancel = self.stop.child_token();
        self.status = Some(format!("Running {command}"));
        let task = tokio::task::spawn_local(async move {
            let notice = match run_user_bash(&env, &command, &cancel).await {
                Ok(outcome) => {
                    let mut message = outcome.message;
                    if excluded {
                        message.exclude_from_context = Some(true);
                    }
                    let shown = Item::Bash {
                        command: message.command.clone(),
                        output: message.output.clone(),
                        excluded,
                        exit_code: message.exit_code,
                    };
                    // While the agent runs, the message is kept once the run has ended.
                    session.agent().wait_for_idle().await;
                    let _ = sender.send(UiEvent::Show(Box::new(shown)));
                    session
                        .record_message(AgentMessage::BashExecution(message))
                        .err()
                        .map(|error| format!("Error: {error}"))
                }
                Err(error) => Some(format!("Error: {error}")),
            };
            let _ = sender.send(UiEvent::TaskFinished(notice));
        });
        self.keep(task);
    }
}
