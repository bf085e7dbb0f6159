//! The coding-agent session around an [`crate::agent::Agent`]: what pi's `AgentSession` adds to the bare
//! loop: session persistence, auto-retry, auto and manual compaction, and tree navigation.

mod auto_retry;
mod compaction_check;
mod controls;
mod dynamic_tools;
mod fallback;
mod hooks;
mod link;
mod navigation;
mod pipeline;
mod preferences;
mod recovery;
mod session;
mod steps;
mod structured_output;
mod summarize;
mod switching;
mod system_record;

#[cfg(test)]
mod tests_compaction;
#[cfg(test)]
mod tests_pipeline;
#[cfg(test)]
mod tests_session;

#[cfg(test)]
mod tests_retry;

pub use auto_retry::{
    RetryDecision, RetryProbe, RetrySettings, RetryState, SessionEventSink, run_with_auto_retry,
    run_with_auto_retry_probed,
};
pub use controls::{ContextUsage, SessionNameError, SessionStats, SubagentUsage, TokenTotals};
pub use dynamic_tools::{DynamicTools, PromptGate, PromptGateFn};
pub use fallback::{FallbackChain, FallbackModel, FallbackResolver};
pub use link::SessionListener;
pub use navigation::Navigation;
pub use pipeline::{PreparedRun, PromptOptions, StreamingBehavior};
pub use preferences::{Preference, PreferenceStore, PreferenceStoreHandle};
pub use recovery::TOOL_INTERRUPTED;
pub use session::{AgentSession, NOTHING_TO_COMPACT, PromptExpander, SessionExtras, SessionSettings};
pub use steps::{SteppedChain, SteppedRunEnd};
pub use structured_output::{OUTPUT_CORRECTION_TYPE, OutputSchema, answer_text};
pub use switching::{ForkError, ForkOutcome};
