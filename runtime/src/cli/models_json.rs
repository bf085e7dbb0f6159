//! models.json as pi reads it: `{"providers": {name: {baseUrl, api, apiKey, headers, authHeader,
//! compat, models: [...], modelOverrides: {id: {...}}}}}`, with `//` comments and trailing commas
//! allowed. Every problem is reported with the provider and field it concerns.

use std::path::Path;

use serde_json::{Map, Value};

use super::error::CliError;
use crate::ai::ModelCost;
use crate::ai::catalog::{ThinkingLevelMap, is_builtin_provider};

/// A parsed, validated models.json.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelsConfig {
    /// In file order.
    pub providers: Vec<ProviderConfig>,
}

/// One entry of `providers`. Values of `api_key` and `headers` are raw: a literal, an environment
/// variable name or `!command`, resolved only when a request needs them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProviderConfig {
    pub name: String,
    pub base_url: Option<String>,
    pub api: Option<String>,
    pub api_key: Option<String>,
    pub headers: Option<Vec<(String, String)>>,
    /// Send `Authorization: Bearer <key>` as well.
    pub auth_header: bool,
    pub compat: Option<Value>,
    pub models: Vec<ModelDefinition>,
    pub model_overrides: Vec<(String, ModelOverride)>,
}

/// A custom model (`models[i]`); absent fields take pi's defaults when the model is built.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelDefinition {
    pub id: String,
    pub name: Option<String>,
    pub api: Option<String>,
    pub base_url: Option<String>,
    pub reasoning: Option<bool>,
    pub thinking_level_map: Option<ThinkingLevelMap>,
    pub input: Option<Vec<String>>,
    pub cost: Option<ModelCost>,
    pub context_window: Option<u64>,
    pub max_tokens: Option<u64>,
    pub headers: Option<Vec<(String, String)>>,
    pub compat: Option<Value>,
}

/// Fields laid over one built-in model (`modelOverrides[id]`).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ModelOverride {
    pub name: Option<String>,
    pub reasoning: Option<bool>,
    pub thinking_level_map: Option<ThinkingLevelMap>,
    pub input: Option<Vec<String>>,
    pub cost: PartialCost,
    pub context_window: Option<u64>,
    pub max_tokens: Option<u64>,
    pub headers: Option<Vec<(String, String)>>,
    pub compat: Option<Value>,
}

/// Prices an override may set one by one.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PartialCost {
    pub input: Option<f64>,
    pub output: Option<f64>,
    pub cache_read: Option<f64>,
    pub cache_write: Option<f64>,
}

impl PartialCost {
    pub fn apply(&self, cost: &mut ModelCost) {
        let set = |target: &mut f64, value: Option<f64>| {
            if let Some(value) = value {
                *target = value;
            }
        };
        set(&mut cost.input, self.input);
        set(&mut cost.output, self.output);
        set(&mut cost.cache_read, self.cache_read);
        set(&mut cost.cache_write, self.cache_write);
    }
}

/// Reads `path`; a missing file is an empty configuration.
pub fn load_models_json(path: &Path) -> Result<ModelsConfig, CliError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(ModelsConfig::default()),
        Err(error) => return Err(CliError::ModelsJson { path: path.to_path_buf(), message: error.to_string() }),
    };
    parse_models_json(&text).map_err(|message| CliError::ModelsJson { path: path.to_path_buf(), message })
}

/// Parses and validates models.json text. Syntax errors give `line:column` in the original text.
pub fn parse_models_json(text: &str) -> Result<ModelsConfig, String> {
    let root: Value = serde_json::from_str(&strip_comments_and_trailing_commas(text)).map_err(|error| {
        let full = error.to_string();
        let reason = full.split(" at line ").next().unwrap_or(&full).to_owned();
        format!("invalid JSON at {}:{}: {reason}", error.line(), error.column())
    })?;
    let Value::Object(root) = root else {
        return Err("the file must hold a JSON object with \"providers\"".to_owned());
    };
    let providers = match root.get("providers") {
        Some(Value::Object(providers)) => providers,
        Some(_) => return Err("\"providers\" must be an object keyed by provider name".to_owned()),
        None => return Err("\"providers\" is missing".to_owned()),
    };
    let mut config = ModelsConfig::default();
    for (name, entry) in providers {
        config.providers.push(parse_provider(name, entry)?);
    }
    Ok(config)
}

