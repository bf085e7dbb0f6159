//! Matching a `--model` pattern against the models, as pi's model resolver does: exact
//! `provider/id` or id, then substring of id or name (aliases preferred over dated ids), with an
//! optional `:<thinking>` suffix.

use super::registry::RegisteredModel;
use super::text_match::locale_compare;
use crate::ai::ThinkingLevel;
use crate::protocol::PiCompat;

/// The outcome of matching one pattern.
#[derive(Debug, Clone, Copy, Default)]
pub struct PatternMatch<'a> {
    pub model: Option<&'a RegisteredModel>,
    /// From a `:<level>` suffix.
    pub thinking: Option<ThinkingLevel>,
}

/// An exact reference: `provider/id` (case-insensitive), or an id that only one model has.
pub fn find_exact_reference<'a>(reference: &str, models: &[&'a RegisteredModel]) -> Option<&'a RegisteredModel> {
    let reference = reference.trim();
    if reference.is_empty() {
        return None;
    }
    let lower = reference.to_lowercase();
    let canonical: Vec<_> =
        models.iter().filter(|m| format!("{}/{}", m.model.provider, m.model.id).to_lowercase() == lower).collect();
    match canonical.len() {
        1 => return Some(canonical[0]),
        0 => {}
        _ => return None,
    }
    if let Some((provider, id)) = reference.split_once('/') {
        let (provider, id) = (provider.trim().to_lowercase(), id.trim().to_lowercase());
        if !provider.is_empty() && !id.is_empty() {
            let matches: Vec<_> = models
                .iter()
                .filter(|m| m.model.provider.to_lowercase() == provider && m.model.id.to_lowercase() == id)
                .collect();
            match matches.len() {
                1 => return Some(matches[0]),
                0 => {}
                _ => return None,
            }
        }
    }
    let by_id: Vec<_> = models.iter().filter(|m| m.model.id.to_lowercase() == lower).collect();
    (by_id.len() == 1).then(|| *by_id[0])
}

/// An id without a `-YYYYMMDD` date (or ending in `-latest`) is an alias.
fn is_alias(id: &str) -> bool {
    if id.ends_with("-latest") {
        return true;
    }
    let bytes = id.as_bytes();
    let dated =
        bytes.len() >= 9 && bytes[bytes.len() - 9] == b'-' && bytes[bytes.len() - 8..].iter().all(u8::is_ascii_digit);
    !dated
}

/// pi's `tryMatchModel`: an exact reference, else the best model whose id or name contains the
/// pattern (the highest-sorting alias, else the latest dated id).
pub fn try_match_model<'a>(pattern: &str, models: &[&'a RegisteredModel]) -> Option<&'a RegisteredModel> {
    if let Some(exact) = find_exact_reference(pattern, models) {
        return Some(exact);
    }
    let needle = pattern.to_lowercase();
    let matches: Vec<&RegisteredModel> = models
        .iter()
        .copied()
        .filter(|m| m.model.id.to_lowercase().contains(&needle) || m.model.name.to_lowercase().contains(&needle))
        .collect();
    let (aliases, dated): (Vec<_>, Vec<_>) = matches.into_iter().partition(|m| is_alias(&m.model.id));
    let pool = if aliases.is_empty() { dated } else { aliases };
    pool.into_iter().reduce(|best, m| if locale_compare(&m.model.id, &best.model.id).is_gt() { m } else { best })
}

/// pi's `parseModelPattern` as the CLI uses it: the whole pattern first; then, if it ends in
/// `:<thinking level>` (a level of the pi release `pi_compat`: `max` only from 1.5 on), the part before it
/// with that level. Any other suffix is part of the id.
pub fn parse_model_pattern<'a>(pattern: &str, models: &[&'a RegisteredModel], pi_compat: PiCompat) -> PatternMatch<'a> {
    if let Some(model) = try_match_model(pattern, models) {
        return PatternMatch { model: Some(model), thinking: None };
    }
    let Some((prefix, suffix)) = pattern.rsplit_once(':') else { return PatternMatch::default() };
    let Ok(level) = ThinkingLevel::parse_at(suffix, pi_compat) else { return PatternMatch::default() };
    let inner = parse_model_pattern(prefix, models, pi_compat);
    match inner.model {
        Some(model) => PatternMatch { model: Some(model), thinking: Some(level) },
        None => inner,
    }
}

