//! `!command` and `!!command`: the person's own shell commands, run with the agent's shell, working directory
//! and command prefix. Their output joins the conversation as a `bashExecution` message (`!!` keeps it out of
//! the model's context); while the agent works, the message waits until its run ends, as in pi.

use pi_tui::Role;
use tokio_util::sync::CancellationToken;

use super::UiEvent;
use super::app::App;
use super::transcript::Item;
use crate::cli::rpc::user_bash::run_user_bash;
use crate::protocol::AgentMessage;

impl App {
    pub(super) fn run_user_bash(&mut self, command: String, excluded: bool) {
        if command.is_empty() {
            self.transcript.notice("Type a command after ! (or !! to keep its output from the model).", Role::Muted);
            return;
        }
        let session = self.session.clone();
        let sender = self.sender.clone();
        let env = self.tool_env.clone();
        let cancel = CancellationToken::new();
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
