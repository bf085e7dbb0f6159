//! The user's choices that outlive a run, as pi keeps them in its global settings: the model, the thinking
//! level, the queue modes, automatic compaction and retry. The session reports each change the user (or an
//! extension acting for them) makes; where it is kept is the embedding program's business.

use std::sync::Arc;

use crate::agent::QueueMode;
use crate::ai::ThinkingLevel;

/// One remembered choice.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Preference {
    Model { provider: String, id: String },
    ThinkingLevel(ThinkingLevel),
    SteeringMode(QueueMode),
    FollowUpMode(QueueMode),
    AutoCompaction(bool),
    AutoRetry(bool),
}

/// Keeps preferences (pi: `defaultProvider` / `defaultModel`, `defaultThinkingLevel`, `steeringMode`,
/// `followUpMode`, `compaction.enabled`, `retry.enabled` in the global settings.json).
pub trait PreferenceStore: Send + Sync {
    /// Keeps `preference`; a failure is the store's to report (the change itself already took effect).
    fn save(&self, preference: Preference);
}

/// The shared handle.
pub type PreferenceStoreHandle = Arc<dyn PreferenceStore>;
