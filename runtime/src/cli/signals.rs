//! The signals that end an agent from outside. In print and json mode SIGINT, SIGTERM and SIGHUP stop the run
//! at once, as pi's SIGINT and SIGTERM do (the agent is aborted, so a running tool's process group is killed and
//! the partial answer is saved marked aborted) and the process exits with 128 + the signal's number (130, 143,
//! 129). RPC mode does the same with what its commands started; interactive mode quits on SIGTERM and SIGHUP
//! (Ctrl+C is a key there). A second signal while the abort settles exits at once.

use std::time::Duration;

use tokio::signal::unix::{Signal, SignalKind, signal};

/// How long an aborted run may take to save what it has before the process exits anyway.
pub const SETTLE_TIMEOUT: Duration = Duration::from_secs(5);

/// The signals that stop a run.
pub struct StopSignals {
    interrupt: Option<Signal>,
    terminate: Signal,
    hangup: Signal,
}

impl StopSignals {
    /// Takes over SIGINT, SIGTERM and SIGHUP (until dropped, their default action, death, no longer happens).
    pub fn install() -> std::io::Result<Self> {
        Ok(Self {
            interrupt: Some(signal(SignalKind::interrupt())?),
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
        })
    }

    /// SIGTERM and SIGHUP only: for the interactive mode, where Ctrl+C is a key (SIGINT keeps its default action,
    /// so what it did before, e.g. to an external editor run from Ctrl+G, is unchanged).
    pub fn install_without_interrupt() -> std::io::Result<Self> {
        Ok(Self { interrupt: None, terminate: signal(SignalKind::terminate())?, hangup: signal(SignalKind::hangup())? })
    }

    /// Waits for the next signal; returns the exit code it means (128 + its number).
    pub async fn next(&mut self) -> u8 {
        let interrupt = async {
            match self.interrupt.as_mut() {
                Some(interrupt) => interrupt.recv().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = interrupt => 130,
            _ = self.terminate.recv() => 143,
            _ = self.hangup.recv() => 129,
        }
    }
}
