//! The session workflow: one per session (its id is the session's id). Inputs arrive as signals and wait in
//! an inbox; the workflow hands them to the [`SessionFlow`], asks it for the next action and runs that as an
//! activity: model calls on the sessions' queue (retried), tool batches on the workspace's queue (never
//! retried: a batch a dead worker left gets "tool interrupted" results instead); the wait before pi's
//! auto-retry is a durable timer, which an abort cuts short. Ids come from the
//! workflow's deterministic random source, so a replay names the same entries. Between runs, once
//! [`TURNS_PER_RUN`] turns (or the session's own number) were taken, it continues as new, carrying the
//! flow's state.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use temporalio_common::RetryPolicy;
use temporalio_macros::{workflow, workflow_methods};
use temporalio_sdk::{
    ActivityOptions, ApplicationFailure, ContinueAsNewOptions, SyncWorkflowContext, WorkflowContext,
    WorkflowContextView, WorkflowResult,
};

use super::activities::{CancelRetryStep, FinishStep, ModelStep, SessionActivities, StepTarget, ToolsStep};
use super::commands::{CommandDone, CommandStep, ModelSettings, SessionCommand};
use crate::flow::{Action, FlowMismatch, RunFollowOn, SessionFlow, SessionInput};

/// Turns after which the workflow continues as new (between runs), keeping its history short.
pub const TURNS_PER_RUN: u32 = 100;

/// Numbers each activity's events may use: activity `n` numbers its events after `n * EVENTS_PER_STEP`.
pub const EVENTS_PER_STEP: u64 = 1 << 24;

/// How long a model call or a tool batch may run before it counts as failed.
const STEP_TIMEOUT: Duration = Duration::from_secs(2 * 60 * 60);
/// A step whose worker sent no heartbeat for this long is taken as dead (unless the session says otherwise).
pub const HEARTBEAT_TIMEOUT: Duration = Duration::from_secs(10);

/// What a session workflow starts with (and continues as new with).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStart {
    pub session_id: String,
    /// The agent's flags for this session (model, thinking level, tools, ...).
    pub argv: Vec<String>,
    /// The task queue of the workspace whose worker runs this session's tools.
    pub tool_queue: String,
    /// Seconds without a heartbeat after which a step's worker is taken as dead (default: 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub heartbeat_timeout_secs: Option<u64>,
    /// Turns after which the workflow continues as new, between runs (default: [`TURNS_PER_RUN`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns_per_run: Option<u32>,
    /// The state carried across continue-as-new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carried: Option<Carried>,
}

/// The state a workflow hands to the run it continues as.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Carried {
    pub flow: SessionFlow,
    pub steps: u64,
    pub runs: u64,
    /// The model and thinking level the session was last seen at.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<ModelSettings>,
}

/// What the workflow's `status` query answers.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SessionStatus {
    /// A run is under way and has not reached its end step (pi's `isStreaming`), or a prompt the workflow
    /// took waits to start one (it was answered `started`; its run begins at the next activation).
    pub running: bool,
    pub queued_prompts: usize,
    pub queued_steering: usize,
    pub queued_follow_ups: usize,
    /// Runs that ended since the session began (a run with its auto-retries, fallbacks and output
    /// correction counts once, as the prompt that started it).
    pub runs: u64,
    /// Steps handed to activities so far (step `n` numbers its events after `n * EVENTS_PER_STEP`).
    pub steps: u64,
    /// The model and thinking level of the session's last step or settings command (none before its first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub settings: Option<ModelSettings>,
}

#[workflow]
#[derive(Default)]
pub struct SessionWorkflow {
    flow: SessionFlow,
    inbox: Vec<SessionInput>,
    closing: bool,
    steps: u64,
    runs: u64,
    /// The running run's system prompt, once its first model call worked it out.
    run_system_prompt: Option<String>,
    /// The running run was aborted: its later steps start cancelled (the step under way hears of it
    /// through the event bus, from whoever sent the abort).
    run_aborted: bool,
    /// An abort came while the prompt it follows was waiting: the run that prompt starts starts aborted.
    abort_next_run: bool,
    /// What the session's steps start from (the flags as settings commands left them); set as the run begins.
    start: Option<SessionStart>,
    /// An activity of the main loop is under way (a settings command waits for it).
    stepping: bool,
    /// A settings command's activity is under way (the main loop's next step waits for it).
    commanding: bool,
    /// Settings commands waiting for the step under way to end (the main loop lets them go first).
    commands_waiting: u32,
    /// The model and thinking level of the last model step or settings command (the state reports them).
    settings: Option<ModelSettings>,
}

