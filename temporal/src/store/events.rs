//! A session's events across machines, through Postgres: whoever runs a step publishes its events, and
//! every API replica with a client on that session receives them at once through `LISTEN`/`NOTIFY` (one
//! channel per session, listened to while someone watches it). Every event is also kept (`pi_events`), so a
//! client that reconnects gets what it missed. The session's events are numbered 1, 2, 3, ... in the order
//! they were published, as embedded `serve` numbers them; a publisher names each event by a number of its
//! own (its source), which is stored once, so a step that runs again publishes nothing twice. An event too
//! big for a notification travels as its number alone and is read back.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use deadpool_postgres::Pool;
use tokio::sync::broadcast;
use tokio_postgres::{AsyncMessage, NoTls};

use super::notices::{AbortNotices, DialogAnswers, Notices};
use super::postgres::{WAS_DELETED, pooled_client, postgres_error};
use super::{StoreError, check_session_id};

/// The notification that asks a session's running step to abort (event number 0, see
/// [`EventBus::request_abort`]).
const ABORT_NOTICE: &str = "0 abort";
/// What begins the notice carrying an answer to an extension dialog (after its number, 0).
pub(super) const DIALOG_NOTICE: &str = "ui ";

/// Postgres refuses notification payloads of 8000 bytes or more.
const NOTIFY_LIMIT: usize = 7900;

/// Live events a listener keeps for a slow watcher before it misses some (it then reads them back).
const LIVE_BUFFER: usize = 1024;

/// Publishes and watches the events of sessions in one database.
#[derive(Clone)]
pub struct EventBus {
    pool: Pool,
    config: Arc<tokio_postgres::Config>,
    /// The listening connection, made at the first watch and made again when it broke.
    listener: Arc<tokio::sync::Mutex<Option<Arc<Listener>>>>,
}

impl std::fmt::Debug for EventBus {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("EventBus").finish_non_exhaustive()
    }
}

/// The connection that listens, and who watches which session.
pub(super) struct Listener {
    client: tokio_postgres::Client,
    sessions: Arc<Mutex<HashMap<String, broadcast::Sender<Live>>>>,
    /// Joins one at a time, so a second watcher of a session starts only once the channel is listened to.
    joining: tokio::sync::Mutex<()>,
}

/// A notification: the event's number, and the event unless it was too big to travel in it.
#[derive(Debug, Clone)]
pub(super) struct Live {
    pub(super) id: u64,
    pub(super) body: Option<Arc<str>>,
}

impl EventBus {
    pub(super) fn new(pool: Pool, config: Arc<tokio_postgres::Config>) -> Self {
        Self { pool, config, listener: Arc::default() }
    }

    /// Sends event `source` (a JSON line; `source` is the publisher's own number for it) of `session` to
    /// everyone watching it, and keeps it; an event published before under the same source is skipped.
    pub async fn publish(&self, session: &str, source: u64, body: &str) -> Result<(), StoreError> {
        self.publish_all(session, &[(source, body.to_owned())]).await
    }

