//! The agent's run-wide defaults after settings.json: the thinking level used when no flag, model suffix
//! or session names one (settings `defaultThinkingLevel`, else the YAML's, else pi's medium) and the
//! queue modes (settings `steeringMode` / `followUpMode`, else the YAML's) and the pi compatibility level
//! (settings `piCompat`, else the YAML's `pi_compat`). Invalid settings values are reported and ignored.

use serde_json::Value;

use super::settings::Settings;
use crate::AgentDefinition;
use crate::agent::QueueMode;
use crate::ai::ThinkingLevel;
use crate::protocol::PiCompat;

/// pi's thinking level when nothing sets one (clamped to what the model supports).
pub const DEFAULT_THINKING_LEVEL: ThinkingLevel = ThinkingLevel::Medium;

/// Defaults of a run, before flags and the session are considered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RunDefaults {
    pub thinking: ThinkingLevel,
    pub steering_mode: QueueMode,
    pub follow_up_mode: QueueMode,
    /// The pi release reproduced unless `--pi-compat` names one.
    pub pi_compat: PiCompat,
}

impl RunDefaults {
    /// The defaults of `definition` with `settings` applied, and a warning for each settings value that
    /// cannot be used.
    /// `flag` is `--pi-compat`, which wins over the settings and the YAML.
    pub fn new(definition: &AgentDefinition, settings: &Settings, flag: Option<PiCompat>) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let mut compat_warnings = Vec::new();
        let pi_compat =
            setting(settings, "piCompat", "\"0.73\" or \"1.5\"", &mut compat_warnings).unwrap_or(definition.pi_compat);
        let pi_compat = flag.unwrap_or(pi_compat);
        // pi 1.5 adds `max`; the levels are those of the run's level.
        let expected = if pi_compat.is_v1_5() {
            "off, minimal, low, medium, high, xhigh or max"
        } else {
            "off, minimal, low, medium, high or xhigh"
        };
        let level = |text: &str| ThinkingLevel::parse_at(text, pi_compat).ok();
        let thinking = setting_with(settings, "defaultThinkingLevel", expected, &mut warnings, level)
            .or(definition.thinking)
            .unwrap_or(DEFAULT_THINKING_LEVEL);
        let steering_mode = setting(settings, "steeringMode", "one-at-a-time or all", &mut warnings)
            .unwrap_or(definition.steering_mode);
        let follow_up_mode = setting(settings, "followUpMode", "one-at-a-time or all", &mut warnings)
            .unwrap_or(definition.follow_up_mode);
        warnings.append(&mut compat_warnings);
        (Self { thinking, steering_mode, follow_up_mode, pi_compat }, warnings)
    }
}

/// The string setting `key` parsed as `T`; `None` (with a warning) when it is set to anything else.
fn setting<T: std::str::FromStr>(
    settings: &Settings,
    key: &str,
    expected: &str,
    warnings: &mut Vec<String>,
) -> Option<T> {
    setting_with(settings, key, expected, warnings, |text| text.parse::<T>().ok())
}