#[workflow_methods]
impl SessionWorkflow {
    #[run]
    pub async fn run(ctx: &mut WorkflowContext<Self>, start: SessionStart) -> WorkflowResult<()> {
        let heartbeat = start.heartbeat_timeout_secs.map_or(HEARTBEAT_TIMEOUT, Duration::from_secs);
        ctx.state_mut(|state| {
            if let Some(carried) = start.carried.clone() {
                state.flow = carried.flow;
                state.steps = carried.steps;
                state.runs = carried.runs;
                state.settings = carried.settings;
            }
            state.start = Some(SessionStart { carried: None, ..start.clone() });
        });
        let turns_per_run = start.turns_per_run.unwrap_or(TURNS_PER_RUN).max(1);
        loop {
            // Between runs, once enough turns made the history long: the same session goes on as a new run.
            if ctx.state(|state| state.is_idle() && state.flow.turns() >= turns_per_run) {
                let (carried, argv) = ctx.state_mut(|state| {
                    state.flow.reset_turns();
                    let carried = Carried {
                        flow: state.flow.clone(),
                        steps: state.steps,
                        runs: state.runs,
                        settings: state.settings.clone(),
                    };
                    (carried, state.argv())
                });
                let next = SessionStart { carried: Some(carried), argv, ..start.clone() };
                ctx.continue_as_new(next, ContinueAsNewOptions::default())?;
            }
            // Settings commands that wait go before the next step (a run's steps would starve them).
            ctx.wait_condition(|state| state.has_work() && !state.commanding && state.commands_waiting == 0).await?;
            let inputs = ctx.state_mut(|state| {
                state.stepping = true;
                std::mem::take(&mut state.inbox)
            });
            for input in inputs {
                let id = new_entry_id(ctx);
                ctx.state_mut(|state| {
                    // An abort that came before the prompt it follows had started its run (both in one
                    // activation): that run starts aborted, as the client was told it had started.
                    if matches!(input, SessionInput::Abort) && !state.flow.is_running() {
                        state.abort_next_run = state.flow.queued_counts().0 > 0;
                    }
                    state.flow.receive(input, &mut || id.clone());
                });
            }
            let mut ids = (0..2).map(|_| new_entry_id(ctx)).collect::<Vec<_>>();
            let action = ctx.state_mut(|state| {
                let idle = !state.flow.is_running();
                let action = state.flow.next_action(&mut || ids.pop().unwrap_or_default());
                if idle && state.flow.is_running() {
                    state.run_aborted = std::mem::take(&mut state.abort_next_run);
                }
                action
            });
            let target = ctx.state_mut(|state| {
                state.steps += 1;
                StepTarget {
                    session_id: start.session_id.clone(),
                    argv: state.argv(),
                    event_base: state.steps * EVENTS_PER_STEP,
                    aborted: state.run_aborted,
                    fallback: state.flow.fallback_model().map(str::to_owned),
                }
            });
            match action {
                Action::CallModel { announce, answer_entry_id, retry_attempt } => {
                    let system_prompt = ctx.state(|state| state.run_system_prompt.clone());
                    let step = ModelStep { target, announce, answer_entry_id, system_prompt, retry_attempt };
                    let done =
                        ctx.execute_activity(SessionActivities::call_model, step, model_options(heartbeat)).await?;
                    let mut ids = done.report.tool_call_ids.iter().map(|_| new_entry_id(ctx)).collect::<Vec<_>>();
                    ctx.state_mut(|state| {
                        state.run_system_prompt = done.system_prompt;
                        state.settings = done.settings.or(state.settings.take());
                        let answered = state.flow.model_answered(&done.report, &mut || ids.pop().unwrap_or_default());
                        if !state.flow.is_running() {
                            // The prompt was handled without a run.
                            state.run_system_prompt = None;
                            state.run_aborted = false;
                        }
                        answered
                    })
                    .map_err(mismatch)?;
                }
                Action::RunTools { announce, results, .. } => {
                    let step = ToolsStep { target, announce, results };
                    let options = tool_options(&start.tool_queue, heartbeat);
                    let ran = ctx.execute_activity(SessionActivities::run_tools, step.clone(), options).await;
                    if ran.is_err() {
                        // The batch's worker died or the step failed: what did not finish is marked
                        // interrupted (never run again), and the run goes on.
                        let options = model_options(heartbeat);
                        ctx.execute_activity(SessionActivities::interrupt_tools, step, options).await?;
                    }
                    ctx.state_mut(|state| state.flow.tools_ran()).map_err(mismatch)?;
                }
                Action::FinishRun { announce, run_entries, retry_attempt, check_output, fallbacks_tried } => {
                    let step =
                        FinishStep { target, announce, run_entries, retry_attempt, check_output, fallbacks_tried };
                    let options = model_options(heartbeat);
                    let follow_on = ctx.execute_activity(SessionActivities::finish_run, step, options).await?;
                    // A correction's message is an entry the workflow names, as a prompt's is.
                    let correction_id =
                        matches!(follow_on, Some(RunFollowOn::Correct { .. })).then(|| new_entry_id(ctx));
                    ctx.state_mut(|state| {
                        if follow_on.is_none() {
                            state.settle_run();
                        }
                        state.flow.run_finished(follow_on.as_ref(), &mut || correction_id.clone().unwrap_or_default())
                    })
                    .map_err(mismatch)?;
                }
                Action::Backoff { delay_ms, .. } => {
                    // No activity: the wait is a durable timer, and settings commands may go meanwhile.
                    ctx.state_mut(|state| {
                        state.steps -= 1;
                        state.stepping = false;
                    });
                    let aborted = retry_delay(ctx, Duration::from_millis(delay_ms)).await;
                    ctx.state_mut(|state| state.flow.backoff_over(aborted)).map_err(mismatch)?;
                }
                Action::CancelRetry { attempt } => {
                    let step = CancelRetryStep { target, attempt };
                    ctx.execute_activity(SessionActivities::cancel_retry, step, model_options(heartbeat)).await?;
                    ctx.state_mut(|state| {
                        state.settle_run();
                        state.flow.retry_cancelled()
                    })
                    .map_err(mismatch)?;
                }
                _ => {
                    ctx.state_mut(|state| {
                        state.steps -= 1;
                        state.stepping = false;
                    });
                    if ctx.state(|state| state.closing && state.inbox.is_empty()) {
                        return Ok(());
                    }
                }
            }
            ctx.state_mut(|state| state.stepping = false);
        }
    }

