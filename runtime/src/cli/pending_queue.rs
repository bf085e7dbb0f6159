//! The texts a client queued (steering and follow-ups) until the agent delivers them, reported as
//! `queue_update` events whenever the lists change.

use std::sync::Mutex;

use crate::agent_session::StreamingBehavior;
use crate::protocol::{AgentEvent, AgentMessage, SessionOnlyEvent};

/// Queued texts, oldest first.
#[derive(Debug, Default)]
pub struct PendingQueue {
    lists: Mutex<Lists>,
}

#[derive(Debug, Default)]
struct Lists {
    steering: Vec<Queued>,
    follow_up: Vec<Queued>,
}

/// A text as the client sent it, and as the agent will deliver it (after `/skill:` or template expansion).
#[derive(Debug)]
struct Queued {
    shown: String,
    delivered: String,
}

impl PendingQueue {
    /// Records a queued text (`shown` as sent, `delivered` as the agent will deliver it); returns the
    /// `queue_update` to print.
    pub fn push(&self, shown: &str, delivered: &str, behavior: StreamingBehavior) -> SessionOnlyEvent {
        let queued = Queued { shown: shown.to_owned(), delivered: delivered.to_owned() };
        let mut lists = self.lock();
        match behavior {
            StreamingBehavior::FollowUp => lists.follow_up.push(queued),
            _ => lists.steering.push(queued),
        }
        lists.update()
    }

    /// Empties both lists and returns their texts as queued, steering first (the user takes them back).
    pub fn take_all(&self) -> Vec<String> {
        let mut lists = self.lock();
        let steering = std::mem::take(&mut lists.steering);
        let follow_up = std::mem::take(&mut lists.follow_up);
        steering.into_iter().chain(follow_up).map(|queued| queued.shown).collect()
    }

    /// The texts waiting: steering, then follow-ups.
    pub fn texts(&self) -> (Vec<String>, Vec<String>) {
        let lists = self.lock();
        let shown = |list: &[Queued]| list.iter().map(|queued| queued.shown.clone()).collect();
        (shown(&lists.steering), shown(&lists.follow_up))
    }

    /// How many texts wait.
    pub fn len(&self) -> usize {
        let lists = self.lock();
        lists.steering.len() + lists.follow_up.len()
    }

    /// A user message starting is a queued text being delivered (steering first, as the agent delivers
    /// them); returns the `queue_update` to print when one was.
    pub fn on_event(&self, event: &AgentEvent) -> Option<SessionOnlyEvent> {
        let AgentEvent::MessageStart { message: AgentMessage::User(user) } = event else { return None };
        let text = user.content.text();
        let mut lists = self.lock();
        if lists.steering.first().is_some_and(|queued| queued.delivered == text) {
            lists.steering.remove(0);
        } else if lists.follow_up.first().is_some_and(|queued| queued.delivered == text) {
            lists.follow_up.remove(0);
        } else {
            return None;
        }
        Some(lists.update())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Lists> {
        self.lists.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Lists {
    fn update(&self) -> SessionOnlyEvent {
        let shown = |list: &[Queued]| list.iter().map(|queued| queued.shown.clone()).collect();
        SessionOnlyEvent::QueueUpdate { steering: shown(&self.steering), follow_up: shown(&self.follow_up) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::UserMessage;

    fn started(text: &str) -> AgentEvent {
        AgentEvent::MessageStart { message: AgentMessage::User(UserMessage::text(text)) }
    }

    #[test]
    fn queued_texts_leave_the_lists_as_they_are_delivered() {
        let queue = PendingQueue::default();
        queue.push("steer", "steer", StreamingBehavior::Steer);
        let update = queue.push("later", "later", StreamingBehavior::FollowUp);
        assert_eq!(
            serde_json::to_string(&update).expect("json"),
            r#"{"type":"queue_update","steering":["steer"],"followUp":["later"]}"#
        );
        assert_eq!(queue.len(), 2);
        assert_eq!(queue.on_event(&started("a prompt")), None, "a prompt of its own is no queued text");
        let update = queue.on_event(&started("steer")).expect("delivered");
        assert_eq!(update, SessionOnlyEvent::QueueUpdate { steering: vec![], follow_up: vec!["later".to_owned()] });
        queue.on_event(&started("later")).expect("delivered");
        assert_eq!(queue.len(), 0);
        queue.push("/review", "Review the diff carefully.", StreamingBehavior::Steer);
        let update = queue.on_event(&started("Review the diff carefully.")).expect("an expanded text is matched");
        assert_eq!(update, SessionOnlyEvent::QueueUpdate { steering: vec![], follow_up: vec![] });
    }
}