/// Up to `limit` model references that look like `pattern`, for "did you mean" lists.
pub fn close_matches(pattern: &str, models: &[&RegisteredModel], limit: usize) -> Vec<String> {
    let needle = pattern.rsplit('/').next().unwrap_or(pattern).to_lowercase();
    let needle = needle.split(':').next().unwrap_or(&needle).to_owned();
    let pieces: Vec<&str> = needle
        .split(|c: char| c.is_whitespace() || matches!(c, '-' | '_' | '.' | '/' | ':'))
        .filter(|piece| piece.len() >= 2)
        .collect();
    let mut scored: Vec<(usize, String)> = models
        .iter()
        .filter_map(|m| {
            let id = m.model.id.to_lowercase();
            let hits = pieces.iter().filter(|piece| id.contains(**piece)).count();
            (hits > 0).then(|| (hits, format!("{}/{}", m.model.provider, m.model.id)))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| locale_compare(&a.1, &b.1)));
    scored.into_iter().take(limit).map(|(_, reference)| reference).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ai::Model;

    fn registered(provider: &str, id: &str) -> RegisteredModel {
        RegisteredModel { model: Model::new(provider, id, "openai-completions", "http://x"), thinking_level_map: None }
    }

    #[test]
    fn aliases_are_ids_without_a_date() {
        assert!(is_alias("claude-sonnet-4-5"));
        assert!(is_alias("claude-3-5-haiku-latest"));
        assert!(!is_alias("claude-sonnet-4-5-20250929"));
        assert!(is_alias("gpt-4o-2024"));
    }

    #[test]
    fn a_bare_id_shared_by_two_providers_is_not_exact() {
        let models = [registered("a", "m"), registered("b", "m"), registered("b", "only-b")];
        let refs: Vec<&RegisteredModel> = models.iter().collect();
        assert!(find_exact_reference("m", &refs).is_none());
        assert_eq!(find_exact_reference("B/M", &refs).map(|m| m.model.provider.as_str()), Some("b"));
        assert_eq!(find_exact_reference(" only-b ", &refs).map(|m| m.model.id.as_str()), Some("only-b"));
        assert!(find_exact_reference("  ", &refs).is_none());
    }

    #[test]
    fn partial_matches_prefer_the_highest_alias_then_the_latest_date() {
        let models = [
            registered("p", "model-x-20240101"),
            registered("p", "model-x-20250101"),
            registered("p", "model-x-20230101"),
        ];
        let refs: Vec<&RegisteredModel> = models.iter().collect();
        assert_eq!(try_match_model("model", &refs).map(|m| m.model.id.as_str()), Some("model-x-20250101"));
        // Like pi, dated ids are ranked by the whole id, not by the date alone.
        let mixed = [registered("p", "model-x-20250101"), registered("p", "model-y-20230101")];
        let refs: Vec<&RegisteredModel> = mixed.iter().collect();
        assert_eq!(try_match_model("model", &refs).map(|m| m.model.id.as_str()), Some("model-y-20230101"));
        let with_alias = [registered("p", "model-x-20250101"), registered("p", "model-a"), registered("p", "model-b")];
        let refs: Vec<&RegisteredModel> = with_alias.iter().collect();
        assert_eq!(try_match_model("model", &refs).map(|m| m.model.id.as_str()), Some("model-b"));
    }

    #[test]
    fn thinking_suffixes_are_peeled_from_the_right() {
        let models = [registered("p", "name:with-colon"), registered("p", "plain")];
        let refs: Vec<&RegisteredModel> = models.iter().collect();
        let found = parse_model_pattern("name:with-colon:high", &refs, PiCompat::V0_73);
        assert_eq!(found.model.map(|m| m.model.id.as_str()), Some("name:with-colon"));
        assert_eq!(found.thinking, Some(ThinkingLevel::High));
        let found = parse_model_pattern("plain:low:high", &refs, PiCompat::V0_73);
        assert_eq!(found.model.map(|m| m.model.id.as_str()), Some("plain"));
        assert_eq!(found.thinking, Some(ThinkingLevel::High), "the outermost level wins, as in pi");
        assert!(parse_model_pattern("plain:fast", &refs, PiCompat::V0_73).model.is_none());
    }

    #[test]
    fn a_max_suffix_is_a_level_only_at_1_5() {
        let models = [registered("p", "plain")];
        let refs: Vec<&RegisteredModel> = models.iter().collect();
        let found = parse_model_pattern("plain:max", &refs, PiCompat::V1_5);
        assert_eq!(found.model.map(|m| m.model.id.as_str()), Some("plain"));
        assert_eq!(found.thinking, Some(ThinkingLevel::Max));
        assert!(parse_model_pattern("plain:max", &refs, PiCompat::V0_73).model.is_none());
    }
}
