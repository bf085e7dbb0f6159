//! A session's event stream for `GET .../events`: every line the session printed would print in `--mode json`
//! (plus RPC's queue updates and extension UI requests), numbered from 1, kept up to a byte budget so a
//! client that reconnects with `Last-Event-ID` gets what it missed.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::Stream;
use tokio::sync::watch;

/// The bytes of events a session keeps for clients that reconnect; older ones are dropped first.
pub const EVENT_BUDGET_BYTES: usize = 4 * 1024 * 1024;

/// A session's numbered events.
#[derive(Debug)]
pub struct EventLog {
    state: Mutex<LogState>,
    /// The newest sequence number, watched by the streams; `closed` once the session is gone.
    latest: watch::Sender<Latest>,
    budget: usize,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Latest {
    seq: u64,
    closed: bool,
}

#[derive(Debug, Default)]
struct LogState {
    events: VecDeque<(u64, Arc<str>)>,
    bytes: usize,
    next: u64,
}

impl EventLog {
    pub fn new(budget: usize) -> Self {
        let (latest, _) = watch::channel(Latest::default());
        Self { state: Mutex::new(LogState { next: 1, ..LogState::default() }), latest, budget }
    }

    /// Appends one event line; returns its number.
    pub fn push(&self, line: String) -> u64 {
        let seq = {
            let mut state = self.lock();
            let seq = state.next;
            state.next += 1;
            state.bytes += line.len();
            state.events.push_back((seq, Arc::from(line)));
            // The newest event always stays, however large.
            while state.bytes > self.budget && state.events.len() > 1 {
                if let Some((_, dropped)) = state.events.pop_front() {
                    state.bytes -= dropped.len();
                }
            }
            seq
        };
        self.latest.send_modify(|latest| latest.seq = seq);
        seq
    }

    /// The events numbered above `after` that are still kept, oldest first.
    pub fn after(&self, after: u64) -> Vec<(u64, Arc<str>)> {
        let state = self.lock();
        let start = state.events.partition_point(|(seq, _)| *seq <= after);
        state.events.range(start..).cloned().collect()
    }

    /// Ends every stream (the session was closed or deleted).
    pub fn close(&self) {
        self.latest.send_modify(|latest| latest.closed = true);
    }

    /// The bytes of events kept.
    #[cfg(test)]
    pub fn kept_bytes(&self) -> usize {
        self.lock().bytes
    }

    /// The events after `after` (numbers and lines), then each new one as it comes, until the session is
    /// closed.
    pub fn stream(self: Arc<Self>, after: u64) -> impl Stream<Item = (u64, Arc<str>)> + Send + 'static {
        let watcher = self.latest.subscribe();
        let state = (self, watcher, after, VecDeque::<(u64, Arc<str>)>::new());
        futures_util::stream::unfold(state, |(log, mut watcher, mut after, mut ready)| async move {
            loop {
                if let Some((seq, line)) = ready.pop_front() {
                    after = seq;
                    return Some(((seq, line), (log, watcher, after, ready)));
                }
                // Marked seen before reading, so an event pushed meanwhile wakes the wait below.
                let latest = *watcher.borrow_and_update();
                ready.extend(log.after(after));
                if !ready.is_empty() {
                    continue;
                }
                if latest.closed || watcher.changed().await.is_err() {
                    return None;
                }
            }
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LogState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::*;

    #[test]
    fn events_are_numbered_and_old_ones_go_over_the_budget() {
        let log = EventLog::new(10);
        assert_eq!(log.push("aaaa".into()), 1);
        assert_eq!(log.push("bbbb".into()), 2);
        assert_eq!(log.push("cccc".into()), 3);
        let kept: Vec<u64> = log.after(0).into_iter().map(|(seq, _)| seq).collect();
        assert_eq!(kept, [2, 3]);
        assert_eq!(log.kept_bytes(), 8);
        assert_eq!(log.after(2).len(), 1);
        log.push("a line longer than the budget".into());
        assert_eq!(log.after(0).len(), 1, "the newest stays");
    }

    #[tokio::test]
    async fn a_stream_resumes_after_a_number_and_ends_when_closed() {
        let log = Arc::new(EventLog::new(EVENT_BUDGET_BYTES));
        log.push("one".into());
        log.push("two".into());
        let mut stream = Box::pin(log.clone().stream(1));
        let first = stream.next().await.expect("an event");
        assert_eq!((first.0, &*first.1), (2, "two"));
        let pusher = log.clone();
        tokio::spawn(async move {
            pusher.push("three".into());
            pusher.close();
        });
        let third = stream.next().await.expect("an event");
        assert_eq!((third.0, &*third.1), (3, "three"));
        assert!(stream.next().await.is_none(), "closed");
    }
}
