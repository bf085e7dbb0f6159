//! SIGINT and SIGTERM in print and json mode, as pi handles them: the run stops at once (the agent is aborted,
//! so a running tool's process group is killed and the partial answer is saved marked aborted) and the
//! process exits with 130 or 143. A second signal while the abort settles exits at once.

use std::time::Duration;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// How long an aborted run may take to save what it has before the process exits anyway.
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// The signals that stop a run.
pub struct StopSignals {
    interrupt: Signal,
    terminate: Signal,
}

impl StopSignals {
    /// Takes over SIGINT and SIGTERM (until dropped, their default action, death, no longer happens).
    pub fn install() -> std::io::Result<Self> {
        Ok(Self { interrupt: signal(SignalKind::interrupt())?, terminate: signal(SignalKind::terminate())? })
    }

    /// Waits for the next signal; returns the exit code it means (128 + its number).
    pub async fn next(&mut self) -> u8 {
        tokio::select! {
            _ = self.interrupt.recv() => 130,
            _ = self.terminate.recv() => 143,
        }
    }
}
