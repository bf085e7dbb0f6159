//! The end of a run on a worker: `agent_end` with the run's messages (its entries, named by the workflow),
//! then what pi decides after a run, handed back to the workflow to carry out: an auto-retry after a
//! delay (the workflow's durable timer), a fallback model taking over, an output correction (the next
//! run's prompt), or nothing.

use std::collections::HashMap;

use pi_runtime::agent::{AgentError, StepWork};
use pi_runtime::agent_session::{SteppedChain, SteppedRunEnd};
use pi_runtime::protocol::AgentMessage;
use pi_runtime::session::{SessionEntry, entry_message};

use super::activities::{FinishStep, announced};
use super::step_host::OpenStep;
use crate::flow::RunFollowOn;

/// Ends the run of `step` on the opened session; `None` when the session settled.
pub(super) async fn finish(open: &OpenStep, step: &FinishStep) -> Result<Option<RunFollowOn>, AgentError> {
    let run_messages = {
        let manager = open.session.manager();
        let by_id: HashMap<&str, &SessionEntry> =
            manager.entries().iter().map(|entry| (entry.id.as_str(), entry)).collect();
        step.run_entries.iter().filter_map(|id| by_id.get(id.as_str()).and_then(|entry| entry_message(entry))).collect()
    };
    let request = announced(&step.announce, StepWork::FinishRun { run_messages });
    let chain = SteppedChain {
        retry_attempt: step.retry_attempt,
        check_output: step.check_output,
        fallbacks_tried: usize::try_from(step.fallbacks_tried).unwrap_or(usize::MAX),
        aborted: step.target.aborted,
    };
    let end = open.session.finish_stepped_run(request, chain).await?;
    Ok(follow_on(end))
}

/// What the workflow carries out after a run's end.
fn follow_on(end: SteppedRunEnd) -> Option<RunFollowOn> {
    match end {
        SteppedRunEnd::Retry { attempt, delay } => {
            Some(RunFollowOn::Retry { attempt, delay_ms: u64::try_from(delay.as_millis()).unwrap_or(u64::MAX) })
        }
        SteppedRunEnd::Correct { correction } => match *correction {
            AgentMessage::Custom(message) => {
                Some(RunFollowOn::Correct { custom_type: message.custom_type, text: message.content.text() })
            }
            _ => None,
        },
        SteppedRunEnd::Fallback { model, tried } => {
            Some(RunFollowOn::Fallback { model, tried: u32::try_from(tried).unwrap_or(u32::MAX) })
        }
        _ => None,
    }
}
