//! What the read-only RPC commands answer: the session state, a model, the user messages a fork could
//! start from, and the commands a prompt can invoke, in pi's shapes.

use std::path::Path;

use serde_json::{Value, json};

use crate::agent_session::AgentSession;
use crate::ai::Model;
use crate::ai::catalog::{builtin_thinking_level_map, supported_thinking_levels};
use crate::cli::resources::Resources;
use crate::cli::yaml_commands::description_with_hint;
use crate::prompt::ResourceSource;
use crate::protocol::AgentMessage;
use crate::protocol::js_number::js_value;
use crate::session::EntryKind;

/// A model as pi's RPC mode prints it.
pub fn model_json(model: &Model) -> Value {
    let mut value = json!({
        "id": model.id,
        "name": model.name,
        "api": model.api,
        "provider": model.provider,
        "baseUrl": model.base_url,
        "reasoning": model.reasoning,
        "input": model.input,
        "cost": {
            "input": js_value(model.cost.input),
            "output": js_value(model.cost.output),
            "cacheRead": js_value(model.cost.cache_read),
            "cacheWrite": js_value(model.cost.cache_write),
        },
        "contextWindow": model.context_window,
        "maxTokens": model.max_tokens,
    });
    if let Some(compat) = &model.compat {
        value["compat"] = compat.clone();
    }
    value
}

/// `get_state`: model, thinking level, activity, queue modes, session file, id and name, counts.
pub fn session_state(session: &AgentSession, pending: usize) -> Value {
    let agent = session.agent().state();
    let (session_file, session_id) = {
        let manager = session.manager();
        (manager.path().map(|path| path.to_string_lossy().into_owned()), manager.session_id().to_owned())
    };
    let mut state = serde_json::Map::new();
    if let Some(model) = &agent.model {
        state.insert("model".into(), model_json(model));
    }
    state.insert("thinkingLevel".into(), json!(agent.thinking_level.as_str()));
    state.insert("isStreaming".into(), json!(session.agent().is_streaming()));
    state.insert("isCompacting".into(), json!(session.is_compacting()));
    state.insert("steeringMode".into(), json!(session.agent().steering_mode().as_str()));
    state.insert("followUpMode".into(), json!(session.agent().follow_up_mode().as_str()));
    if let Some(file) = session_file {
        state.insert("sessionFile".into(), json!(file));
    }
    state.insert("sessionId".into(), json!(session_id));
    if let Some(name) = session.session_name() {
        state.insert("sessionName".into(), json!(name));
    }
    state.insert("autoCompactionEnabled".into(), json!(session.auto_compaction_enabled()));
    state.insert("messageCount".into(), json!(agent.messages.len()));
    state.insert("pendingMessageCount".into(), json!(pending));
    Value::Object(state)
}

/// `get_available_thinking_levels`: the levels the current model accepts among those of the run's pi release
/// (pi 1.5's `max` only at level 1.5), lowest first (`off` alone for a model that does not reason, or no
/// model).
pub fn available_thinking_levels(session: &AgentSession) -> Vec<&'static str> {
    let Some(model) = session.agent().model() else { return vec!["off"] };
    let map = builtin_thinking_level_map(&model.provider, &model.id);
    supported_thinking_levels(&model, map, session.agent().pi_compat())
        .into_iter()
        .map(|level| level.as_str())
        .collect()
}

/// `get_fork_messages`: the user messages on the current branch, with their entry ids.
pub fn fork_messages(session: &AgentSession) -> Value {
    let manager = session.manager();
    let messages: Vec<Value> = manager
        .tree()
        .current_path()
        .iter()
        .filter_map(|entry| match &entry.kind {
            EntryKind::Message { message: AgentMessage::User(user) } => {
                Some(json!({"entryId": entry.id, "text": user.content.text()}))
            }
            _ => None,
        })
        .collect();
    json!({ "messages": messages })
}

/// `get_commands`: extension commands, the YAML's `commands:` (listed as extension commands, which they
/// act like: they run before templates; their `sourceInfo.path` is `commands[N]`, as hooks are `hooks[N]`),
/// prompt templates, then skills (as `skill:<name>`).
pub fn slash_commands(session: &AgentSession, resources: &Resources) -> Value {
    let mut commands = Vec::new();
    let extensions = session.extensions();
    let yaml = resources.commands.iter().enumerate().filter(|(_, command)| extensions.command(&command.name).is_none());
    let yaml = yaml
        .map(|(index, command)| (command.name.clone(), description_with_hint(command), format!("commands[{index}]")));
    let rust = extensions.commands().iter().map(|c| (c.name.clone(), c.description.clone(), c.extension.clone()));
    for (name, description, path) in rust.chain(yaml) {
        let mut entry = json!({"name": name});
        if !description.is_empty() {
            entry["description"] = json!(description);
        }
        entry["source"] = json!("extension");
        entry["sourceInfo"] = json!({
            "path": path, "source": "local", "scope": "user", "origin": "top-level",
        });
        commands.push(entry);
    }
    for template in &resources.templates {
        commands.push(resource_command(
            &template.name,
            &template.description,
            "prompt",
            &template.file_path,
            template.source,
        ));
    }
    for skill in &resources.skills {
        let name = format!("skill:{}", skill.name);
        commands.push(resource_command(&name, &skill.description, "skill", &skill.file_path, skill.source));
    }
    json!({ "commands": commands })
}

fn resource_command(name: &str, description: &str, kind: &str, path: &Path, source: ResourceSource) -> Value {
    let (origin_source, scope) = match source {
        ResourceSource::Project => ("local", "project"),
        ResourceSource::Path => ("cli", "temporary"),
        _ => ("local", "user"),
    };
    let mut info = json!({
        "path": path.to_string_lossy(), "source": origin_source, "scope": scope, "origin": "top-level",
    });
    if let Some(dir) = path.parent() {
        info["baseDir"] = json!(dir.to_string_lossy());
    }
    let mut entry = json!({"name": name});
    if !description.is_empty() {
        entry["description"] = json!(description);
    }
    entry["source"] = json!(kind);
    entry["sourceInfo"] = info;
    entry
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_prints_in_pi_field_order_with_javascript_numbers() {
        let mut model = Model::new("mock", "m", "openai-completions", "http://127.0.0.1:1/v1");
        model.cost.input = 3.0;
        model.cost.output = 0.3;
        assert_eq!(
            model_json(&model).to_string(),
            "{\"id\":\"m\",\"name\":\"m\",\"api\":\"openai-completions\",\"provider\":\"mock\",\
             \"baseUrl\":\"http://127.0.0.1:1/v1\",\"reasoning\":false,\"input\":[\"text\"],\
             \"cost\":{\"input\":3,\"output\":0.3,\"cacheRead\":0,\"cacheWrite\":0},\
             \"contextWindow\":128000,\"maxTokens\":16384}"
        );
    }
}
