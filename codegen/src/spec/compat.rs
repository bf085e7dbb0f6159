//! `pi_compat`: the pi release whose protocol the agent speaks by default, written as `"0.73"` or `"1.5"`
//! (an unquoted `1.5` or `0.73`, which YAML reads as a number, means the same).

use std::borrow::Cow;

use schemars::{JsonSchema, Schema, SchemaGenerator, json_schema};
use serde::{Deserialize, Deserializer};

/// A pi compatibility level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PiCompatSpec {
    /// pi 0.73.1.
    V0_73,
    /// pi 1.5.x, the current pi.
    V1_5,
}

impl PiCompatSpec {
    /// The level's name (`0.73`, `1.5`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::V0_73 => "0.73",
            Self::V1_5 => "1.5",
        }
    }
}

#[derive(Deserialize)]
#[serde(untagged)]
enum RawLevel {
    Text(String),
    Number(f64),
}

impl<'de> Deserialize<'de> for PiCompatSpec {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = match RawLevel::deserialize(deserializer) {
            Ok(RawLevel::Text(text)) => text,
            Ok(RawLevel::Number(number)) => number.to_string(),
            Err(_) => return Err(serde::de::Error::custom("expected \"0.73\" or \"1.5\"")),
        };
        match text.trim() {
            "0.73" => Ok(Self::V0_73),
            "1.5" => Ok(Self::V1_5),
            other => Err(serde::de::Error::custom(format!(
                "unknown pi compatibility level \"{other}\", expected \"0.73\" (pi 0.73.1) or \"1.5\" (pi 1.5.x)"
            ))),
        }
    }
}

impl JsonSchema for PiCompatSpec {
    fn schema_name() -> Cow<'static, str> {
        "PiCompatSpec".into()
    }

    fn json_schema(_generator: &mut SchemaGenerator) -> Schema {
        // Unquoted, YAML reads the level as a number; both spellings are accepted.
        json_schema!({
            "description": "A pi release: \"0.73\" (pi 0.73.1) or \"1.5\" (pi 1.5.x, the current pi).",
            "enum": ["0.73", "1.5", 0.73, 1.5]
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_and_unquoted_levels_parse() {
        let parse = |yaml: &str| serde_yaml::from_str::<PiCompatSpec>(yaml).map_err(|e| e.to_string());
        assert_eq!(parse("\"1.5\""), Ok(PiCompatSpec::V1_5));
        assert_eq!(parse("1.5"), Ok(PiCompatSpec::V1_5));
        assert_eq!(parse("0.73"), Ok(PiCompatSpec::V0_73));
        let error = parse("\"2.0\"").err().unwrap_or_default();
        assert!(error.contains("unknown pi compatibility level \"2.0\""), "{error}");
        assert!(parse("[1]").is_err());
    }
}
