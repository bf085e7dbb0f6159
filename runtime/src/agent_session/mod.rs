//! The coding-agent session around an [`crate::agent::Agent`]: what pi's `AgentSession` adds to the bare
//! loop (auto-retry so far; persistence and compaction build on it).

mod auto_retry;
mod session;

#[cfg(test)]
mod tests_retry;

pub use auto_retry::{RetryDecision, RetrySettings, RetryState, SessionEventSink, run_with_auto_retry};
pub use session::{AgentSession, SessionSettings};