fn parse_provider(name: &str, entry: &Value) -> Result<ProviderConfig, String> {
    let at = format!("provider \"{name}\"");
    let Value::Object(object) = entry else { return Err(format!("{at}: must be an object")) };
    let fields = Fields { object, at: &at };
    fields.string("name")?;
    let mut provider = ProviderConfig {
        name: name.to_owned(),
        base_url: fields.string("baseUrl")?,
        api: fields.string("api")?,
        api_key: fields.string("apiKey")?,
        headers: fields.string_map("headers")?,
        auth_header: fields.boolean("authHeader")?.unwrap_or(false),
        compat: fields.object("compat")?,
        ..ProviderConfig::default()
    };
    match object.get("models") {
        None => {}
        Some(Value::Array(models)) => {
            for (index, model) in models.iter().enumerate() {
                provider.models.push(parse_model(&at, index, model)?);
            }
        }
        Some(_) => return Err(format!("{at}: \"models\" must be an array")),
    }
    match object.get("modelOverrides") {
        None => {}
        Some(Value::Object(overrides)) => {
            for (id, value) in overrides {
                provider.model_overrides.push((id.clone(), parse_override(&at, id, value)?));
            }
        }
        Some(_) => return Err(format!("{at}: \"modelOverrides\" must be an object keyed by model id")),
    }
    validate_provider(&at, &provider)?;
    Ok(provider)
}

/// pi's rules beyond the field types.
fn validate_provider(at: &str, provider: &ProviderConfig) -> Result<(), String> {
    if provider.models.is_empty() {
        if provider.base_url.is_none()
            && provider.headers.is_none()
            && provider.compat.is_none()
            && provider.model_overrides.is_empty()
        {
            return Err(format!(
                "{at}: nothing to configure; give \"baseUrl\", \"headers\", \"compat\", \"modelOverrides\" or \"models\""
            ));
        }
        return Ok(());
    }
    if is_builtin_provider(&provider.name) {
        // Built-in providers lend their api, baseUrl and key to custom models.
        return Ok(());
    }
    if provider.base_url.is_none() {
        return Err(format!("{at}: \"baseUrl\" is required when defining custom models"));
    }
    if provider.api_key.is_none() {
        return Err(format!(
            "{at}: \"apiKey\" is required when defining custom models (a key, an environment variable name, or !command)"
        ));
    }
    if provider.api.is_none()
        && let Some((index, model)) = provider.models.iter().enumerate().find(|(_, model)| model.api.is_none())
    {
        return Err(format!(
            "{at}: models[{index}] (\"{}\"): \"api\" is required on the provider or the model, e.g. \"openai-completions\"",
            model.id
        ));
    }
    Ok(())
}

fn parse_model(provider_at: &str, index: usize, value: &Value) -> Result<ModelDefinition, String> {
    let at = format!("{provider_at}: models[{index}]");
    let Value::Object(object) = value else { return Err(format!("{at}: must be an object")) };
    let id = Fields { object, at: &at }.string("id")?.ok_or_else(|| format!("{at}: \"id\" is required"))?;
    let at = format!("{at} (\"{id}\")");
    let fields = Fields { object, at: &at };
    let cost = match fields.object("cost")? {
        None => None,
        Some(_) => {
            let cost = fields.cost()?;
            let require = |value: Option<f64>, key: &str| {
                value.ok_or_else(|| format!("{at}: \"cost.{key}\" is required when \"cost\" is given"))
            };
            Some(ModelCost {
                input: require(cost.input, "input")?,
                output: require(cost.output, "output")?,
                cache_read: require(cost.cache_read, "cacheRead")?,
                cache_write: require(cost.cache_write, "cacheWrite")?,
            })
        }
    };
    Ok(ModelDefinition {
        id,
        name: fields.string("name")?,
        api: fields.string("api")?,
        base_url: fields.string("baseUrl")?,
        reasoning: fields.boolean("reasoning")?,
        thinking_level_map: fields.thinking_level_map()?,
        input: fields.input()?,
        cost,
        context_window: fields.positive("contextWindow")?,
        max_tokens: fields.positive("maxTokens")?,
        headers: fields.string_map("headers")?,
        compat: fields.object("compat")?,
    })
}

fn parse_override(provider_at: &str, id: &str, value: &Value) -> Result<ModelOverride, String> {
    let at = format!("{provider_at}: modelOverrides[\"{id}\"]");
    let Value::Object(object) = value else { return Err(format!("{at}: must be an object")) };
    let fields = Fields { object, at: &at };
    Ok(ModelOverride {
        name: fields.string("name")?,
        reasoning: fields.boolean("reasoning")?,
        thinking_level_map: fields.thinking_level_map()?,
        input: fields.input()?,
        cost: fields.cost()?,
        context_window: fields.positive("contextWindow")?,
        max_tokens: fields.positive("maxTokens")?,
        headers: fields.string_map("headers")?,
        compat: fields.object("compat")?,
    })
}

/// Typed access to one JSON object's fields, with errors that say where they are.
struct Fields<'a> {
    object: &'a Map<String, Value>,
    at: &'a str,
}

