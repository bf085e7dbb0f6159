//! Supported and clamped thinking levels per model and map, at levels 0.73 and 1.5.

use super::*;
use crate::ai::catalog::{builtin_model, builtin_thinking_level_map};
use ThinkingLevel::*;

const OLD: PiCompat = PiCompat::V0_73;
const NEW: PiCompat = PiCompat::V1_5;

fn map(value: Value) -> ThinkingLevelMap {
    ThinkingLevelMap::from_json(&value).expect("a valid map")
}

fn reasoning_model() -> Model {
    let mut model = Model::new("p", "m", "openai-completions", "http://x");
    model.reasoning = true;
    model
}

#[test]
fn thinking_levels_follow_the_model_and_its_map() {
    let mut plain = Model::new("p", "m", "openai-completions", "http://x");
    assert_eq!(supported_thinking_levels(&plain, None, OLD), [Off]);
    assert_eq!(clamp_thinking_level(&plain, None, High, OLD), Off);
    plain.reasoning = true;
    assert_eq!(supported_thinking_levels(&plain, None, OLD), [Off, Minimal, Low, Medium, High]);
    assert_eq!(clamp_thinking_level(&plain, None, Xhigh, OLD), High);

    let opus = builtin_model("anthropic", "claude-opus-4-6").expect("in catalog");
    let opus_map = builtin_thinking_level_map("anthropic", "claude-opus-4-6");
    assert_eq!(opus_map.and_then(|m| m.get(Xhigh)), Some(Some("max")));
    assert_eq!(clamp_thinking_level(opus, opus_map, Xhigh, OLD), Xhigh);

    let only_high = map(serde_json::json!({"off": null, "minimal": null, "low": null, "medium": null}));
    assert_eq!(supported_thinking_levels(&plain, Some(&only_high), OLD), [High]);
    assert_eq!(clamp_thinking_level(&plain, Some(&only_high), Low, OLD), High);
    assert_eq!(clamp_thinking_level(&plain, Some(&only_high), Xhigh, OLD), High);
    let no_off = map(serde_json::json!({"off": null}));
    assert_eq!(clamp_thinking_level(&plain, Some(&no_off), Off, OLD), Minimal);
    assert!(ThinkingLevelMap::from_json(&serde_json::json!({"low": 3})).is_err());
    let merged = no_off.merged_with(&map(serde_json::json!({"xhigh": "x"})));
    assert_eq!((merged.get(Off), merged.get(Xhigh), merged.get(Low)), (Some(None), Some(Some("x")), None));
}

#[test]
fn max_is_supported_only_at_1_5_and_only_when_the_map_names_it() {
    let model = reasoning_model();
    assert_eq!(supported_thinking_levels(&model, None, NEW), [Off, Minimal, Low, Medium, High]);
    assert_eq!(clamp_thinking_level(&model, None, Max, NEW), High, "down from max when nothing above");

    let named = map(serde_json::json!({"xhigh": "xhigh", "max": "max"}));
    assert_eq!(supported_thinking_levels(&model, Some(&named), NEW), [Off, Minimal, Low, Medium, High, Xhigh, Max]);
    assert_eq!(supported_thinking_levels(&model, Some(&named), OLD), [Off, Minimal, Low, Medium, High, Xhigh]);
    assert_eq!(clamp_thinking_level(&model, Some(&named), Max, NEW), Max);
    // A level pi 0.73 does not know never survives a clamp at 0.73.
    assert_eq!(clamp_thinking_level(&model, Some(&named), Max, OLD), Xhigh);

    // Walking up first: xhigh on a model that has max but not xhigh becomes max.
    let max_only = map(serde_json::json!({"max": "max"}));
    assert_eq!(supported_thinking_levels(&model, Some(&max_only), NEW), [Off, Minimal, Low, Medium, High, Max]);
    assert_eq!(clamp_thinking_level(&model, Some(&max_only), Xhigh, NEW), Max);
    assert_eq!(clamp_thinking_level(&model, Some(&max_only), Xhigh, OLD), High);
    let refused = map(serde_json::json!({"max": null, "xhigh": "xhigh"}));
    assert_eq!(clamp_thinking_level(&model, Some(&refused), Max, NEW), Xhigh);
    assert_eq!(refused.get_at(Max, NEW), Some(None));
}

