//! The scripted mock model, wired to an agent in one step (`pi-gen run --mock`, `pi-gen test`): a scratch
//! agent directory whose models.json has a provider `mock` aimed at the mock server, speaking the API the
//! agent's own model speaks (so the requests have the shape the real provider would get), and the flags
//! that choose it.

use std::path::Path;

use serde_json::{Value, json};

use pi_codegen::spec::AgentSpec;

/// The provider name the scratch models.json defines.
pub const MOCK_PROVIDER: &str = "mock";
/// The key the mock provider is given (the mock never checks it; no real key is ever sent).
const MOCK_KEY: &str = "mock-key";

/// APIs the mock server answers in their own wire format.
const MOCK_APIS: [&str; 5] =
    ["openai-completions", "openai-responses", "anthropic-messages", "google-generative-ai", "mistral-conversations"];

/// The model the agent is pointed at: its id and the models.json entry that describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct MockTarget {
    pub model_id: String,
    /// The wire API the mock provider speaks.
    pub api: String,
    /// The model's entry in models.json (id, name, reasoning, context window, output limit).
    pub model: Value,
}

impl MockTarget {
    /// The agent's own model (its YAML `model:`), answered by the mock in that model's API; a model the
    /// mock cannot speak for (Bedrock, Vertex, Codex, ...) or none at all becomes `openai-completions`.
    pub fn for_spec(spec: &AgentSpec) -> Self {
        let provider = spec.model.as_ref().and_then(|model| model.provider.clone());
        let id = spec.model.as_ref().and_then(|model| model.id.clone());
        let builtin = match (&provider, &id) {
            (Some(provider), Some(id)) => pi_runtime::ai::catalog::builtin_model(provider, id),
            _ => None,
        };
        let custom_api = provider.as_ref().and_then(|name| spec.providers.get(name)).and_then(|custom| {
            let api = custom.api.as_ref().and_then(|api| serde_json::to_value(api).ok())?;
            api.as_str().map(str::to_owned)
        });
        let api = builtin.map(|model| model.api.clone()).or(custom_api).unwrap_or_default();
        let api = if MOCK_APIS.contains(&api.as_str()) { api } else { "openai-completions".to_owned() };
        let model_id = id.unwrap_or_else(|| "mock-model".to_owned());
        let mut model = json!({"id": model_id, "name": format!("{model_id} (scripted mock)")});
        if let Some(builtin) = builtin {
            model["reasoning"] = json!(builtin.reasoning);
            model["contextWindow"] = json!(builtin.context_window);
            model["maxTokens"] = json!(builtin.max_tokens);
            model["input"] = json!(builtin.input);
        }
        Self { model_id, api, model }
    }

    /// models.json with the `mock` provider aimed at the mock server at `base_url` (`http://127.0.0.1:N/v1`,
    /// as the server gives it), written the way this API's base URLs are: Anthropic's and Mistral's without
    /// the version (the client adds `/v1/...`), Google's with `/v1beta`.
    pub fn models_json(&self, base_url: &str) -> Value {
        let root = base_url.trim_end_matches('/').trim_end_matches("/v1");
        let base_url = match self.api.as_str() {
            "anthropic-messages" | "mistral-conversations" => root.to_owned(),
            "google-generative-ai" => format!("{root}/v1beta"),
            _ => format!("{root}/v1"),
        };
        json!({"providers": {MOCK_PROVIDER: {
            "baseUrl": base_url,
            "api": self.api,
            "apiKey": MOCK_KEY,
            "models": [self.model],
        }}})
    }

    /// Writes models.json into `agent_dir` (created).
    pub fn write_agent_dir(&self, agent_dir: &Path, base_url: &str) -> std::io::Result<()> {
        std::fs::create_dir_all(agent_dir)?;
        let text = serde_json::to_string_pretty(&self.models_json(base_url)).unwrap_or_default();
        std::fs::write(agent_dir.join("models.json"), text + "\n")
    }

    /// The flags that choose the mock model, unless `user_args` already choose a provider or model.
    pub fn model_args(&self, user_args: &[std::ffi::OsString]) -> Vec<String> {
        let chosen = user_args.iter().any(|arg| {
            let arg = arg.to_string_lossy();
            ["--provider", "--model"].iter().any(|flag| arg == *flag || arg.starts_with(&format!("{flag}=")))
        });
        if chosen {
            Vec::new()
        } else {
            vec!["--provider".into(), MOCK_PROVIDER.into(), "--model".into(), self.model_id.clone()]
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_codegen::yaml::parse_spec;

    fn spec(yaml: &str) -> AgentSpec {
        parse_spec(Path::new("agent.yaml"), yaml).expect("valid spec")
    }

    #[test]
    fn the_mock_speaks_the_agents_own_api() {
        let anthropic = spec("version: 1\nname: a\nmodel: { provider: anthropic, id: claude-sonnet-4-5 }\n");
        let target = MockTarget::for_spec(&anthropic);
        assert_eq!((target.api.as_str(), target.model_id.as_str()), ("anthropic-messages", "claude-sonnet-4-5"));
        assert_eq!(target.model["reasoning"], true);
        let models = target.models_json("http://127.0.0.1:9/v1");
        assert_eq!(models["providers"]["mock"]["baseUrl"], "http://127.0.0.1:9");
        let google = spec("version: 1\nname: a\nmodel: { provider: google, id: gemini-2.5-pro }\n");
        let google = MockTarget::for_spec(&google).models_json("http://127.0.0.1:9/v1");
        assert_eq!(google["providers"]["mock"]["baseUrl"], "http://127.0.0.1:9/v1beta");
        assert_eq!(models["providers"]["mock"]["models"][0]["id"], "claude-sonnet-4-5");

        let bedrock = spec(
            "version: 1\nname: a\nmodel: { provider: amazon-bedrock, id: anthropic.claude-sonnet-4-5-20250929-v1:0 }\n",
        );
        assert_eq!(MockTarget::for_spec(&bedrock).api, "openai-completions");
        let bare = MockTarget::for_spec(&spec("version: 1\nname: a\n"));
        assert_eq!((bare.api.as_str(), bare.model_id.as_str()), ("openai-completions", "mock-model"));
    }

    #[test]
    fn the_users_own_model_flags_win() {
        let target = MockTarget::for_spec(&spec("version: 1\nname: a\n"));
        assert_eq!(target.model_args(&["-p".into(), "hi".into()]), ["--provider", "mock", "--model", "mock-model"]);
        assert!(target.model_args(&["--model=mock/x".into()]).is_empty());
        assert!(target.model_args(&["--provider".into(), "openai".into()]).is_empty());
    }
}
