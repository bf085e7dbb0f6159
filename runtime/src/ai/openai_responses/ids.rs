//! Tool-call and item ids for the Responses API: pi's `call_id|item_id` ids, their normalisation
//! when another model made the call, and the short hash pi uses to shorten long ids.

use crate::ai::Model;
use crate::protocol::AssistantMessage;

/// Providers whose tool-call ids keep the `call_id|item_id` form on replay.
const OPENAI_TOOL_CALL_PROVIDERS: [&str; 3] = ["openai", "openai-codex", "opencode"];
/// The Azure API keeps them for one more provider, its own.
const AZURE_API: &str = "azure-openai-responses";
/// The Responses API limits ids to this many characters.
const MAX_ID_LEN: usize = 64;

/// `[A-Za-z0-9_-]` kept, anything else `_` (one per UTF-16 unit, as pi's regex does), at most 64
/// characters, trailing underscores removed.
pub(crate) fn normalize_id_part(part: &str) -> String {
    let sanitized: String = part
        .chars()
        .flat_map(|c| {
            let keep = c.is_ascii_alphanumeric() || c == '_' || c == '-';
            let (c, count) = if keep { (c, 1) } else { ('_', c.len_utf16()) };
            std::iter::repeat_n(c, count)
        })
        .take(MAX_ID_LEN)
        .collect();
    sanitized.trim_end_matches('_').to_owned()
}

/// The id a tool call made by `source` gets when replayed to `model` (a different model).
///
/// For OpenAI-style providers a `call|item` id keeps both parts: the call part sanitised, the item
/// part sanitised (same provider and api) or replaced by `fc_<hash>` (a foreign item), and always
/// starting `fc_`. Other providers get the whole id sanitised.
pub(crate) fn normalize_tool_call_id(model: &Model, source: &AssistantMessage, id: &str) -> String {
    let provider = model.provider.as_str();
    let keeps_item_ids =
        OPENAI_TOOL_CALL_PROVIDERS.contains(&provider) || (model.api == AZURE_API && provider == AZURE_API);
    if !keeps_item_ids {
        return normalize_id_part(id);
    }
    let mut parts = id.split('|');
    let (Some(call_id), Some(item_id)) = (parts.next(), parts.next()) else {
        return normalize_id_part(id);
    };
    let foreign = source.provider != model.provider || source.api != model.api;
    let mut item_id = if foreign {
        format!("fc_{}", short_hash(item_id)).chars().take(MAX_ID_LEN).collect()
    } else {
        normalize_id_part(item_id)
    };
    if !item_id.starts_with("fc_") {
        item_id = normalize_id_part(&format!("fc_{item_id}"));
    }
    format!("{}|{item_id}", normalize_id_part(call_id))
}

/// pi's `shortHash`: two 32-bit multiplicative hashes over the UTF-16 units, written in base 36.
pub(crate) fn short_hash(text: &str) -> String {
    let mut h1: u32 = 0xdead_beef;
    let mut h2: u32 = 0x41c6_ce57;
    for unit in text.encode_utf16() {
        h1 = (h1 ^ u32::from(unit)).wrapping_mul(2_654_435_761);
        h2 = (h2 ^ u32::from(unit)).wrapping_mul(1_597_334_677);
    }
    h1 = (h1 ^ (h1 >> 16)).wrapping_mul(2_246_822_507) ^ (h2 ^ (h2 >> 13)).wrapping_mul(3_266_489_909);
    h2 = (h2 ^ (h2 >> 16)).wrapping_mul(2_246_822_507) ^ (h1 ^ (h1 >> 13)).wrapping_mul(3_266_489_909);
    format!("{}{}", base36(h2), base36(h1))
}

fn base36(mut value: u32) -> String {
    const DIGITS: &[u8; 36] = b"0123456789abcdefghijklmnopqrstuvwxyz";
    let mut out = Vec::new();
    loop {
        out.push(DIGITS[(value % 36) as usize]);
        value /= 36;
        if value == 0 {
            break;
        }
    }
    out.reverse();
    String::from_utf8(out).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_hash_matches_pi() {
        // Values computed with pi's own function under node.
        assert_eq!(short_hash(""), "k4n83c7h0j2b");
        assert_eq!(short_hash("fc_abc"), "1qaoofs1vxahbg");
        assert_eq!(short_hash("rs_0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"), "hgxku110zic69");
        assert_eq!(short_hash("héllo 日本 😀"), "w9it4s173ndur");
    }

    #[test]
    fn id_parts_are_sanitised_and_trimmed() {
        assert_eq!(normalize_id_part("call.1/x__"), "call_1_x");
        assert_eq!(normalize_id_part("a😀b"), "a__b");
        assert_eq!(normalize_id_part(&"x".repeat(80)).len(), 64);
    }

    #[test]
    fn foreign_calls_get_responses_ids() {
        let source = |provider: &str, api: &str| AssistantMessage {
            provider: provider.into(),
            api: api.into(),
            model: "other".into(),
            ..AssistantMessage::default()
        };
        let openai = Model::new("openai", "gpt-5", "openai-responses", "https://api.openai.com/v1");
        let same_api = source("openai", "openai-responses");
        assert_eq!(normalize_tool_call_id(&openai, &same_api, "call_1|fc_item.9"), "call_1|fc_item_9");
        assert_eq!(normalize_tool_call_id(&openai, &same_api, "call_1|item"), "call_1|fc_item");
        let foreign = source("anthropic", "anthropic-messages");
        assert_eq!(normalize_tool_call_id(&openai, &foreign, "call_1|fc_abc"), "call_1|fc_1qaoofs1vxahbg");
        assert_eq!(normalize_tool_call_id(&openai, &foreign, "toolu_01"), "toolu_01");
        let mock = Model::new("mock", "m", "openai-responses", "http://127.0.0.1:9/v1");
        assert_eq!(normalize_tool_call_id(&mock, &foreign, "call_1|fc_abc"), "call_1_fc_abc");
        let azure = Model::new(AZURE_API, "gpt-5", AZURE_API, "https://r.openai.azure.com/openai/v1");
        assert_eq!(normalize_tool_call_id(&azure, &foreign, "call_1|fc_abc"), "call_1|fc_1qaoofs1vxahbg");
        let custom_azure = Model::new("my-azure", "gpt-5", AZURE_API, "https://r.openai.azure.com/openai/v1");
        assert_eq!(normalize_tool_call_id(&custom_azure, &foreign, "call_1|fc_abc"), "call_1_fc_abc");
        let openai_on_azure = Model::new("openai", "gpt-5", AZURE_API, "https://r.openai.azure.com/openai/v1");
        assert_eq!(normalize_tool_call_id(&openai_on_azure, &foreign, "call_1|fc_abc"), "call_1|fc_1qaoofs1vxahbg");
    }
}
