//! Writing a compaction: `session_before_compact` may cancel it or supply the summary; otherwise the
//! model summarizes. The entry is recorded, the agent gets the compacted context, `session_compact` follows.

use serde_json::{Value, json};

use super::AgentSession;
use crate::compaction::{compact, prepare_compaction};
use crate::extension::{EventKind, SessionBeforeCompactEvent, SessionCompactEvent};
use crate::session::SessionEntry;

impl AgentSession {
    /// Summarizes the older part of the current branch. Returns the compaction result (`None` when there
    /// is nothing to compact or an extension cancelled it).
    pub(super) async fn summarize(&self, custom_instructions: Option<&str>) -> Result<Option<Value>, String> {
        let Some(model) = self.summary_model() else { return Ok(None) };
        let path: Vec<SessionEntry> = self.manager().tree().current_path().into_iter().cloned().collect();
        let Some(preparation) = prepare_compaction(&path, &self.settings().compaction) else { return Ok(None) };
        let mut supplied = None;
        if self.runner.has_handlers(EventKind::SessionBeforeCompact) {
            let event = SessionBeforeCompactEvent {
                preparation: json!({
                    "firstKeptEntryId": preparation.first_kept_entry_id,
                    "tokensBefore": preparation.tokens_before,
                    "isSplitTurn": preparation.is_split_turn,
                    "previousSummary": preparation.previous_summary,
                }),
                branch_entries: path.iter().filter_map(|entry| serde_json::to_value(entry).ok()).collect(),
                custom_instructions: custom_instructions.map(str::to_owned),
            };
            let decision = self.runner.emit_session_before_compact(&event).await;
            if decision.cancel {
                return Ok(None);
            }
            supplied = decision.compaction;
        }
        let from_extension = supplied.is_some();
        let (summary, first_kept_entry_id, tokens_before, details) = match supplied {
            Some(own) => (own.summary, own.first_kept_entry_id, own.tokens_before, own.details),
            None => {
                let api_key = self.summary_api_key().await;
                let result = compact(
                    &preparation,
                    &model,
                    &self.registry,
                    api_key.as_deref(),
                    custom_instructions,
                    &self.cancel_token(),
                )
                .await
                .map_err(|error| error.to_string())?;
                (result.summary, result.first_kept_entry_id, result.tokens_before, result.details)
            }
        };
        let entry = {
            let mut manager = self.manager();
            let id = manager
                .append_compaction_from(&summary, &first_kept_entry_id, tokens_before, details.clone(), from_extension)
                .map_err(|error| error.to_string())?;
            self.agent.replace_messages(manager.context().messages);
            manager.tree().entry(&id).and_then(|entry| serde_json::to_value(entry).ok())
        };
        if let Some(compaction_entry) = entry {
            self.runner.emit_session_compact(&SessionCompactEvent { compaction_entry, from_extension }).await;
        }
        Ok(Some(json!({
            "summary": summary,
            "firstKeptEntryId": first_kept_entry_id,
            "tokensBefore": tokens_before,
            "details": details,
        })))
    }
}
