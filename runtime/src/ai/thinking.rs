//! Which thinking levels a model accepts: pi's `thinkingLevelMap` (per model, from the catalog and
//! models.json), `getSupportedThinkingLevels` and `clampThinkingLevel`, at each compatibility level.
//!
//! pi 1.5 added a seventh level, `max`, and its catalog names it for some of the models pi-gen's (0.73.1)
//! catalog holds; `data/thinking_levels_v1_5.json` lists, for each of those, pi 1.5's `xhigh` and `max`
//! entries (read from pi-ai 1.5.2's provider data). At level 1.5 they take the place of the 0.73.1 entries
//! for those two levels; at level 0.73 nothing of them is seen.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::{Model, ThinkingLevel};
use crate::protocol::PiCompat;

/// pi 1.5's `xhigh` and `max` entries for the built-in models whose 1.5 catalog names `max`, keyed
/// `provider/id`.
const V1_5_TOP_LEVELS_JSON: &str = include_str!("../../data/thinking_levels_v1_5.json");

/// The levels a model supports only when its map names them.
const NAMED_ONLY: [ThinkingLevel; 2] = [ThinkingLevel::Xhigh, ThinkingLevel::Max];

/// pi's `thinkingLevelMap`: the provider-specific name of each thinking level. A level mapped to
/// `None` (JSON `null`) is not supported by the model; a level left out keeps its own name, except
/// `xhigh` and `max`, which a model supports only when the map names them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ThinkingLevelMap {
    levels: BTreeMap<ThinkingLevel, Option<String>>,
    /// pi 1.5's entries for `xhigh` and `max`, for a built-in model whose 1.5 catalog differs there: at
    /// level 1.5 they replace those of `levels` (a level missing here is not listed).
    top_v1_5: Option<BTreeMap<ThinkingLevel, Option<String>>>,
}

impl ThinkingLevelMap {
    /// The entry for `level` as pi 0.73.1 sees it: `None`: the level is not listed; `Some(None)`: listed
    /// as unsupported; `Some(Some(name))`: renamed.
    pub fn get(&self, level: ThinkingLevel) -> Option<Option<&str>> {
        self.get_at(level, PiCompat::V0_73)
    }

    /// The entry for `level` as the pi release `pi_compat` sees it (see [`ThinkingLevelMap::get`]).
    pub fn get_at(&self, level: ThinkingLevel, pi_compat: PiCompat) -> Option<Option<&str>> {
        let levels = match &self.top_v1_5 {
            Some(top) if pi_compat.is_v1_5() && NAMED_ONLY.contains(&level) => top,
            _ => &self.levels,
        };
        levels.get(&level).map(Option::as_deref)
    }

    pub fn is_empty(&self) -> bool {
        self.levels.is_empty() && self.top_v1_5.is_none()
    }

    /// This map with `other`'s entries laid over it (pi merges models.json overrides this way); at level
    /// 1.5 too, `other`'s `xhigh` and `max` win.
    pub fn merged_with(&self, other: &ThinkingLevelMap) -> ThinkingLevelMap {
        let mut levels = self.levels.clone();
        levels.extend(other.levels.iter().map(|(level, name)| (*level, name.clone())));
        let mut top_v1_5 = other.top_v1_5.clone().or_else(|| self.top_v1_5.clone());
        if let Some(top) = &mut top_v1_5 {
            let named = other.levels.iter().filter(|(level, _)| NAMED_ONLY.contains(level));
            top.extend(named.map(|(level, name)| (*level, name.clone())));
        }
        ThinkingLevelMap { levels, top_v1_5 }
    }

    /// Reads a JSON object such as `{"off": null, "xhigh": "max"}`; keys that are not thinking
    /// levels are ignored (as pi's schema allows them). `max` is read whatever the run's level.
    pub fn from_json(value: &Value) -> Result<ThinkingLevelMap, String> {
        let Value::Object(object) = value else {
            return Err("must be an object mapping thinking levels to a string or null".to_owned());
        };
        let mut levels = BTreeMap::new();
        for (key, name) in object {
            let Some(level) = ThinkingLevel::from_name(key) else { continue };
            let name = match name {
                Value::Null => None,
                Value::String(text) => Some(text.clone()),
                _ => return Err(format!("\"{key}\" must be a string or null")),
            };
            levels.insert(level, name);
        }
        Ok(ThinkingLevelMap { levels, top_v1_5: None })
    }

    /// `map` (or an empty map) with pi 1.5's `xhigh` and `max` entries for the built-in model
    /// `provider`/`id`, when its 1.5 catalog names `max`; `map` itself otherwise.
    pub(crate) fn with_v1_5_catalog(map: Option<ThinkingLevelMap>, provider: &str, id: &str) -> Option<Self> {
        let Some(top) = v1_5_top_levels().get(&format!("{provider}/{id}")) else { return map };
        let mut map = map.unwrap_or_default();
        map.top_v1_5 = Some(top.levels.clone());
        Some(map)
    }
}

/// The parsed `data/thinking_levels_v1_5.json` (empty if it could not be read, which its test rules out).
fn v1_5_top_levels() -> &'static BTreeMap<String, ThinkingLevelMap> {
    static TOP: OnceLock<BTreeMap<String, ThinkingLevelMap>> = OnceLock::new();
    TOP.get_or_init(|| parse_top_levels(V1_5_TOP_LEVELS_JSON).unwrap_or_default())
}

fn parse_top_levels(text: &str) -> Result<BTreeMap<String, ThinkingLevelMap>, String> {
    let Value::Object(models) = serde_json::from_str::<Value>(text).map_err(|error| error.to_string())? else {
        return Err("not an object".to_owned());
    };
    let mut parsed = BTreeMap::new();
    for (model, entries) in &models {
        let mut map = ThinkingLevelMap::from_json(entries).map_err(|problem| format!("{model}: {problem}"))?;
        map.levels.retain(|level, _| NAMED_ONLY.contains(level));
        parsed.insert(model.clone(), map);
    }
    Ok(parsed)
}

/// The thinking levels `model` accepts among those of the pi release `pi_compat`, lowest first (pi's
/// `getSupportedThinkingLevels`).
pub fn supported_thinking_levels(
    model: &Model,
    map: Option<&ThinkingLevelMap>,
    pi_compat: PiCompat,
) -> Vec<ThinkingLevel> {
    if !model.reasoning {
        return vec![ThinkingLevel::Off];
    }
    ThinkingLevel::levels(pi_compat)
        .iter()
        .copied()
        .filter(|level| match map.and_then(|map| map.get_at(*level, pi_compat)) {
            Some(None) => false,
            Some(Some(_)) => true,
            None => !NAMED_ONLY.contains(level),
        })
        .collect()
}

/// `level` if `model` supports it, else the nearest supported level above it, else below it, among the
/// levels of the pi release `pi_compat` (pi's `clampThinkingLevel`).
pub fn clamp_thinking_level(
    model: &Model,
    map: Option<&ThinkingLevelMap>,
    level: ThinkingLevel,
    pi_compat: PiCompat,
) -> ThinkingLevel {
    let supported = supported_thinking_levels(model, map, pi_compat);
    if supported.contains(&level) {
        return level;
    }
    let levels = ThinkingLevel::levels(pi_compat).iter().copied();
    let above = levels.clone().filter(|candidate| *candidate > level).find(|c| supported.contains(c));
    let below = levels.rev().filter(|candidate| *candidate < level).find(|c| supported.contains(c));
    above.or(below).or_else(|| supported.first().copied()).unwrap_or(ThinkingLevel::Off)
}

#[cfg(test)]
#[path = "thinking_tests.rs"]
mod tests;