    /// [`EventBus::publish`] for several events at once, in order, in one transaction.
    pub async fn publish_all(&self, session: &str, events: &[(u64, String)]) -> Result<(), StoreError> {
        check_session_id(session)?;
        if events.is_empty() {
            return Ok(());
        }
        let sources = events
            .iter()
            .map(|(source, _)| {
                i64::try_from(*source).map_err(|_| StoreError::invalid(format!("event number {source} is too big")))
            })
            .collect::<Result<Vec<i64>, _>>()?;
        let mut client = pooled_client(&self.pool).await?;
        let transaction = client.transaction().await.map_err(postgres_error)?;
        // The session's counter row is locked first, so publishers of one session take turns, and one that
        // repeats a step sees what the other stored.
        let last: i64 = transaction
            .query_one(
                "INSERT INTO pi_event_counters (session_id, last) VALUES ($1, 0)
                 ON CONFLICT (session_id) DO UPDATE SET last = pi_event_counters.last RETURNING last",
                &[&session],
            )
            .await
            .map_err(postgres_error)?
            .get(0);
        // A deleted session's events went with it; those of a step still running are dropped (rolled back).
        let deleted: bool = transaction.query_one(WAS_DELETED, &[&session]).await.map_err(postgres_error)?.get(0);
        if deleted {
            return Ok(());
        }
        let published: Vec<i64> = transaction
            .query("SELECT source FROM pi_events WHERE session_id = $1 AND source = ANY($2)", &[&session, &sources])
            .await
            .map_err(postgres_error)?
            .iter()
            .map(|row| row.get(0))
            .collect();
        let (mut numbers, mut new_sources, mut bodies, mut payloads) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for ((_, body), source) in events.iter().zip(&sources) {
            if published.contains(source) || new_sources.contains(source) {
                continue;
            }
            let number = last + 1 + i64::try_from(numbers.len()).unwrap_or(i64::MAX - last - 1);
            let whole = format!("{number} {body}");
            payloads.push(if whole.len() < NOTIFY_LIMIT { whole } else { number.to_string() });
            numbers.push(number);
            new_sources.push(*source);
            bodies.push(body.as_str());
        }
        let Some(&last_number) = numbers.last() else { return Ok(()) };
        transaction
            .execute(
                "INSERT INTO pi_events (session_id, number, source, body)
                 SELECT $1::text, * FROM unnest($2::bigint[], $3::bigint[], $4::text[])",
                &[&session, &numbers, &new_sources, &bodies],
            )
            .await
            .map_err(postgres_error)?;
        transaction
            .execute("UPDATE pi_event_counters SET last = $2 WHERE session_id = $1", &[&session, &last_number])
            .await
            .map_err(postgres_error)?;
        // Notifications leave at commit, in the order they were made.
        transaction
            .execute(
                "SELECT pg_notify($1, payload) FROM unnest($2::text[]) WITH ORDINALITY AS p(payload, n) ORDER BY n",
                &[&channel_name(session), &payloads],
            )
            .await
            .map_err(postgres_error)?;
        transaction.commit().await.map_err(postgres_error)
    }

    /// The number of the session's last event (0 before the first).
    pub async fn last_number(&self, session: &str) -> Result<u64, StoreError> {
        check_session_id(session)?;
        let client = pooled_client(&self.pool).await?;
        let row = client
            .query_opt("SELECT last FROM pi_event_counters WHERE session_id = $1", &[&session])
            .await
            .map_err(postgres_error)?;
        Ok(row.map_or(0, |row| u64::try_from(row.get::<_, i64>(0)).unwrap_or(0)))
    }

    /// Asks whoever runs step `step` of `session` (any step of it, with `None`) to abort it. The notice
    /// travels on the session's channel as number 0, which event watchers never give out (numbers start at
    /// 1); it is not kept, so a sender repeats it until the step is over (see `SessionClient::send`).
    pub async fn request_abort(&self, session: &str, step: Option<u64>) -> Result<(), StoreError> {
        check_session_id(session)?;
        let client = pooled_client(&self.pool).await?;
        let channel = channel_name(session);
        let notice = match step {
            Some(step) => format!("{ABORT_NOTICE} {step}"),
            None => ABORT_NOTICE.to_owned(),
        };
        client.execute("SELECT pg_notify($1, $2)", &[&channel, &notice]).await.map_err(postgres_error)?;
        Ok(())
    }

    /// Listens for [`EventBus::request_abort`] on `session` (from now on), as step `step` of it.
    pub async fn abort_notices(&self, session: &str, step: u64) -> Result<AbortNotices, StoreError> {
        Ok(AbortNotices { notices: self.notices(session).await?, step })
    }

    /// Sends the answer to one of `session`'s extension dialogs (an `extension_ui_response` line) to the step
    /// that waits for it. Like an abort, the answer travels as a notice and is not kept: the step listens
    /// before it shows the dialog, so an answer to a dialog a client saw reaches it.
    pub async fn answer_dialog(&self, session: &str, line: &str) -> Result<(), StoreError> {
        check_session_id(session)?;
        let notice = format!("0 {DIALOG_NOTICE}{line}");
        if notice.len() >= NOTIFY_LIMIT {
            return Err(StoreError::Invalid(format!(
                "a dialog's answer is {} bytes; the event bus carries at most {NOTIFY_LIMIT}",
                line.len()
            )));
        }
        let client = pooled_client(&self.pool).await?;
        let channel = channel_name(session);
        client.execute("SELECT pg_notify($1, $2)", &[&channel, &notice]).await.map_err(postgres_error)?;
        Ok(())
    }

    /// Listens for answers to `session`'s extension dialogs (from now on).
    pub async fn dialog_answers(&self, session: &str) -> Result<DialogAnswers, StoreError> {
        Ok(DialogAnswers { notices: self.notices(session).await? })
    }

    async fn notices(&self, session: &str) -> Result<Notices, StoreError> {
        check_session_id(session)?;
        let listener = self.listener().await?;
        let live = listener.join(session).await?;
        Ok(Notices { listener, session: session.to_owned(), live: Some(live) })
    }