impl Fields<'_> {
    fn error(&self, key: &str, expected: &str) -> String {
        format!("{}: \"{key}\" must be {expected}", self.at)
    }

    fn string(&self, key: &str) -> Result<Option<String>, String> {
        match self.object.get(key) {
            None => Ok(None),
            Some(Value::String(text)) if !text.is_empty() => Ok(Some(text.clone())),
            Some(_) => Err(self.error(key, "a non-empty string")),
        }
    }

    fn boolean(&self, key: &str) -> Result<Option<bool>, String> {
        match self.object.get(key) {
            None => Ok(None),
            Some(Value::Bool(flag)) => Ok(Some(*flag)),
            Some(_) => Err(self.error(key, "true or false")),
        }
    }

    fn object(&self, key: &str) -> Result<Option<Value>, String> {
        match self.object.get(key) {
            None => Ok(None),
            Some(value @ Value::Object(_)) => Ok(Some(value.clone())),
            Some(_) => Err(self.error(key, "an object")),
        }
    }

    fn positive(&self, key: &str) -> Result<Option<u64>, String> {
        match self.object.get(key) {
            None => Ok(None),
            Some(Value::Number(number)) => match number.as_f64() {
                Some(value) if value >= 1.0 => Ok(Some(value as u64)),
                _ => Err(format!("{}: invalid \"{key}\" {number} (must be a positive number)", self.at)),
            },
            Some(_) => Err(self.error(key, "a positive number")),
        }
    }

    fn string_map(&self, key: &str) -> Result<Option<Vec<(String, String)>>, String> {
        match self.object.get(key) {
            None => Ok(None),
            Some(Value::Object(map)) => map
                .iter()
                .map(|(name, value)| match value {
                    Value::String(text) => Ok((name.clone(), text.clone())),
                    _ => Err(format!("{}: \"{key}.{name}\" must be a string", self.at)),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(self.error(key, "an object of strings")),
        }
    }

    fn input(&self) -> Result<Option<Vec<String>>, String> {
        match self.object.get("input") {
            None => Ok(None),
            Some(Value::Array(items)) => items
                .iter()
                .map(|item| match item.as_str() {
                    Some(kind @ ("text" | "image")) => Ok(kind.to_owned()),
                    _ => Err(self.error("input", "a list of \"text\" and \"image\"")),
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(self.error("input", "a list of \"text\" and \"image\"")),
        }
    }

    fn thinking_level_map(&self) -> Result<Option<ThinkingLevelMap>, String> {
        match self.object.get("thinkingLevelMap") {
            None => Ok(None),
            Some(value) => ThinkingLevelMap::from_json(value)
                .map(Some)
                .map_err(|problem| format!("{}: \"thinkingLevelMap\" {problem}", self.at)),
        }
    }

    fn cost(&self) -> Result<PartialCost, String> {
        let Some(Value::Object(cost)) = self.object.get("cost") else {
            return match self.object.get("cost") {
                None => Ok(PartialCost::default()),
                Some(_) => Err(self.error("cost", "an object")),
            };
        };
        let price = |key: &str| match cost.get(key) {
            None => Ok(None),
            Some(Value::Number(number)) => Ok(number.as_f64()),
            Some(_) => Err(format!("{}: \"cost.{key}\" must be a number", self.at)),
        };
        Ok(PartialCost {
            input: price("input")?,
            output: price("output")?,
            cache_read: price("cacheRead")?,
            cache_write: price("cacheWrite")?,
        })
    }
}

/// Blanks out `//` comments and then trailing commas (outside strings) so serde_json accepts what
/// pi accepts; every other byte stays where it was, so error positions match the file.
pub fn strip_comments_and_trailing_commas(text: &str) -> String {
    let mut bytes = text.as_bytes().to_vec();
    for_each_code_byte(&bytes.clone(), |index, rest| {
        if rest.starts_with(b"//") {
            let end = rest.iter().position(|b| *b == b'\n').unwrap_or(rest.len());
            // Whole characters are blanked, so the text stays valid UTF-8.
            bytes[index..index + end].fill(b' ');
            return end;
        }
        1
    });
    for_each_code_byte(&bytes.clone(), |index, rest| {
        if rest.first() == Some(&b',') {
            let next = rest[1..].iter().find(|b| !b.is_ascii_whitespace());
            if matches!(next, Some(b'}' | b']')) {
                bytes[index] = b' ';
            }
        }
        1
    });
    String::from_utf8(bytes).unwrap_or_else(|_| text.to_owned())
}

/// Calls `visit(index, rest)` for each byte outside JSON strings; `visit` returns how many bytes
/// to advance.
fn for_each_code_byte(bytes: &[u8], mut visit: impl FnMut(usize, &[u8]) -> usize) {
    let mut index = 0;
    let mut in_string = false;
    while index < bytes.len() {
        let byte = bytes[index];
        if in_string {
            match byte {
                b'\\' => index += 1,
                b'"' => in_string = false,
                _ => {}
            }
            index += 1;
        } else if byte == b'"' {
            in_string = true;
            index += 1;
        } else {
            index += visit(index, &bytes[index..]).max(1);
        }
    }
}

#[cfg(test)]
#[path = "models_json_tests.rs"]
mod tests;
