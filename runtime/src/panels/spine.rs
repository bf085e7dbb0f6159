//! The Spine (P7) and the Logs (P8): notifications the agent may have to act on (a user message, a background
//! process that exited, a file changed on disk), and a short log of what the panels did. A notification the
//! model has not seen in any request yet is *new*; once the run would end with new ones, the agent is woken
//! once for them (at most `max_auto_continuations` times in a row without a user message).

use crate::session::iso_timestamp;

/// What a notification is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum NotificationKind {
    /// The user sent a message (the rebuilt context shows it, so it never wakes the agent by itself).
    UserMessage,
    /// A background process started from the console tool exited.
    ProcessExited,
    /// An open file changed on disk.
    FileChanged,
}

impl NotificationKind {
    fn name(self) -> &'static str {
        match self {
            Self::UserMessage => "user message",
            Self::ProcessExited => "process exited",
            Self::FileChanged => "file changed",
        }
    }
}

/// One notification.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    pub kind: NotificationKind,
    pub text: String,
    pub at_ms: i64,
    /// A request showed it to the model.
    pub processed: bool,
}

/// How many notifications the panel keeps.
const KEPT_NOTIFICATIONS: usize = 20;
/// How many log lines the panel keeps.
const KEPT_LOG_LINES: usize = 40;

/// The Spine's state.
#[derive(Debug, Clone, Default)]
pub struct Spine {
    notifications: Vec<Notification>,
    /// Wake-ups since the last user message.
    pub auto_continuations: u32,
}

impl Spine {
    pub fn notify(&mut self, kind: NotificationKind, text: impl Into<String>, at_ms: i64) {
        self.notifications.push(Notification { kind, text: text.into(), at_ms, processed: false });
        let excess = self.notifications.len().saturating_sub(KEPT_NOTIFICATIONS);
        self.notifications.drain(..excess);
    }

    /// A user message arrived: it resets the wake-up count.
    pub fn user_message(&mut self, at_ms: i64) {
        self.auto_continuations = 0;
        self.notify(NotificationKind::UserMessage, "The user sent a message.", at_ms);
    }

    /// Seed 003, step 1: user-message notifications are processed (the rebuilt context holds the message).
    pub fn mark_user_messages_processed(&mut self) {
        for notification in &mut self.notifications {
            if notification.kind == NotificationKind::UserMessage {
                notification.processed = true;
            }
        }
    }

    /// Every notification is processed: the request being built shows them all.
    pub fn mark_all_processed(&mut self) {
        self.notifications.iter_mut().for_each(|notification| notification.processed = true);
    }

    /// The notifications no request has shown yet (user messages aside).
    pub fn pending(&self) -> impl Iterator<Item = &Notification> {
        self.notifications.iter().filter(|n| !n.processed && n.kind != NotificationKind::UserMessage)
    }

    /// Whether the agent should be woken for pending notifications (and counts the wake-up if so).
    pub fn take_wake_up(&mut self, max_auto_continuations: u32) -> Option<String> {
        if self.auto_continuations >= max_auto_continuations {
            return None;
        }
        let lines: Vec<String> = self.pending().map(|n| format!("- {}: {}", n.kind.name(), n.text)).collect();
        if lines.is_empty() {
            return None;
        }
        self.auto_continuations += 1;
        Some(format!("Spine notifications that arrived while you were working:\n{}", lines.join("\n")))
    }

    /// The panel's content.
    pub fn render(&self, max_auto_continuations: u32) -> String {
        let mut text = format!(
            "Auto-continuation: {} of {max_auto_continuations} wake-ups used since the last user message.\n",
            self.auto_continuations
        );
        if self.notifications.is_empty() {
            text.push_str("No notifications.");
            return text;
        }
        text.push_str("Notifications (oldest first):");
        for notification in &self.notifications {
            let state = if notification.processed { "seen" } else { "new" };
            text.push_str(&format!(
                "\n- [{state}] {} {}: {}",
                iso_timestamp(notification.at_ms),
                notification.kind.name(),
                notification.text
            ));
        }
        text
    }
}

/// The Logs panel: what the panels did, newest last.
#[derive(Debug, Clone, Default)]
pub struct Logs {
    lines: Vec<(i64, String)>,
}

impl Logs {
    pub fn log(&mut self, at_ms: i64, text: impl Into<String>) {
        self.lines.push((at_ms, text.into()));
        let excess = self.lines.len().saturating_sub(KEPT_LOG_LINES);
        self.lines.drain(..excess);
    }

    pub fn render(&self) -> String {
        if self.lines.is_empty() {
            return "No log entries.".to_owned();
        }
        let lines: Vec<String> = self.lines.iter().map(|(at, text)| format!("{} {text}", iso_timestamp(*at))).collect();
        lines.join("\n")
    }
}