    async fn listener(&self) -> Result<Arc<Listener>, StoreError> {
        let mut current = self.listener.lock().await;
        match current.as_ref().filter(|listener| !listener.client.is_closed()) {
            Some(listener) => Ok(listener.clone()),
            None => {
                let listener = Arc::new(Listener::connect(&self.config).await?);
                *current = Some(listener.clone());
                Ok(listener)
            }
        }
    }

    /// Watches `session`: first the events numbered after `after`, then live ones as they come.
    pub async fn watch(&self, session: &str, after: u64) -> Result<EventWatch, StoreError> {
        check_session_id(session)?;
        let listener = self.listener().await?;
        // Listening before reading back: an event published meanwhile comes both ways, and is given once.
        let live = listener.join(session).await?;
        let replay = self.kept_after(session, after).await?;
        Ok(EventWatch {
            bus: self.clone(),
            listener,
            session: session.to_owned(),
            replay: replay.into_iter(),
            live: Some(live),
            last: after,
        })
    }

    async fn kept_after(&self, session: &str, after: u64) -> Result<Vec<(u64, String)>, StoreError> {
        let client = pooled_client(&self.pool).await?;
        let after = i64::try_from(after).unwrap_or(i64::MAX);
        let rows = client
            .query(
                "SELECT number, body FROM pi_events WHERE session_id = $1 AND number > $2 ORDER BY number",
                &[&session, &after],
            )
            .await
            .map_err(postgres_error)?;
        Ok(rows.iter().map(|row| (u64::try_from(row.get::<_, i64>(0)).unwrap_or(0), row.get(1))).collect())
    }

    async fn kept_event(&self, session: &str, id: u64) -> Result<Option<String>, StoreError> {
        let client = pooled_client(&self.pool).await?;
        let number = i64::try_from(id).unwrap_or(i64::MAX);
        let row = client
            .query_opt("SELECT body FROM pi_events WHERE session_id = $1 AND number = $2", &[&session, &number])
            .await
            .map_err(postgres_error)?;
        Ok(row.map(|row| row.get(0)))
    }
}

impl Listener {
    async fn connect(config: &tokio_postgres::Config) -> Result<Self, StoreError> {
        let (client, mut connection) = config.connect(NoTls).await.map_err(postgres_error)?;
        let sessions: Arc<Mutex<HashMap<String, broadcast::Sender<Live>>>> = Arc::default();
        let routes = sessions.clone();
        // The connection's messages: notifications go to the session's watchers.
        tokio::spawn(async move {
            while let Some(Ok(message)) = std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                let AsyncMessage::Notification(note) = message else { continue };
                let Some(live) = Live::parse(note.payload()) else { continue };
                if let Some(sender) = lock(&routes).get(note.channel()) {
                    let _ = sender.send(live);
                }
            }
            // The connection is gone: dropping the senders ends every watch.
            lock(&routes).clear();
        });
        Ok(Self { client, sessions, joining: tokio::sync::Mutex::new(()) })
    }

    async fn join(&self, session: &str) -> Result<broadcast::Receiver<Live>, StoreError> {
        let _one_at_a_time = self.joining.lock().await;
        let channel = channel_name(session);
        let existing = lock(&self.sessions).get(&channel).map(broadcast::Sender::subscribe);
        if let Some(receiver) = existing {
            return Ok(receiver);
        }
        self.client.batch_execute(&format!("LISTEN \"{channel}\"")).await.map_err(postgres_error)?;
        let (sender, receiver) = broadcast::channel(LIVE_BUFFER);
        lock(&self.sessions).insert(channel, sender);
        Ok(receiver)
    }

    /// Stops listening to `session` once nobody watches it.
    pub(super) async fn leave(&self, session: &str) {
        let _one_at_a_time = self.joining.lock().await;
        let channel = channel_name(session);
        let unwatched = {
            let mut sessions = lock(&self.sessions);
            let unwatched = sessions.get(&channel).is_some_and(|sender| sender.receiver_count() == 0);
            if unwatched {
                sessions.remove(&channel);
            }
            unwatched
        };
        if unwatched {
            let _ = self.client.batch_execute(&format!("UNLISTEN \"{channel}\"")).await;
        }
    }
}

impl Live {
    /// `<number> <event>`, or `<number>` alone for an event kept because it was too big.
    fn parse(payload: &str) -> Option<Self> {
        let (id, body) = match payload.split_once(' ') {
            Some((id, body)) => (id, Some(Arc::from(body))),
            None => (payload, None),
        };
        Some(Self { id: id.parse().ok()?, body })
    }
}

