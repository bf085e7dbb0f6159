//! `--list-models [search]`: the models that have a key, as pi prints them (a padded table of
//! provider, model, context, max-out, thinking, images), optionally fuzzy-filtered.

use std::path::Path;

use super::agent_models::load_agent_models_lenient;
use super::auth::{AuthFile, KeySources};
use super::config_value::EnvLookup;
use super::registry::{ModelRegistry, RegisteredModel};
use super::text_match::{fuzzy_filter, locale_compare};

/// The text `--list-models` prints on stdout, and warnings for stderr. `builtin_models_json` is the
/// agent's own providers (the user's models.json applies over them). A broken models.json is a
/// warning here (the built-in models are still listed), as in pi; so are broken agent providers.
pub fn list_models_output(
    builtin_models_json: Option<&str>,
    agent_dir: &Path,
    query: Option<&str>,
    env: EnvLookup<'_>,
) -> (String, Vec<String>) {
    let (config, warnings) = load_agent_models_lenient(builtin_models_json, agent_dir);
    let registry = ModelRegistry::new(config);
    let auth_path = agent_dir.join("auth.json");
    let auth = AuthFile::load_or_create(&auth_path);
    let keys = KeySources { runtime: None, auth: &auth, env, models_json_keys: registry.models_json_keys(), auth_path };
    let available: Vec<&RegisteredModel> = registry.all().iter().filter(|m| keys.has_auth(&m.model.provider)).collect();
    (format_model_list(available, query), warnings)
}

/// pi's listing of `available` models filtered by `query` (every whitespace-separated token must
/// fuzzy-match "provider id"), sorted by provider, then id.
pub fn format_model_list(available: Vec<&RegisteredModel>, query: Option<&str>) -> String {
    if available.is_empty() {
        return "No models have an API key configured. Set a provider's key variable (for example ANTHROPIC_API_KEY), add a key to auth.json, or define a provider in models.json.\n".to_owned();
    }
    let query = query.filter(|query| !query.trim().is_empty());
    let mut models = match query {
        Some(query) => fuzzy_filter(available, query, |m| format!("{} {}", m.model.provider, m.model.id)),
        None => available,
    };
    if models.is_empty() {
        return format!("No available model matches \"{}\".\n", query.unwrap_or_default());
    }
    models.sort_by(|a, b| {
        locale_compare(&a.model.provider, &b.model.provider).then_with(|| locale_compare(&a.model.id, &b.model.id))
    });
    let header = ["provider", "model", "context", "max-out", "thinking", "images"].map(str::to_owned);
    let rows: Vec<[String; 6]> = models
        .iter()
        .map(|m| {
            let yes_no = |flag: bool| if flag { "yes" } else { "no" }.to_owned();
            [
                m.model.provider.clone(),
                m.model.id.clone(),
                format_token_count(m.model.context_window),
                format_token_count(m.model.max_tokens),
                yes_no(m.model.reasoning),
                yes_no(m.model.supports_images()),
            ]
        })
        .collect();
    let mut widths = header.clone().map(|cell| width(&cell));
    for row in &rows {
        for (column, cell) in row.iter().enumerate() {
            widths[column] = widths[column].max(width(cell));
        }
    }
    let mut out = String::new();
    for row in std::iter::once(&header).chain(&rows) {
        let cells: Vec<String> =
            row.iter().zip(widths).map(|(cell, w)| format!("{cell}{}", " ".repeat(w - width(cell)))).collect();
        out.push_str(&cells.join("  "));
        out.push('\n');
    }
    out
}

/// Width as JavaScript's `padEnd` counts it (UTF-16 code units).
fn width(text: &str) -> usize {
    text.encode_utf16().count()
}

