//! Carries out RPC commands against the session. Prompts, compactions and the user's commands run as local
//! tasks, so the next command is read while they work; everything else answers at once.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use super::command::{ParsedLine, RpcCommand, RpcReply, parse_line};
use super::export::export_session;
use super::prompt_run::{PromptRun, parse_streaming_behavior, still_working};
use super::state::{fork_messages, model_json, session_state, slash_commands};
use super::user_bash::run_user_bash;
use crate::agent::QueueMode;
use crate::agent_session::{AgentSession, ForkOutcome, PromptOptions, StreamingBehavior};
use crate::ai::ThinkingLevel;
use crate::cli::model_catalog::ModelCatalog;
use crate::cli::modes::write_json;
use crate::cli::pending_queue::PendingQueue;
use crate::cli::resources::Resources;
use crate::cli::yaml_commands::{
    YamlCommandOutcome, notify_request, queue_refusal, run_yaml_command, session_yaml_command,
};
use crate::extension::{InputSource, ModelSelectSource};
use crate::protocol::{AgentMessage, ImageContent, SessionOnlyEvent};
use crate::tools::ToolEnvironment;

/// The RPC session: the agent session, the queued texts, and the work running in the background.
pub struct Rpc {
    session: Rc<AgentSession>,
    pending: Arc<PendingQueue>,
    resources: Resources,
    models: ModelCatalog,
    tool_env: ToolEnvironment,
    agent_name: String,
    /// Cancels the user's command under way (`abort_bash`).
    bash_cancel: RefCell<Option<CancellationToken>>,
    /// Cancels every command the user started (each gets a child of it), when the session ends.
    stop: CancellationToken,
    /// Commands that finished while a prompt ran: kept once it ends, so the run's messages stay together.
    deferred: Rc<RefCell<Vec<AgentMessage>>>,
    /// Prompts and compactions under way.
    tasks: RefCell<Vec<JoinHandle<()>>>,
    /// A prompt has been accepted and has not finished (true before the agent starts streaming).
    busy: Rc<RefCell<bool>>,
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
        Self { session, pending, resources, models, tool_env, agent_name, bash_cancel, stop, deferred, tasks, busy }
    }

    /// Parses and carries out one stdin line, printing its reply (now, or when its work ends).
    pub async fn handle_line(&self, line: &str) {
        match parse_line(line) {
            ParsedLine::Invalid(reply) => write_json(&reply),
            ParsedLine::Command { id, command } => {
                if let Some(reply) = self.run(id, command).await {
                    write_json(&reply);
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

    /// The reply to print now; `None` when a background task prints it later.
    async fn run(&self, id: Option<Value>, command: RpcCommand) -> Option<RpcReply> {
        let session = &self.session;
        let reply = match command {
            RpcCommand::Prompt { message, images, streaming_behavior } => {
                return self.prompt(id, message, images, streaming_behavior.as_deref());
            }
            RpcCommand::Steer { message, images } => match queue_refusal(&self.resources.commands, &message) {
                Some(error) => RpcReply::failure(id, Some("steer"), error),
                None => {
                    self.queue(message, images, StreamingBehavior::Steer);
                    RpcReply::ok(id, "steer")
                }
            },
            RpcCommand::FollowUp { message, images } => match queue_refusal(&self.resources.commands, &message) {
                Some(error) => RpcReply::failure(id, Some("follow_up"), error),
                None => {
                    self.queue(message, images, StreamingBehavior::FollowUp);
                    RpcReply::ok(id, "follow_up")
                }
            },
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
                    write_json(&SessionOnlyEvent::SessionInfoChanged { name: name.trim().to_owned() });
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
            RpcCommand::Bash { command } => return self.user_bash(id, command),
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
            RpcCommand::Fork { entry_id } => match session.fork_before(&entry_id).await {
                Ok(ForkOutcome::Forked { text }) => {
                    RpcReply::with_data(id, "fork", json!({ "text": text, "cancelled": false }))
                }
                Ok(_) => RpcReply::with_data(id, "fork", json!({ "text": "", "cancelled": true })),
                Err(error) => RpcReply::failure(id, Some("fork"), error.to_string()),
            },
            RpcCommand::Clone => match session.clone_session().await {
                Ok(done) => RpcReply::with_data(id, "clone", json!({ "cancelled": !done })),
                Err(error) => RpcReply::failure(id, Some("clone"), error.to_string()),
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

    /// An idle agent starts the prompt in the background (acknowledged first; a failure is a second reply).
    /// A busy one queues it when the client said how, and refuses it otherwise.
    fn prompt(
        &self,
        id: Option<Value>,
        message: String,
        images: Vec<ImageContent>,
        behavior: Option<&str>,
    ) -> Option<RpcReply> {
        if session_yaml_command(&self.session, &self.resources.commands, &message).is_some() {
            return self.yaml_command(id, message, images, behavior.map(str::to_owned));
        }
        if *self.busy.borrow() || self.session.agent().is_streaming() {
            match behavior.map(parse_streaming_behavior) {
                None => return Some(still_working(id)),
                Some(Err(error)) => return Some(RpcReply::failure(id, Some("prompt"), error)),
                Some(Ok(behavior)) => self.queue(message, images, behavior),
            }
            return Some(RpcReply::ok(id, "prompt"));
        }
        write_json(&RpcReply::ok(id.clone(), "prompt"));
        *self.busy.borrow_mut() = true;
        let options = PromptOptions { images, source: InputSource::Rpc, ..PromptOptions::default() };
        let task = tokio::task::spawn_local(self.prompt_run().run(id, message, options));
        self.keep(task);
        None
    }

    /// Runs what extensions asked for while the agent was idle, unless a prompt runs (it runs them itself
    /// when it ends).
    pub(super) fn run_deferred(&self) {
        if *self.busy.borrow() || self.session.agent().is_streaming() || !self.session.has_deferred() {
            return;
        }
        *self.busy.borrow_mut() = true;
        let task = tokio::task::spawn_local(self.prompt_run().run_deferred());
        self.keep(task);
    }

    fn prompt_run(&self) -> PromptRun {
        PromptRun { session: self.session.clone(), busy: self.busy.clone(), deferred: self.deferred.clone() }
    }

    /// A command of the YAML runs at once, even while the agent works (`abort_bash` stops it), and is answered
    /// when done. Its prompt then runs, or is queued, as a prompt would; shown output is a `notify` request.
    fn yaml_command(
        &self,
        id: Option<Value>,
        message: String,
        images: Vec<ImageContent>,
        behavior: Option<String>,
    ) -> Option<RpcReply> {
        let cancel = self.stop.child_token();
        *self.bash_cancel.borrow_mut() = Some(cancel.clone());
        let (commands, env, pending) = (self.resources.commands.clone(), self.tool_env.clone(), self.pending.clone());
        let run = self.prompt_run();
        let options = PromptOptions { images, source: InputSource::Rpc, expand: false, ..PromptOptions::default() };
        let task = tokio::task::spawn_local(async move {
            let outcome = run_yaml_command(&commands, &message, &env, &cancel).await;
            match outcome.unwrap_or_else(|| YamlCommandOutcome::Error(format!("{message}: no such command"))) {
                YamlCommandOutcome::Prompt(text) if *run.busy.borrow() || run.session.agent().is_streaming() => {
                    let behavior = match behavior.as_deref().map(parse_streaming_behavior) {
                        None => return write_json(&still_working(id)),
                        Some(Err(error)) => return write_json(&RpcReply::failure(id, Some("prompt"), error)),
                        Some(Ok(behavior)) => behavior,
                    };
                    let delivered = run.session.queue_message(text.clone(), options.images, behavior);
                    write_json(&pending.push(&text, &delivered, behavior));
                    write_json(&RpcReply::ok(id, "prompt"));
                }
                YamlCommandOutcome::Prompt(text) => {
                    write_json(&RpcReply::ok(id.clone(), "prompt"));
                    *run.busy.borrow_mut() = true;
                    run.run(id, text, options).await;
                }
                YamlCommandOutcome::Show(output) => {
                    write_json(&RpcReply::ok(id, "prompt"));
                    write_json(&notify_request(&output, false));
                }
                YamlCommandOutcome::Error(error) => write_json(&RpcReply::failure(id, Some("prompt"), error)),
            }
        });
        self.keep(task);
        None
    }

    fn queue(&self, text: String, images: Vec<ImageContent>, behavior: StreamingBehavior) {
        let delivered = self.session.queue_message(text.clone(), images, behavior);
        write_json(&self.pending.push(&text, &delivered, behavior));
    }

    /// Runs the user's command in the background and replies with its result; the output joins the
    /// conversation now, or after the prompt under way.
    fn user_bash(&self, id: Option<Value>, command: String) -> Option<RpcReply> {
        let cancel = self.stop.child_token();
        *self.bash_cancel.borrow_mut() = Some(cancel.clone());
        let (session, env, busy, deferred) =
            (self.session.clone(), self.tool_env.clone(), self.busy.clone(), self.deferred.clone());
        let task = tokio::task::spawn_local(async move {
            let reply = match run_user_bash(&env, &command, &cancel).await {
                Ok(outcome) => {
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
            write_json(&reply);
        });
        self.keep(task);
        None
    }

    /// Compacts in the background (it aborts a running prompt first, as pi does) and replies when done.
    fn compact(&self, id: Option<Value>, instructions: Option<String>) -> Option<RpcReply> {
        let session = self.session.clone();
        let task = tokio::task::spawn_local(async move {
            let reply = match session.compact_now(instructions.as_deref()).await {
                Ok(Some(result)) => RpcReply::with_data(id, "compact", result),
                Ok(None) => RpcReply::failure(id, Some("compact"), crate::agent_session::NOTHING_TO_COMPACT),
                Err(error) => RpcReply::failure(id, Some("compact"), error),
            };
            write_json(&reply);
        });
        self.keep(task);
        None
    }

    fn set_thinking_level(&self, id: Option<Value>, level: &str) -> RpcReply {
        let level = match level.parse::<ThinkingLevel>() {
            Ok(level) => level,
            Err(error) => return RpcReply::failure(id, Some("set_thinking_level"), error.to_string()),
        };
        let before = self.session.agent().state().thinking_level;
        match self.session.set_thinking_level(level) {
            Ok(now) => {
                if now != before {
                    write_json(&SessionOnlyEvent::ThinkingLevelChanged { level: now.as_str().to_owned() });
                }
                RpcReply::ok(id, "set_thinking_level")
            }
            Err(error) => RpcReply::failure(id, Some("set_thinking_level"), error.to_string()),
        }
    }

    fn cycle_thinking_level(&self, id: Option<Value>) -> RpcReply {
        match self.session.cycle_thinking_level() {
            Ok(Some(level)) => {
                write_json(&SessionOnlyEvent::ThinkingLevelChanged { level: level.as_str().to_owned() });
                RpcReply::with_data(id, "cycle_thinking_level", json!({ "level": level.as_str() }))
            }
            Ok(None) => RpcReply::with_data(id, "cycle_thinking_level", Value::Null),
            Err(error) => RpcReply::failure(id, Some("cycle_thinking_level"), error.to_string()),
        }
    }

    /// Switches to `provider`/`id`; returns the model as printed and the thinking level now in effect.
    async fn switch_model(
        &self,
        provider: &str,
        id: &str,
        source: ModelSelectSource,
    ) -> Result<(Value, ThinkingLevel), String> {
        let chosen = self.models.choose(provider, id)?;
        let before = self.session.agent().state().thinking_level;
        let printed = model_json(&chosen.model);
        let map = chosen.thinking_level_map.as_ref();
        let level = self
            .session
            .set_model(chosen.model, Some(chosen.api_key), map, source)
            .await
            .map_err(|error| error.to_string())?;
        if level != before {
            write_json(&SessionOnlyEvent::ThinkingLevelChanged { level: level.as_str().to_owned() });
        }
        Ok((printed, level))
    }

    /// Continues in another session file; its model comes back when it can be used.
    async fn switch_session(&self, id: Option<Value>, path: &str) -> RpcReply {
        let path = crate::cli::expand_home(std::path::Path::new(path));
        match self.session.switch_session(&path).await {
            Ok(false) => RpcReply::with_data(id, "switch_session", json!({ "cancelled": true })),
            Ok(true) => {
                let current = self.session.agent().state().model.map(|model| (model.provider, model.id));
                if let Some((provider, model_id)) =
                    self.session.session_model().filter(|used| Some(used) != current.as_ref())
                    && let Err(error) = self.switch_model(&provider, &model_id, ModelSelectSource::Restore).await
                {
                    eprintln!(
                        "Warning: the session used {provider}/{model_id}, which cannot be used here ({error}); keeping the current model"
                    );
                }
                RpcReply::with_data(id, "switch_session", json!({ "cancelled": false }))
            }
            Err(error) => RpcReply::failure(id, Some("switch_session"), error.to_string()),
        }
    }

    /// The next available model after the current one (wrapping); `null` when there is no other.
    async fn cycle_model(&self, id: Option<Value>) -> RpcReply {
        let current = self.session.agent().state().model;
        let Some(target) = self.models.cycle_from(current.as_ref(), false) else {
            return RpcReply::with_data(id, "cycle_model", Value::Null);
        };
        let (model, mut level) = match self.switch_model(&target.provider, &target.id, ModelSelectSource::Cycle).await {
            Ok(switched) => switched,
            Err(error) => return RpcReply::failure(id, Some("cycle_model"), error),
        };
        // A level the scope's pattern names replaces the current one (clamped to the model).
        if let Some(wanted) = target.thinking {
            match self.session.set_thinking_level(wanted) {
                Ok(applied) if applied != level => {
                    write_json(&SessionOnlyEvent::ThinkingLevelChanged { level: applied.as_str().to_owned() });
                    level = applied;
                }
                Ok(_) => {}
                Err(error) => return RpcReply::failure(id, Some("cycle_model"), error.to_string()),
            }
        }
        let data = json!({ "model": model, "thinkingLevel": level.as_str(), "isScoped": target.scoped });
        RpcReply::with_data(id, "cycle_model", data)
    }

    /// Keeps a background task so the end of stdin can wait for it; finished ones are dropped.
    fn keep(&self, task: JoinHandle<()>) {
        let mut tasks = self.tasks.borrow_mut();
        tasks.retain(|task| !task.is_finished());
        tasks.push(task);
    }
}

fn parse_queue_mode(mode: &str) -> Result<QueueMode, String> {
    match mode {
        "all" => Ok(QueueMode::All),
        "one-at-a-time" => Ok(QueueMode::OneAtATime),
        other => Err(format!("invalid mode `{other}`; expected \"all\" or \"one-at-a-time\"")),
    }
}