#[test]
fn the_catalog_names_max_at_1_5_without_changing_0_73() {
    let opus = builtin_model("anthropic", "claude-opus-4-6").expect("in catalog");
    let opus_map = builtin_thinking_level_map("anthropic", "claude-opus-4-6");
    // pi 1.5 renamed opus 4.6's top level: xhigh (effort max) became max.
    assert_eq!(supported_thinking_levels(opus, opus_map, OLD), [Off, Minimal, Low, Medium, High, Xhigh]);
    assert_eq!(supported_thinking_levels(opus, opus_map, NEW), [Off, Minimal, Low, Medium, High, Max]);
    assert_eq!(opus_map.and_then(|m| m.get_at(Max, NEW)), Some(Some("max")));
    assert_eq!(opus_map.and_then(|m| m.get_at(Xhigh, NEW)), None);

    let opus_4_7 = builtin_model("anthropic", "claude-opus-4-7").expect("in catalog");
    let map_4_7 = builtin_thinking_level_map("anthropic", "claude-opus-4-7");
    assert_eq!(supported_thinking_levels(opus_4_7, map_4_7, NEW).last(), Some(&Max));
    assert_eq!(clamp_thinking_level(opus_4_7, map_4_7, Xhigh, NEW), Xhigh);

    // Sonnet 4.6 had no map at 0.73; at 1.5 it gains max, and 0.73 sees nothing new.
    let sonnet = builtin_model("anthropic", "claude-sonnet-4-6").expect("in catalog");
    let sonnet_map = builtin_thinking_level_map("anthropic", "claude-sonnet-4-6");
    assert_eq!(supported_thinking_levels(sonnet, sonnet_map, OLD), [Off, Minimal, Low, Medium, High]);
    assert_eq!(supported_thinking_levels(sonnet, sonnet_map, NEW), [Off, Minimal, Low, Medium, High, Max]);

    let deepseek = builtin_model("deepseek", "deepseek-v4-pro").expect("in catalog");
    let deepseek_map = builtin_thinking_level_map("deepseek", "deepseek-v4-pro");
    assert_eq!(supported_thinking_levels(deepseek, deepseek_map, OLD), [Off, High, Xhigh]);
    assert_eq!(supported_thinking_levels(deepseek, deepseek_map, NEW), [Off, High, Max]);

    let gpt = builtin_model("openai", "gpt-5.4").expect("in catalog");
    let gpt_map = builtin_thinking_level_map("openai", "gpt-5.4");
    assert_eq!(clamp_thinking_level(gpt, gpt_map, Max, NEW), Xhigh, "no max for gpt-5.4 in pi 1.5");
}

#[test]
fn models_json_entries_win_over_the_1_5_catalog() {
    let builtin = builtin_thinking_level_map("anthropic", "claude-opus-4-6").expect("a map");
    let merged = builtin.merged_with(&map(serde_json::json!({"max": null, "xhigh": "x"})));
    assert_eq!(merged.get_at(Max, NEW), Some(None));
    assert_eq!(merged.get_at(Xhigh, NEW), Some(Some("x")));
    assert_eq!(merged.get(Xhigh), Some(Some("x")));
    let kept = builtin.merged_with(&map(serde_json::json!({"low": "l"})));
    assert_eq!((kept.get_at(Max, NEW), kept.get_at(Low, NEW)), (Some(Some("max")), Some(Some("l"))));
}

#[test]
fn the_1_5_data_parses_and_names_max_for_every_model() {
    let parsed = parse_top_levels(V1_5_TOP_LEVELS_JSON).expect("valid data");
    assert_eq!(parsed.len(), v1_5_top_levels().len());
    for (model, map) in &parsed {
        assert!(map.get(Max).flatten().is_some(), "{model}");
        let (provider, id) = model.split_once('/').expect("provider/id");
        assert!(builtin_model(provider, id).is_some(), "{model} is a built-in model");
    }
}