    /// A settings command (model, thinking level, name, compaction, fork, clone): carried out once no step is
    /// under way, before the next one starts; a model or thinking change holds for every later step.
    #[update]
    pub async fn command(ctx: &mut WorkflowContext<Self>, command: SessionCommand) -> CommandDone {
        ctx.state_mut(|state| state.commands_waiting += 1);
        let ready = ctx.wait_condition(|state| state.start.is_some() && !state.stepping && !state.commanding).await;
        ctx.state_mut(|state| state.commands_waiting -= 1);
        if let Err(error) = ready {
            return CommandDone::failed(format!("the session ended first: {error:?}"));
        }
        let (step, heartbeat) = ctx.state_mut(|state| {
            state.commanding = true;
            state.steps += 1;
            let start = state.start.clone().unwrap_or_default();
            let heartbeat = start.heartbeat_timeout_secs.map_or(HEARTBEAT_TIMEOUT, Duration::from_secs);
            let target = StepTarget {
                session_id: start.session_id.clone(),
                argv: state.argv(),
                event_base: state.steps * EVENTS_PER_STEP,
                aborted: false,
                fallback: None,
            };
            (CommandStep { target, command }, heartbeat)
        });
        let done = ctx.execute_activity(SessionActivities::run_command, step, model_options(heartbeat)).await;
        let done = done.unwrap_or_else(|error| CommandDone::failed(format!("the command's step failed: {error:?}")));
        ctx.state_mut(|state| {
            state.commanding = false;
            if let (Some(argv), Some(start)) = (&done.argv, state.start.as_mut()) {
                start.argv = argv.clone();
            }
            if done.settings.is_some() {
                state.settings = done.settings.clone();
            }
        });
        done
    }

    /// A prompt, steering, a follow-up or an abort (which makes the running run's later steps start
    /// cancelled; the sender also tells the step under way, through the event bus).
    #[signal]
    pub fn input(&mut self, _ctx: &mut SyncWorkflowContext<Self>, input: SessionInput) {
        if matches!(input, SessionInput::Abort) && self.flow.is_running() {
            self.run_aborted = true;
        }
        self.inbox.push(input);
    }

