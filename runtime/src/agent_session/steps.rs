//! A run whose loop a driver keeps elsewhere (a durable workflow): the session carries out one step at a
//! time ([`crate::agent::Agent::run_step`]), recording each message under the id the driver named for it.

use super::AgentSession;
use crate::agent::{AgentError, StepReport, StepRequest};
use crate::session::PlannedIds;

impl AgentSession {
    /// Carries out one step; the messages it records take the `ids` the driver named (see [`PlannedIds`]),
    /// so a repeated step writes the same entries.
    pub async fn run_step(&self, request: StepRequest, ids: PlannedIds) -> Result<StepReport, AgentError> {
        self.manager().plan_message_ids(ids);
        let report = self.agent.run_step(request).await;
        self.manager().plan_message_ids(PlannedIds::default());
        report
    }

    /// What the session does once a stepped run ended: the compaction check after a run, then (at level
    /// 1.5) `agent_settled`.
    pub async fn finish_stepped_run(&self) -> Result<(), AgentError> {
        let outcome = self.check_compaction_after_run().await;
        self.report_settled();
        outcome
    }
}
