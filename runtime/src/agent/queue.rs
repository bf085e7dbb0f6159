//! A queue of pending messages (steering or follow-up), drained one at a time or all at once.

use std::collections::VecDeque;

use super::config::QueueMode;
use crate::protocol::AgentMessage;

#[derive(Debug, Default)]
pub(crate) struct MessageQueue {
    pub mode: QueueMode,
    messages: VecDeque<AgentMessage>,
}

impl MessageQueue {
    pub fn new(mode: QueueMode) -> Self {
        Self { mode, messages: VecDeque::new() }
    }

    pub fn push(&mut self, message: AgentMessage) {
        self.messages.push_back(message);
    }

    /// The first message (one-at-a-time) or every message (all); empty when nothing is queued.
    pub fn drain(&mut self) -> Vec<AgentMessage> {
        match self.mode {
            QueueMode::All => self.messages.drain(..).collect(),
            _ => self.messages.pop_front().into_iter().collect(),
        }
    }

    pub fn clear(&mut self) {
        self.messages.clear();
    }

    pub fn is_empty(&self) -> bool {
        self.messages.is_empty()
    }

    pub fn len(&self) -> usize {
        self.messages.len()
    }
}