    /// A prompt that must not wait behind another: taken (and `true`) only when no run streams and no prompt
    /// waits, decided in the workflow so two API replicas cannot both start one.
    #[update]
    pub fn prompt_if_idle(&mut self, _ctx: &mut SyncWorkflowContext<Self>, input: SessionInput) -> bool {
        let waiting = self.flow.queued_counts().0 > 0 || self.has_prompt_in_inbox();
        if self.flow.is_streaming() || waiting || !matches!(input, SessionInput::Prompt { .. }) {
            return false;
        }
        self.inbox.push(input);
        true
    }

    /// Ends the workflow once the session is idle (the session's data stays in the store).
    #[signal]
    pub fn close(&mut self, _ctx: &mut SyncWorkflowContext<Self>) {
        self.closing = true;
    }

    #[query]
    pub fn status(&self, _ctx: &WorkflowContextView) -> SessionStatus {
        let (queued_prompts, queued_steering, queued_follow_ups) = self.flow.queued_counts();
        SessionStatus {
            running: self.flow.is_streaming() || queued_prompts > 0 || self.has_prompt_in_inbox(),
            queued_prompts,
            queued_steering,
            queued_follow_ups,
            runs: self.runs,
            steps: self.steps,
            settings: self.settings.clone(),
        }
    }
}

impl SessionWorkflow {
    /// A run ended with nothing to follow it (no retry, fallback or correction): the next starts afresh.
    fn settle_run(&mut self) {
        self.run_system_prompt = None;
        self.run_aborted = false;
        self.runs += 1;
    }

    /// No run under way and nothing waiting to start one.
    fn is_idle(&self) -> bool {
        !self.flow.is_running()
            && self.flow.queued_counts().0 == 0
            && self.inbox.is_empty()
            && !self.closing
            && !self.commanding
            && self.commands_waiting == 0
    }

    /// A prompt arrived and waits in the inbox for the main loop.
    fn has_prompt_in_inbox(&self) -> bool {
        self.inbox.iter().any(|input| matches!(input, SessionInput::Prompt { .. }))
    }

    /// The flags the session's next step opens it with.
    fn argv(&self) -> Vec<String> {
        self.start.as_ref().map(|start| start.argv.clone()).unwrap_or_default()
    }

    fn has_work(&self) -> bool {
        !self.inbox.is_empty() || self.flow.is_running() || self.flow.queued_counts().0 > 0 || self.closing
    }
}

/// Waits `delay` before a retry; an abort of the run cuts it short (returns `true`).
async fn retry_delay(ctx: &WorkflowContext<SessionWorkflow>, delay: Duration) -> bool {
    let mut timer = std::pin::pin!(ctx.timer(delay));
    let mut aborted = std::pin::pin!(ctx.wait_condition(|state| state.run_aborted));
    let cut_short = temporalio_sdk::workflows::select! {
        _ = aborted => true,
        _ = timer => false,
    };
    if cut_short {
        temporalio_sdk::CancellableFuture::cancel(&*timer);
    }
    cut_short
}

/// The flow and an activity's outcome disagree: the workflow fails (a bug, or a history from another
/// version), rather than guess.
fn mismatch(error: FlowMismatch) -> ApplicationFailure {
    ApplicationFailure::non_retryable(error)
}

/// Model calls are retried this often (the provider's own retries come first, inside the call).
const MODEL_ATTEMPTS: u32 = 5;

/// An entry id as pi writes them (eight hex digits), from the workflow's deterministic random source.
fn new_entry_id(ctx: &WorkflowContext<SessionWorkflow>) -> String {
    format!("{:08x}", ctx.random::<u32>())
}

/// Model calls (and the session's other steps) run on the sessions' queue and are retried.
fn model_options(heartbeat: Duration) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(STEP_TIMEOUT)
        .heartbeat_timeout(heartbeat)
        .retry_policy(RetryPolicy::builder().maximum_attempts(MODEL_ATTEMPTS).build())
        .build()
}

/// A tool batch runs on its workspace's queue, once.
fn tool_options(queue: &str, heartbeat: Duration) -> ActivityOptions {
    ActivityOptions::with_start_to_close_timeout(STEP_TIMEOUT)
        .heartbeat_timeout(heartbeat)
        .task_queue(queue.to_owned())
        .retry_policy(RetryPolicy::builder().maximum_attempts(1).build())
        .build()
}