/// 200000 → "200K", 131072 → "131.1K", 1000000 → "1M", as pi writes token counts.
pub fn format_token_count(count: u64) -> String {
    let scaled = |unit: u64, suffix: &str| {
        if count.is_multiple_of(unit) {
            return format!("{}{suffix}", count / unit);
        }
        // JavaScript's toFixed(1) rounds exact halves up; Rust's formatting rounds them to even.
        // Exact halves at one decimal are the counts ending in a quarter of the unit.
        if count % (unit / 2) == unit / 4 {
            let tenths = (count * 10).div_ceil(unit);
            return format!("{}.{}{suffix}", tenths / 10, tenths % 10);
        }
        format!("{:.1}{suffix}", count as f64 / unit as f64)
    };
    if count >= 1_000_000 {
        scaled(1_000_000, "M")
    } else if count >= 1_000 {
        scaled(1_000, "K")
    } else {
        count.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::Model;

    fn registered(provider: &str, id: &str, window: u64, max: u64, reasoning: bool, image: bool) -> RegisteredModel {
        let mut model = Model::new(provider, id, "openai-completions", "http://x");
        model.context_window = window;
        model.max_tokens = max;
        model.reasoning = reasoning;
        if image {
            model.input.push("image".to_owned());
        }
        RegisteredModel { model, thinking_level_map: None }
    }

    #[test]
    fn token_counts_match_javascript_formatting() {
        // Expected values from pi's formatTokenCount under node.
        let cases = [
            (999, "999"),
            (1000, "1K"),
            (8192, "8.2K"),
            (40960, "41.0K"),
            (131072, "131.1K"),
            (200000, "200K"),
            (8250, "8.3K"),
            (1150, "1.1K"),
            (1050, "1.1K"),
            (1000000, "1M"),
            (1048576, "1.0M"),
            (2250000, "2.3M"),
            (1150000, "1.1M"),
        ];
        for (count, expected) in cases {
            assert_eq!(format_token_count(count), expected, "{count}");
        }
    }

    #[test]
    fn table_is_sorted_and_padded_like_pi() {
        let models = [
            registered("groq", "qwen/qwen3-32b", 131072, 40960, true, false),
            registered("cerebras", "zai-glm-4.7", 131072, 40000, false, false),
            registered("groq", "meta-llama/llama-4-scout-17b-16e-instruct", 131072, 8192, false, true),
        ];
        let text = format_model_list(models.iter().collect(), None);
        let expected = "\
provider  model                                      context  max-out  thinking  images
cerebras  zai-glm-4.7                                131.1K   40K      no        no    
groq      meta-llama/llama-4-scout-17b-16e-instruct  131.1K   8.2K     no        yes   
groq      qwen/qwen3-32b                             131.1K   41.0K    yes       no    
";
        assert_eq!(text, expected);
    }

    #[test]
    fn query_filters_fuzzily_and_reports_no_match() {
        let models = [
            registered("anthropic", "claude-sonnet-4-5", 200000, 64000, true, true),
            registered("openai", "gpt-5.4", 400000, 128000, true, true),
        ];
        let text = format_model_list(models.iter().collect(), Some("sonnet"));
        assert_eq!(text.lines().count(), 2, "{text}");
        assert!(text.contains("claude-sonnet-4-5") && !text.contains("gpt-5.4"), "{text}");
        let text = format_model_list(models.iter().collect(), Some("oai g54"));
        assert!(text.contains("gpt-5.4") && !text.contains("claude"), "{text}");
        let text = format_model_list(models.iter().collect(), Some("zzz"));
        assert!(text.contains("\"zzz\""), "{text}");
        let text = format_model_list(Vec::new(), None);
        assert!(text.starts_with("No models"), "{text}");
    }

    #[test]
    fn lists_models_with_keys_from_env_auth_and_models_json() {
        let dir = tempfile::tempdir().expect("tempdir");
        let models_json = r#"{"providers": {"mock": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
            "apiKey": "k", "models": [{"id": "m"}]}}}"#;
        std::fs::write(dir.path().join("models.json"), models_json).expect("write");
        std::fs::write(dir.path().join("auth.json"), r#"{"cerebras": {"type": "api_key", "key": "c"}}"#)
            .expect("write");
        let env = |name: &str| (name == "DEEPSEEK_API_KEY").then(|| "d".to_owned());
        let (text, warnings) = list_models_output(None, dir.path(), None, &env);
        assert!(warnings.is_empty(), "{warnings:?}");
        let providers: Vec<&str> = text.lines().skip(1).filter_map(|line| line.split_whitespace().next()).collect();
        assert!(providers.contains(&"cerebras") && providers.contains(&"deepseek") && providers.contains(&"mock"));
        assert!(!providers.contains(&"anthropic"), "{text}");
        let (text, _) = list_models_output(None, dir.path(), Some("mock"), &env);
        assert!(text.lines().nth(1).is_some_and(|line| line.starts_with("mock      m ")), "{text}");
    }

    #[test]
    fn broken_models_json_is_a_warning_for_listing() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("models.json"), "{ nope").expect("write");
        let env = |name: &str| (name == "GROQ_API_KEY").then(|| "g".to_owned());
        let (text, warnings) = list_models_output(None, dir.path(), None, &env);
        assert!(text.contains("openai/gpt-oss-120b"), "{text}");
        assert_eq!(warnings.len(), 1);
        assert!(warnings[0].contains("1:3"), "{warnings:?}");
    }

    #[test]
    fn the_agents_own_providers_are_listed_under_the_users() {
        let dir = tempfile::tempdir().expect("tempdir");
        let agent = r#"{"providers": {"house": {"baseUrl": "http://127.0.0.1:9/v1", "api": "openai-completions",
            "apiKey": "HOUSE_KEY", "models": [{"id": "house-model"}]}, "other": {"baseUrl": "http://127.0.0.1:9/v1",
            "api": "openai-completions", "apiKey": "k", "models": [{"id": "agent-only"}]}}}"#;
        let user = r#"{"providers": {"other": {"baseUrl": "http://127.0.0.1:8/v1", "api": "openai-completions",
            "apiKey": "k", "models": [{"id": "user-only"}]}}}"#;
        std::fs::write(dir.path().join("models.json"), user).expect("write");
        let env = |name: &str| (name == "HOUSE_KEY").then(|| "h".to_owned());
        let (text, warnings) = list_models_output(Some(agent), dir.path(), None, &env);
        assert!(warnings.is_empty(), "{warnings:?}");
        assert!(text.contains("house-model") && text.contains("user-only"), "{text}");
        assert!(!text.contains("agent-only"), "the user's provider replaces the agent's: {text}");
        let (text, warnings) = list_models_output(None, dir.path(), None, &env);
        assert!(warnings.is_empty() && !text.contains("house-model"), "{text}");
    }
}
