//! `--session <file>` on a sub-agent's session file: the run continues it as that sub-agent (its prompt,
//! tools and hooks, in the top-level agent's directories), not as the top-level agent whose binary was
//! started.

use std::io::{BufRead as _, BufReader};
use std::path::Path;

use serde_json::Value;

use super::SUBAGENT_SESSION_ENTRY;
use crate::AgentDefinition;

/// How many lines of a session file are read for its `subagent_session` entry (it is the first entry).
const LINES_READ: usize = 4;

/// The sub-agent whose session `--session` names, when it is one of `definition`'s (at any depth).
pub fn definition_for_session(definition: &AgentDefinition, session: Option<&str>) -> Option<AgentDefinition> {
    let wanted = session?;
    if definition.subagents.is_empty() || !(wanted.contains('/') || wanted.ends_with(".jsonl")) {
        return None;
    }
    let chain = session_chain(&super::super::paths::expand_home(Path::new(wanted)))?;
    let mut current = definition.clone();
    for name in chain {
        let found = current.subagents.iter().find(|subagent| subagent.name == name)?;
        current = super::under_parent(&current, &found.definition);
    }
    Some(current)
}

/// The tool names from the top-level agent down to the sub-agent that wrote the file, if it is a sub-agent's.
fn session_chain(path: &Path) -> Option<Vec<String>> {
    let file = std::fs::File::open(path).ok()?;
    for line in BufReader::new(file).lines().take(LINES_READ) {
        let Ok(entry) = serde_json::from_str::<Value>(&line.ok()?) else { continue };
        if entry.get("type").and_then(Value::as_str) == Some("custom")
            && entry.get("customType").and_then(Value::as_str) == Some(SUBAGENT_SESSION_ENTRY)
        {
            let chain = entry.get("data")?.get("chain")?.as_array()?;
            let names: Option<Vec<String>> = chain.iter().map(|name| name.as_str().map(str::to_owned)).collect();
            return names.filter(|names| !names.is_empty());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::definition::SubagentDefinition;

    fn with_subagent(name: &str, tool: &str, inner: AgentDefinition) -> AgentDefinition {
        let subagent =
            SubagentDefinition { name: tool.to_owned(), description: String::new(), definition: Box::new(inner) };
        AgentDefinition { name: name.to_owned(), subagents: vec![subagent], ..AgentDefinition::default() }
    }

    fn session_with_chain(dir: &Path, chain: Value) -> String {
        let path = dir.join("s.jsonl");
        let header = r#"{"type":"session","version":3,"id":"x","timestamp":"t","cwd":"/"}"#;
        let entry = serde_json::json!({"type": "custom", "customType": SUBAGENT_SESSION_ENTRY, "id": "1",
            "parentId": null, "timestamp": "t", "data": {"chain": chain}});
        std::fs::write(&path, format!("{header}\n{entry}\n")).expect("write");
        path.to_string_lossy().into_owned()
    }

    #[test]
    fn a_sub_agents_file_picks_that_sub_agent_with_the_parents_providers() {
        let scout = AgentDefinition { name: "scout".to_owned(), ..AgentDefinition::default() };
        let planner = with_subagent("planner", "look", scout);
        let mut lead = with_subagent("lead", "plan", planner);
        lead.models_json = Some("{}".to_owned());
        (lead.agent_dir_env, lead.config_dir) = ("LEAD_AGENT_DIR".to_owned(), ".lead".to_owned());
        let dir = tempfile::tempdir().expect("tempdir");
        let nested = session_with_chain(dir.path(), serde_json::json!(["plan", "look"]));
        let found = definition_for_session(&lead, Some(&nested)).expect("the sub-agent");
        assert_eq!((found.name.as_str(), found.models_json.as_deref()), ("scout", Some("{}")));
        assert_eq!((found.agent_dir_env.as_str(), found.config_dir.as_str()), ("LEAD_AGENT_DIR", ".lead"));
        let first = session_with_chain(dir.path(), serde_json::json!(["plan"]));
        assert_eq!(definition_for_session(&lead, Some(&first)).map(|d| d.name), Some("planner".to_owned()));
        let unknown = session_with_chain(dir.path(), serde_json::json!(["other"]));
        assert_eq!(definition_for_session(&lead, Some(&unknown)), None);
        assert_eq!(definition_for_session(&lead, Some("0190abcd")), None, "an id prefix is the top level's");
        assert_eq!(definition_for_session(&lead, None), None);
    }

    #[test]
    fn sub_agent_sessions_go_beside_the_parents_file_where_listings_do_not_look() {
        let dir = tempfile::tempdir().expect("tempdir");
        let parent = dir.path().join("2026-01-01T00-00-00-000Z_abc.jsonl");
        let folder = super::super::subagent_session_dir(&parent);
        assert_eq!(folder, dir.path().join("2026-01-01T00-00-00-000Z_abc"));
        std::fs::write(&parent, "{}\n").expect("write");
        std::fs::create_dir_all(&folder).expect("mkdir");
        std::fs::write(folder.join("2026-01-01T00-00-01-000Z_def.jsonl"), "{}\n").expect("write");
        let listed: Vec<_> = crate::session::list_session_files(dir.path()).into_iter().map(|(path, _)| path).collect();
        assert_eq!(listed, [parent]);
    }
}