/// The events of one session being watched.
pub struct EventWatch {
    bus: EventBus,
    listener: Arc<Listener>,
    session: String,
    replay: std::vec::IntoIter<(u64, String)>,
    /// Taken out on drop, so the listener sees nobody left.
    live: Option<broadcast::Receiver<Live>>,
    /// The number of the last event given out.
    last: u64,
}

impl EventWatch {
    /// The kept events after the last one given out, without waiting for more (what a finished step left).
    pub async fn kept_since(&mut self) -> Result<Vec<(u64, String)>, StoreError> {
        let mut kept: Vec<(u64, String)> = self.replay.by_ref().collect();
        let after = kept.last().map_or(self.last, |(id, _)| *id);
        kept.extend(self.bus.kept_after(&self.session, after).await?);
        if let Some((id, _)) = kept.last() {
            self.last = *id;
        }
        Ok(kept)
    }

    /// The next event (its number and JSON line); `None` when the listening connection is gone.
    pub async fn next(&mut self) -> Option<Result<(u64, String), StoreError>> {
        if let Some((id, body)) = self.replay.next() {
            self.last = id;
            return Some(Ok((id, body)));
        }
        loop {
            let received = match self.live.as_mut() {
                Some(live) => live.recv().await,
                None => return None,
            };
            let live = match received {
                Ok(live) => live,
                // Too slow: what was missed is read back from the kept events.
                Err(broadcast::error::RecvError::Lagged(_)) => {
                    match self.bus.kept_after(&self.session, self.last).await {
                        Ok(kept) => {
                            self.replay = kept.into_iter();
                            match self.replay.next() {
                                Some((id, body)) => {
                                    self.last = id;
                                    return Some(Ok((id, body)));
                                }
                                None => continue,
                            }
                        }
                        Err(error) => return Some(Err(error)),
                    }
                }
                Err(broadcast::error::RecvError::Closed) => return None,
            };
            // Replayed already (it came in while the kept events were read).
            if live.id <= self.last {
                continue;
            }
            let body = match live.body {
                Some(body) => body.to_string(),
                None => match self.bus.kept_event(&self.session, live.id).await {
                    Ok(Some(body)) => body,
                    Ok(None) => continue,
                    Err(error) => return Some(Err(error)),
                },
            };
            self.last = live.id;
            return Some(Ok((live.id, body)));
        }
    }
}

impl Drop for EventWatch {
    fn drop(&mut self) {
        drop(self.live.take());
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            let (listener, session) = (self.listener.clone(), std::mem::take(&mut self.session));
            runtime.spawn(async move { listener.leave(&session).await });
        }
    }
}

/// Postgres' longest name (a longer channel name is refused by `pg_notify`).
const NAME_LIMIT: usize = 63;

/// The notification channel of a session, quoted when used (ids are letters, digits, `-`, `_` and `.`). An
/// id too long for a name is replaced by 160 bits of its SHA-256, so two sessions never share a channel.
fn channel_name(session: &str) -> String {
    let plain = format!("pi_events_{session}");
    if plain.len() <= NAME_LIMIT {
        return plain;
    }
    use sha2::Digest as _;
    let digest = sha2::Sha256::digest(session.as_bytes());
    let hex: String = digest.iter().take(20).map(|byte| format!("{byte:02x}")).collect();
    format!("pi_events_h{hex}")
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_session_gets_a_channel_postgres_accepts() {
        assert_eq!(channel_name("0195-ab"), "pi_events_0195-ab");
        let long_a = "a".repeat(100);
        let long_b = format!("{}b", "a".repeat(99));
        let (a, b) = (channel_name(&long_a), channel_name(&long_b));
        assert!(a.len() <= NAME_LIMIT && b.len() <= NAME_LIMIT, "{a} {b}");
        assert_ne!(a, b);
        assert_eq!(a, channel_name(&long_a));
    }

    #[test]
    fn notifications_carry_a_number_and_the_event_or_the_number_alone() {
        let whole = Live::parse("12 {\"type\":\"agent_start\"}").expect("parses");
        assert_eq!((whole.id, whole.body.as_deref()), (12, Some("{\"type\":\"agent_start\"}")));
        let kept = Live::parse("13").expect("parses");
        assert_eq!((kept.id, kept.body), (13, None));
        assert!(Live::parse("x {}").is_none());
    }
}
