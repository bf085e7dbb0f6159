//! Moving around the session tree (pi's `/tree`): the leaf moves to another entry, optionally leaving a
//! summary of the branch it came from, and the agent's context follows.

use crate::compaction::{BranchSummaryOptions, collect_branch_entries, generate_branch_summary};
use crate::extension::{EventKind, SessionBeforeTreeEvent, SessionTreeEvent, TreePreparation};
use crate::protocol::{AgentMessage, MessageContent, UserContent};
use crate::session::EntryKind;

use super::AgentSession;

/// Where navigation ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Navigation {
    /// The text of a user or custom message target, handed back for editing (the leaf is its parent).
    pub editor_text: Option<String>,
    /// The id of the branch summary entry, when one was written.
    pub summary_entry_id: Option<String>,
}

impl AgentSession {
    /// Moves the leaf to `target_id`. A user or custom message target puts the leaf on its parent and
    /// returns its text (to edit and send again); any other target becomes the leaf. With `summarize`, the
    /// branch being left is summarized into a `branch_summary` entry at the new position first.
    pub async fn navigate_tree(
        &self,
        target_id: &str,
        summarize: bool,
        custom_instructions: Option<String>,
    ) -> Result<Navigation, String> {
        self.reset_cancel();
        let (entries, old_leaf, target) = {
            let manager = self.manager();
            let target = manager
                .tree()
                .entry(target_id)
                .cloned()
                .ok_or_else(|| format!("no entry {target_id} in this session; pick an id from the session tree"))?;
            (manager.entries().to_vec(), manager.tree().leaf_id().map(str::to_owned), target)
        };
        let (new_leaf, editor_text) = match &target.kind {
            EntryKind::Message { message: AgentMessage::User(user) } => {
                (target.parent_id.clone(), Some(content_text(&user.content)))
            }
            EntryKind::CustomMessage { content, .. } => (target.parent_id.clone(), Some(content_text(content))),
            _ => (Some(target.id.clone()), None),
        };
        if self.runner.has_handlers(EventKind::SessionBeforeTree) {
            let branch = collect_branch_entries(&entries, old_leaf.as_deref(), target_id);
            let preparation = TreePreparation {
                target_id: target_id.to_owned(),
                old_leaf_id: old_leaf.clone(),
                common_ancestor_id: branch.common_ancestor_id,
                entries_to_summarize: branch
                    .entries
                    .iter()
                    .filter_map(|entry| serde_json::to_value(entry).ok())
                    .collect(),
                user_wants_summary: summarize,
                custom_instructions: custom_instructions.clone(),
            };
            if self.runner.emit_session_before_tree(&SessionBeforeTreeEvent { preparation }).await.cancel {
                return Err("an extension cancelled the move in the session tree".to_owned());
            }
        }
        let mut summary = None;
        if summarize && old_leaf.as_deref() != Some(target_id) {
            let branch = collect_branch_entries(&entries, old_leaf.as_deref(), target_id);
            if !branch.entries.is_empty()
                && let Some(model) = self.summary_model()
            {
                let options = BranchSummaryOptions {
                    reserve_tokens: self.settings().compaction.reserve_tokens,
                    custom_instructions,
                    replace_instructions: false,
                };
                let api_key = self.summary_api_key().await;
                let result = generate_branch_summary(
                    &branch.entries,
                    &model,
                    &self.registry,
                    api_key.as_deref(),
                    &options,
                    &self.cancel_token(),
                )
                .await
                .map_err(|error| error.to_string())?;
                summary = Some(result);
            }
        }
        let (summary_entry_id, new_leaf_id) = {
            let mut manager = self.manager();
            let summary_entry_id = match summary {
                Some(result) => {
                    let details = Some(result.files.to_details());
                    Some(
                        manager
                            .branch_with_summary(new_leaf.as_deref(), &result.summary, details)
                            .map_err(|e| e.to_string())?,
                    )
                }
                None => {
                    match &new_leaf {
                        Some(id) => manager.branch(id).map_err(|error| error.to_string())?,
                        None => manager.reset_leaf(),
                    }
                    None
                }
            };
            self.agent.replace_messages(manager.context().messages);
            (summary_entry_id, manager.tree().leaf_id().map(str::to_owned))
        };
        let event = SessionTreeEvent { new_leaf_id, old_leaf_id: old_leaf };
        self.runner.emit_session_tree(&event).await;
        Ok(Navigation { editor_text, summary_entry_id })
    }
}

fn content_text(content: &MessageContent) -> String {
    match content {
        MessageContent::Text(text) => text.clone(),
        MessageContent::Blocks(blocks) => blocks
            .iter()
            .filter_map(|block| match block {
                UserContent::Text(text) => Some(text.text.as_str()),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("\n"),
    }
}