/// The string setting `key` read by `parse`; `None` (with a warning) when it is set to anything else.
fn setting_with<T>(
    settings: &Settings,
    key: &str,
    expected: &str,
    warnings: &mut Vec<String>,
    parse: impl Fn(&str) -> Option<T>,
) -> Option<T> {
    let value = settings.value(key)?;
    match value {
        Value::String(text) => match parse(text) {
            Some(parsed) => Some(parsed),
            None => {
                warnings.push(format!("settings \"{key}\" is \"{text}\", expected {expected}; ignored"));
                None
            }
        },
        other => {
            warnings.push(format!("settings \"{key}\" is {other}, expected {expected}; ignored"));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn defaults(definition: &AgentDefinition, global: Value) -> (RunDefaults, Vec<String>) {
        RunDefaults::new(definition, &Settings::from_values(global, json!({})), None)
    }

    #[test]
    fn settings_win_over_the_yaml_which_wins_over_pi() {
        let plain = AgentDefinition::default();
        let (run, warnings) = defaults(&plain, json!({}));
        assert!(warnings.is_empty());
        assert_eq!(run.thinking, ThinkingLevel::Medium);
        assert_eq!((run.steering_mode, run.follow_up_mode), (QueueMode::OneAtATime, QueueMode::OneAtATime));

        let yaml = AgentDefinition {
            thinking: Some(ThinkingLevel::Low),
            steering_mode: QueueMode::All,
            follow_up_mode: QueueMode::All,
            ..AgentDefinition::default()
        };
        let (run, _) = defaults(&yaml, json!({}));
        assert_eq!(
            run,
            RunDefaults {
                thinking: ThinkingLevel::Low,
                steering_mode: QueueMode::All,
                follow_up_mode: QueueMode::All,
                pi_compat: PiCompat::V0_73
            }
        );

        let (run, warnings) = defaults(
            &yaml,
            json!({"defaultThinkingLevel": "high", "steeringMode": "one-at-a-time", "followUpMode": "one-at-a-time",
                "piCompat": "1.5"}),
        );
        assert!(warnings.is_empty(), "{warnings:?}");
        assert_eq!(
            run,
            RunDefaults {
                thinking: ThinkingLevel::High,
                steering_mode: QueueMode::OneAtATime,
                follow_up_mode: QueueMode::OneAtATime,
                pi_compat: PiCompat::V1_5
            }
        );
        let current = AgentDefinition { pi_compat: PiCompat::V1_5, ..AgentDefinition::default() };
        assert_eq!(defaults(&current, json!({})).0.pi_compat, PiCompat::V1_5);
        assert_eq!(defaults(&current, json!({"piCompat": "0.73"})).0.pi_compat, PiCompat::V0_73);
    }

    #[test]
    fn invalid_settings_are_reported_and_ignored() {
        let yaml = AgentDefinition {
            thinking: Some(ThinkingLevel::Minimal),
            follow_up_mode: QueueMode::All,
            ..AgentDefinition::default()
        };
        let (run, warnings) = defaults(
            &yaml,
            json!({"defaultThinkingLevel": "max", "steeringMode": 3, "followUpMode": "some", "piCompat": "2"}),
        );
        assert_eq!(run.thinking, ThinkingLevel::Minimal);
        assert_eq!((run.steering_mode, run.follow_up_mode), (QueueMode::OneAtATime, QueueMode::All));
        assert_eq!(run.pi_compat, PiCompat::V0_73);
        assert_eq!(warnings.len(), 4, "{warnings:?}");
        assert!(warnings[3].contains("piCompat") && warnings[3].contains("\"1.5\""), "{warnings:?}");
        assert!(warnings[0].contains("defaultThinkingLevel") && warnings[0].contains("\"max\""), "{warnings:?}");
        assert!(warnings[1].contains("steeringMode") && warnings[1].contains('3'), "{warnings:?}");
        assert!(warnings[2].contains("followUpMode") && warnings[2].contains("one-at-a-time or all"), "{warnings:?}");
    }

    #[test]
    fn max_is_a_default_level_only_at_1_5() {
        let current = AgentDefinition { pi_compat: PiCompat::V1_5, ..AgentDefinition::default() };
        let (run, warnings) = defaults(&current, json!({"defaultThinkingLevel": "max"}));
        assert_eq!((run.thinking, warnings.len()), (ThinkingLevel::Max, 0), "{warnings:?}");
        let (run, warnings) = defaults(&current, json!({"defaultThinkingLevel": "max", "piCompat": "0.73"}));
        assert_eq!(run.thinking, ThinkingLevel::Medium);
        assert_eq!(
            warnings,
            [
                "settings \"defaultThinkingLevel\" is \"max\", expected off, minimal, low, medium, high or xhigh; ignored"
            ]
        );
        let (_, warnings) = defaults(&current, json!({"defaultThinkingLevel": "huge"}));
        assert!(
            warnings[0].ends_with("expected off, minimal, low, medium, high, xhigh or max; ignored"),
            "{warnings:?}"
        );
    }

    #[test]
    fn project_settings_win_over_global_ones() {
        let settings = Settings::from_values(json!({"steeringMode": "all"}), json!({"steeringMode": "one-at-a-time"}));
        let (run, _) = RunDefaults::new(&AgentDefinition::default(), &settings, None);
        assert_eq!(run.steering_mode, QueueMode::OneAtATime);
    }
}
