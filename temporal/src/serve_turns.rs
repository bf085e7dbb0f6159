//! The turns a `serve --engine temporal` replica started: each holds one of the replica's turns
//! (`--max-turns`) until its run ends, and is counted in `/metrics` (tokens, errors, latency), as embedded
//! `serve` counts the turns of its sessions. A replica learns that a run ended from the session's events
//! (its `agent_end`), with a look at the workflow's status now and then in case no run started at all (a
//! repeated idempotency key) or the events were lost.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pi_runtime::cli::serve::Metrics;
use pi_runtime::protocol::AgentEvent;
use tokio::sync::OwnedSemaphorePermit;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::client::SessionClient;

/// How often a turn that has not ended yet asks whether its session went idle without telling.
const IDLE_CHECK_EVERY: Duration = Duration::from_secs(5);

/// Follows the turn just sent to session `id` (whose events were numbered up to `after` before it): holds
/// `permit` and counts the turn until its run ends or the server stops.
pub(crate) fn follow_turn(
    client: Arc<SessionClient>,
    metrics: Arc<Metrics>,
    stopping: CancellationToken,
    id: String,
    after: u64,
    permit: OwnedSemaphorePermit,
) -> JoinHandle<()> {
    let started = Instant::now();
    tokio::spawn(async move {
        let _permit = permit;
        let mut watch = match client.bus().watch(&id, after).await {
            Ok(watch) => watch,
            Err(error) => {
                eprintln!("Warning: the turn of session {id} cannot be followed: {error}");
                return;
            }
        };
        let mut idle_check = tokio::time::interval(IDLE_CHECK_EVERY);
        idle_check.tick().await;
        let mut seen_start = false;
        loop {
            tokio::select! {
                event = watch.next() => {
                    let Some(Ok((_, line))) = event else { return };
                    // Only these matter here; the rest (deltas above all) are not parsed.
                    let wanted = ["agent_start", "agent_end", "message_end"]
                        .iter()
                        .any(|kind| line.strip_prefix(r#"{"type":""#).is_some_and(|rest| rest.starts_with(kind)));
                    if !wanted {
                        continue;
                    }
                    match serde_json::from_str::<AgentEvent>(&line) {
                        Ok(AgentEvent::AgentStart) => seen_start = true,
                        Ok(AgentEvent::AgentEnd { .. }) if seen_start => {
                            metrics.turn_finished(started.elapsed());
                            return;
                        }
                        Ok(event) => metrics.observe(&event),
                        Err(_) => {}
                    }
                }
                _ = idle_check.tick() => {
                    let idle = client.status(&id).await.is_ok_and(|s| !s.running && s.queued_prompts == 0);
                    if idle {
                        return;
                    }
                }
                () = stopping.cancelled() => return,
            }
        }
    })
}

/// The turns this replica follows, by session, so that an abort can wait for them to end.
#[derive(Default)]
pub(crate) struct FollowedTurns(Mutex<HashMap<String, Vec<JoinHandle<()>>>>);

impl FollowedTurns {
    pub(crate) fn add(&self, session: &str, turn: JoinHandle<()>) {
        if let Ok(mut turns) = self.0.lock() {
            turns.retain(|_, handles| {
                handles.retain(|handle| !handle.is_finished());
                !handles.is_empty()
            });
            turns.entry(session.to_owned()).or_default().push(turn);
        }
    }

    /// Waits (at most `limit`) until the turns of `session` this replica follows have ended.
    pub(crate) async fn ended(&self, session: &str, limit: Duration) {
        let handles = self.0.lock().ok().and_then(|mut turns| turns.remove(session)).unwrap_or_default();
        let _ = tokio::time::timeout(limit, futures::future::join_all(handles)).await;
    }
}
