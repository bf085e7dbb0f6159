//! Carries out RPC commands against the session. Prompts, compactions and the user's commands run as local
//! tasks, so the next command is read while they work; everything else answers at once.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::command::{ParsedLine, RawReply, RpcCommand, RpcReply, parse_line};
use super::entries::{entries_json, tree_json};
use super::export::export_session;
use super::output::RpcOutput;
use super::prompt_run::{Disposition, PendingAck, accepted};
use super::state::{available_thinking_levels, fork_messages, model_json, session_state, slash_commands};
use super::user_bash::run_user_bash_streaming;
use crate::agent::QueueMode;
use crate::agent_session::{AgentSession, StreamingBehavior};
use crate::cli::fork_commands::{clone_data, fork_data};
use crate::cli::model_catalog::ModelCatalog;
use crate::cli::pending_queue::PendingQueue;
use crate::cli::resources::Resources;
use crate::cli::yaml_commands::queue_refusal;
use crate::extension::ModelSelectSource;
use crate::protocol::{AgentMessage, PiCompat, SessionOnlyEvent};
use crate::tools::ToolEnvironment;

/// The RPC session: the agent session, the queued texts, and the work running in the background.
pub struct Rpc {
    pub(super) session: Rc<AgentSession>,
    pub(super) pending: Arc<PendingQueue>,
    pub(super) resources: Resources,
    pub(super) models: ModelCatalog,
    pub(super) tool_env: ToolEnvironment,
    agent_name: String,
    /// Cancels the user's command under way (`abort_bash`).
    pub(super) bash_cancel: RefCell<Option<CancellationToken>>,
    /// Cancels every command the user started (each gets a child of it), when the session ends.
    pub(super) stop: CancellationToken,
    /// Commands that finished while a prompt ran: kept once it ends, so the run's messages stay together.
    pub(super) deferred: Rc<RefCell<Vec<AgentMessage>>>,
    /// Prompts and compactions under way.
    tasks: RefCell<Vec<JoinHandle<()>>>,
    /// A prompt has been accepted and has not finished (true before the agent starts streaming).
    pub(super) busy: Rc<RefCell<bool>>,
    /// Woken whenever a prompt finishes.
    pub(super) prompt_done: Rc<tokio::sync::Notify>,
    /// The pi release whose replies this session gives.
    level: PiCompat,
    /// Prompts are acknowledged as their run starts, with a disposition (see [`PromptRun::hold_ack`]).
    pub(super) hold_ack: bool,
    /// A pi 1.5 prompt's acknowledgement, until its run starts.
    pub(super) ack: PendingAck,
    /// Where replies and events go.
    pub(crate) out: RpcOutput,
}

impl Rpc {
    pub fn new(
        session: Rc<AgentSession>,
        pending: Arc<PendingQueue>,
        resources: Resources,
        models: ModelCatalog,
        tool_env: ToolEnvironment,
        agent_name: &str,
    ) -> Self {
        let (tasks, busy) = (RefCell::new(Vec::new()), Rc::new(RefCell::new(false)));
        let (bash_cancel, deferred) = (RefCell::new(None), Rc::new(RefCell::new(Vec::new())));
        let agent_name = agent_name.to_owned();
        let stop = CancellationToken::new();
        let (level, ack) = (PiCompat::default(), PendingAck::default());
        Self {
            session,
            pending,
            resources,
            models,
            tool_env,
            agent_name,
            bash_cancel,
            stop,
            deferred,
            tasks,
            busy,
            prompt_done: Rc::default(),
            level,
            hold_ack: false,
            ack,
            out: RpcOutput::stdout(),
        }
    }

    /// Answers as pi `level` does; a pi 1.5 prompt's acknowledgement waits in `ack` until its run starts.
    pub fn at_level(self, level: PiCompat, ack: PendingAck) -> Self {
        Self { level, ack, hold_ack: level.is_v1_5(), ..self }
    }

    /// Acknowledges every prompt as its run starts, with its disposition, whatever the level (`serve`).
    pub fn holding_acks(self) -> Self {
        Self { hold_ack: true, ..self }
    }

    /// Sends replies and events to `out` instead of stdout.
    pub fn with_output(self, out: RpcOutput) -> Self {
        Self { out, ..self }
    }

