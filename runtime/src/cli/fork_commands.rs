//! RPC's `fork` and `clone` replies, apart from where they go: RPC mode and the Temporal engine's command
//! step both answer with these.

use serde_json::{Value, json};

use crate::agent_session::{AgentSession, ForkOutcome};

/// `fork`: the session continues as a new one cut before user message `entry_id`; `{text, cancelled}`.
pub async fn fork_data(session: &AgentSession, entry_id: &str) -> Result<Value, String> {
    match session.fork_before(entry_id).await.map_err(|error| error.to_string())? {
        ForkOutcome::Forked { text } => Ok(json!({ "text": text, "cancelled": false })),
        _ => Ok(json!({ "text": "", "cancelled": true })),
    }
}

/// `clone`: the session continues as a new one holding its whole branch; `{cancelled}`.
pub async fn clone_data(session: &AgentSession) -> Result<Value, String> {
    let done = session.clone_session().await.map_err(|error| error.to_string())?;
    Ok(json!({ "cancelled": !done }))
}
