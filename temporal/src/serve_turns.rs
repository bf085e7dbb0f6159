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
use tokio::sync::{OwnedSemaphorePermit, watch};
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use crate::client::SessionClient;

/// How often a turn that has not ended yet asks whether its session went idle without telling.
const IDLE_CHECK_EVERY: Duration = Duration::from_secs(5);

/// A turn being followed: its task, and how many `agent_end`s it has seen (the count stops, and reads as
/// closed, once the task ends).
pub(crate) struct FollowedTurn {
    task: JoinHandle<()>,
    run_ends: watch::Receiver<u64>,
}

/// Follows the turn just sent to session `id` (whose events were numbered up to `after` before it): holds
/// `permit` and counts the turn until its run ends or the server stops.
pub(crate) fn follow_turn(
    client: Arc<SessionClient>,
    metrics: Arc<Metrics>,
    stopping: CancellationToken,
    id: String,
    after: u64,
    permit: OwnedSemaphorePermit,
) -> FollowedTurn {
    let started = Instant::now();
    let (run_ended, run_ends) = watch::channel(0);
    let task = tokio::spawn(async move {
        let mut permit = Some(permit);
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
                        // A run that pi 1.5 says will be retried goes on after its delay, as the same turn.
                        Ok(AgentEvent::AgentEnd { will_retry: Some(true), .. }) => {}
                        Ok(AgentEvent::AgentEnd { .. }) => {
                            // The turn's own run, or the one before it (the prompt waited behind it).
                            let own = seen_start;
                            if own {
                                metrics.turn_finished(started.elapsed());
                                drop(permit.take());
                            }
                            run_ended.send_modify(|ends| *ends += 1);
                            if own {
                                return;
                            }
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
    });
    FollowedTurn { task, run_ends }
}

/// The turns this replica follows, by session, so that an abort can wait for the run it stops.
#[derive(Default)]
pub(crate) struct FollowedTurns(Mutex<HashMap<String, Vec<FollowedTurn>>>);

impl FollowedTurns {
    pub(crate) fn add(&self, session: &str, turn: FollowedTurn) {
        if let Ok(mut turns) = self.0.lock() {
            turns.retain(|_, followed| {
                followed.retain(|turn| !turn.task.is_finished());
                !followed.is_empty()
            });
            turns.entry(session.to_owned()).or_default().push(turn);
        }
    }

    /// Waits (at most `limit`) until every turn of `session` this replica follows has seen the run under way
    /// end (a turn whose run that was has let its permit go by then) or has ended.
    pub(crate) async fn run_ended(&self, session: &str, limit: Duration) {
        let watching: Vec<watch::Receiver<u64>> = match self.0.lock() {
            Ok(turns) => turns
                .get(session)
                .map_or_else(Vec::new, |followed| followed.iter().map(|turn| turn.run_ends.clone()).collect()),
            Err(_) => Vec::new(),
        };
        let waits = watching.into_iter().map(|mut ends| async move {
            let seen = *ends.borrow_and_update();
            let _ = ends.wait_for(|now| *now > seen).await;
        });
        let _ = tokio::time::timeout(limit, futures::future::join_all(waits)).await;
    }
}