    /// Parses and carries out one stdin line, printing its reply (now, or when its work ends).
    pub async fn handle_line(&self, line: &str) {
        match parse_line(line) {
            ParsedLine::Invalid(reply) => self.out.reply(&reply),
            ParsedLine::Command { id, command } => {
                if let Some(reply) = self.run(id, command).await {
                    self.out.reply(&reply);
                }
            }
        }
    }

    /// Stdin ended (or a signal came): abort what runs and wait until it has stopped (and saved what it
    /// finished). The abort is repeated until then: a prompt task that had not started its run yet would
    /// otherwise start it afterwards, with fresh cancellation, and run its tools.
    pub async fn finish(&self) {
        let tasks: Vec<JoinHandle<()>> = self.tasks.borrow_mut().drain(..).collect();
        let stopped = async {
            for task in tasks {
                let _ = task.await;
            }
            self.session.agent().wait_for_idle().await;
        };
        tokio::pin!(stopped);
        self.stop.cancel();
        loop {
            self.session.abort();
            if tokio::time::timeout(Duration::from_millis(100), &mut stopped).await.is_ok() {
                break;
            }
        }
    }

    /// Whether a prompt has been accepted and not finished, or the agent is streaming.
    pub(crate) fn is_busy(&self) -> bool {
        *self.busy.borrow() || self.session.agent().is_streaming()
    }

    /// The id of the session now open (a fork or a switch changes it).
    pub(crate) fn session_id(&self) -> String {
        self.session.manager().session_id().to_owned()
    }

    /// Waits until no accepted prompt is running (at once when none is).
    pub(crate) async fn prompts_done(&self) {
        loop {
            let notified = self.prompt_done.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if !*self.busy.borrow() {
                return;
            }
            notified.await;
        }
    }

    /// The reply to send now; `None` when a background task sends it later.
    pub(crate) async fn run(&self, id: Option<Value>, command: RpcCommand) -> Option<RpcReply> {
        let session = &self.session;
        let reply = match command {
            RpcCommand::Prompt { message, images, streaming_behavior } => {
                return self.prompt(id, message, images, streaming_behavior.as_deref());
            }
            RpcCommand::Steer { message, images } => match queue_refusal(&self.resources.commands, &message) {
                Some(error) => RpcReply::failure(id, Some("steer"), error),
                None => {
                    self.queue(message, images, StreamingBehavior::Steer);
                    accepted(self.hold_ack, id, "steer", Disposition::Queued)
                }
            },
            RpcCommand::FollowUp { message, images } => match queue_refusal(&self.resources.commands, &message) {
                Some(error) => RpcReply::failure(id, Some("follow_up"), error),
                None => {
                    self.queue(message, images, StreamingBehavior::FollowUp);
                    accepted(self.hold_ack, id, "follow_up", Disposition::Queued)
                }
            },
            RpcCommand::ClearQueue => {
                let (steering, follow_up) = self.pending.texts();
                self.pending.take_all();
                session.agent().clear_all_queues();
                self.out.event(&SessionOnlyEvent::QueueUpdate { steering: Vec::new(), follow_up: Vec::new() });
                RpcReply::with_data(id, "clear_queue", json!({ "steering": steering, "followUp": follow_up }))
            }
            RpcCommand::GetAvailableThinkingLevels => {
                let levels = available_thinking_levels(session);
                RpcReply::with_data(id, "get_available_thinking_levels", json!({ "levels": levels }))
            }
            RpcCommand::GetEntries { since } => {
                let text = entries_json(&session.manager(), since.as_ref());
                return self.raw_reply(id, "get_entries", text);
            }
            RpcCommand::GetTree => {
                let text = tree_json(&session.manager());
                return self.raw_reply(id, "get_tree", text);
            }
            RpcCommand::Abort => {
                session.abort();
                session.agent().wait_for_idle().await;
                RpcReply::ok(id, "abort")
            }
            RpcCommand::GetState => RpcReply::with_data(id, "get_state", session_state(session, self.pending.len())),
            RpcCommand::GetMessages => {
                RpcReply::with_data(id, "get_messages", json!({ "messages": session.agent().messages() }))
            }
            RpcCommand::GetLastAssistantText => {
                let data = session.last_assistant_text().map_or_else(|| json!({}), |text| json!({ "text": text }));
                RpcReply::with_data(id, "get_last_assistant_text", data)
            }
            RpcCommand::GetSessionStats => match serde_json::to_value(session.stats()) {
                Ok(stats) => RpcReply::with_data(id, "get_session_stats", stats),
                Err(error) => RpcReply::failure(id, Some("get_session_stats"), error.to_string()),
            },
            RpcCommand::GetForkMessages => RpcReply::with_data(id, "get_fork_messages", fork_messages(session)),
            RpcCommand::GetCommands => {
                RpcReply::with_data(id, "get_commands", slash_commands(session, &self.resources))
            }
            RpcCommand::SetThinkingLevel { level } => self.set_thinking_level(id, &level),
            RpcCommand::CycleThinkingLevel => self.cycle_thinking_level(id),
            RpcCommand::SetSteeringMode { mode } => match parse_queue_mode(&mode) {
                Ok(mode) => {
                    session.set_steering_mode(mode);
                    RpcReply::ok(id, "set_steering_mode")
                }
                Err(error) => RpcReply::failure(id, Some("set_steering_mode"), error),
            },
            RpcCommand::SetFollowUpMode { mode } => match parse_queue_mode(&mode) {
                Ok(mode) => {
                    session.set_follow_up_mode(mode);
                    RpcReply::ok(id, "set_follow_up_mode")
                }
                Err(error) => RpcReply::failure(id, Some("set_follow_up_mode"), error),
            },
            RpcCommand::SetAutoCompaction { enabled } => {
                session.set_auto_compaction(enabled);
                RpcReply::ok(id, "set_auto_compaction")
            }
            RpcCommand::SetAutoRetry { enabled } => {
                session.set_auto_retry(enabled);
                RpcReply::ok(id, "set_auto_retry")
            }
            RpcCommand::AbortRetry => {
                session.abort_retry();
                RpcReply::ok(id, "abort_retry")
            }
            RpcCommand::Compact { custom_instructions } => return self.compact(id, custom_instructions),
            RpcCommand::SetSessionName { name } => match session.set_session_name(&name) {
                Ok(()) => {
                    self.out.event(&SessionOnlyEvent::SessionInfoChanged { name: name.trim().to_owned() });
                    RpcReply::ok(id, "set_session_name")
                }
                Err(error) => RpcReply::failure(id, Some("set_session_name"), error.to_string()),
            },
            RpcCommand::SetModel { provider, model_id } => {
                match self.switch_model(&provider, &model_id, ModelSelectSource::Set).await {
                    Ok((model, _)) => RpcReply::with_data(id, "set_model", model),
                    Err(error) => RpcReply::failure(id, Some("set_model"), error),
                }
            }
            RpcCommand::CycleModel => self.cycle_model(id).await,
            RpcCommand::GetAvailableModels => {
                let models: Vec<Value> =
                    self.models.available().iter().map(|registered| model_json(&registered.model)).collect();
                RpcReply::with_data(id, "get_available_models", json!({ "models": models }))
            }
            RpcCommand::Bash { command, exclude_from_context } => {
                return self.user_bash(id, command, exclude_from_context);
            }
            RpcCommand::AbortBash => {
                if let Some(cancel) = self.bash_cancel.borrow().as_ref() {
                    cancel.cancel();
                }
                RpcReply::ok(id, "abort_bash")
            }
            RpcCommand::NewSession { parent_session } => match session.new_session(parent_session).await {
                Ok(done) => RpcReply::with_data(id, "new_session", json!({ "cancelled": !done })),
                Err(error) => RpcReply::failure(id, Some("new_session"), error.to_string()),
            },
            RpcCommand::SwitchSession { session_path } => self.switch_session(id, &session_path).await,
            RpcCommand::Fork { entry_id } => match fork_data(session, &entry_id).await {
                Ok(data) => RpcReply::with_data(id, "fork", data),
                Err(error) => RpcReply::failure(id, Some("fork"), error),
            },
            RpcCommand::Clone => match clone_data(session).await {
                Ok(data) => RpcReply::with_data(id, "clone", data),
                Err(error) => RpcReply::failure(id, Some("clone"), error),
            },
            RpcCommand::ExportHtml { output_path } => {
                match export_session(session, &self.agent_name, output_path.as_deref()) {
                    Ok(path) => RpcReply::with_data(id, "export_html", json!({ "path": path })),
                    Err(error) => RpcReply::failure(id, Some("export_html"), error),
                }
            }
            // Answers to dialogs are taken off stdin before dispatch; one that gets here answers nothing.
            RpcCommand::Unsupported(kind) if kind == "extension_ui_response" => return None,
            RpcCommand::Unsupported(kind) => {
                let error = format!("`{kind}` is not available in this agent's RPC mode yet");
                RpcReply::failure(id, Some(&kind), error)
            }
        };
        Some(reply)
    }

    /// Runs the user's command in the background and replies with its result; the output joins the
    /// conversation now, or after the prompt under way (marked to stay out of the model's context when the
    /// client asked). At pi 1.5's level the output streams meanwhile as `bash_execution_update` events.
    fn user_bash(&self, id: Option<Value>, command: String, exclude: Option<bool>) -> Option<RpcReply> {
        let cancel = self.stop.child_token();
        *self.bash_cancel.borrow_mut() = Some(cancel.clone());
        let (session, env, busy, deferred) =
            (self.session.clone(), self.tool_env.clone(), self.busy.clone(), self.deferred.clone());
        let stream = self.level.is_v1_5();
        let out = self.out.clone();
        let task = tokio::task::spawn_local(async move {
            let on_delta = |delta: &str| {
                if stream {
                    out.event(&BashUpdate { kind: "bash_execution_update", id: id.as_ref(), delta });
                }
            };
            let reply = match run_user_bash_streaming(&env, &command, &cancel, on_delta).await {
                Ok(mut outcome) => {
                    outcome.message.exclude_from_context = exclude;
                    let message = AgentMessage::BashExecution(outcome.message);
                    let saved = if *busy.borrow() || session.agent().is_streaming() {
                        deferred.borrow_mut().push(message);
                        Ok(())
                    } else {
                        session.record_message(message)
                    };
                    match saved {
                        Ok(()) => RpcReply::with_data(id, "bash", outcome.data),
                        Err(error) => RpcReply::failure(id, Some("bash"), error.to_string()),
                    }
                }
                Err(error) => RpcReply::failure(id, Some("bash"), error),
            };
            out.reply(&reply);
        });
        self.keep(task);
        None
    }

    /// Compacts in the background (it aborts a running prompt first, as pi does) and replies when done.
    fn compact(&self, id: Option<Value>, instructions: Option<String>) -> Option<RpcReply> {
        let (session, out) = (self.session.clone(), self.out.clone());
        let task = tokio::task::spawn_local(async move {
            let reply = match session.compact_now(instructions.as_deref()).await {
                Ok(Some(result)) => RpcReply::with_data(id, "compact", result),
                Ok(None) => RpcReply::failure(id, Some("compact"), crate::agent_session::NOTHING_TO_COMPACT),
                Err(error) => RpcReply::failure(id, Some("compact"), error),
            };
            out.reply(&reply);
        });
        self.keep(task);
        None
    }

    /// Sends a reply whose data is JSON text already; returns the failure to send instead when there is none.
    fn raw_reply(&self, id: Option<Value>, command: &'static str, data: Result<String, String>) -> Option<RpcReply> {
        match data.and_then(|text| RawReply::new(id.clone(), command, text).map_err(|error| error.to_string())) {
            Ok(reply) => {
                self.out.raw_reply(&reply);
                None
            }
            Err(error) => Some(RpcReply::failure(id, Some(command), error)),
        }
    }

    /// Keeps a background task so the end of stdin can wait for it; finished ones are dropped.
    pub(super) fn keep(&self, task: JoinHandle<()>) {
        let mut tasks = self.tasks.borrow_mut();
        tasks.retain(|task| !task.is_finished());
        tasks.push(task);
    }
}

/// Output of the user's command as it arrives (pi 1.5), with the `id` of the `bash` command when it had one.
#[derive(serde::Serialize)]
struct BashUpdate<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a Value>,
    delta: &'a str,
}

fn parse_queue_mode(mode: &str) -> Result<QueueMode, String> {
    match mode {
        "all" => Ok(QueueMode::All),
        "one-at-a-time" => Ok(QueueMode::OneAtATime),
        other => Err(format!("invalid mode `{other}`; expected \"all\" or \"one-at-a-time\"")),
    }
}
