//! Prefix-cache accounting per panel (seed 003, step 7): each panel's content is hashed, and a panel is a
//! cache hit when it and every panel before it are what the previous request sent at the same positions
//! (prompt caches match prefixes). Hits are priced as cache reads; misses as cache writes where the API bills
//! them (Anthropic), else as plain input.

use std::hash::{BuildHasher, Hash};

use super::{CONVERSATION_ID, ContextItem, estimate_text_tokens};
use crate::ai::Model;

/// Dollars per million tokens for the two outcomes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CachePrices {
    pub hit: f64,
    pub miss: f64,
}

impl CachePrices {
    /// The model's prices: cache reads for hits; cache writes for misses on APIs that bill them, else input.
    pub fn for_model(model: &Model) -> Self {
        let bills_cache_writes = model.api == crate::ai::anthropic_messages::API;
        let miss = if bills_cache_writes { model.cost.cache_write } else { model.cost.input };
        Self { hit: model.cost.cache_read, miss }
    }
}

/// One panel's share of a request.
#[derive(Debug, Clone, PartialEq)]
pub struct PanelCacheCost {
    pub id: String,
    pub tokens: u64,
    pub hit: bool,
    /// Dollars.
    pub cost: f64,
}

/// The hashes the previous request sent, in order.
#[derive(Debug, Clone, Default)]
pub struct CacheTracker {
    previous: Vec<u64>,
}

impl CacheTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Accounts for `items` in the order they are sent (sorted) and remembers them for the next request.
    pub fn track(&mut self, items: &[ContextItem], prices: CachePrices) -> Vec<PanelCacheCost> {
        let hashes: Vec<u64> = items.iter().filter(|item| item.id != CONVERSATION_ID).map(panel_hash).collect();
        let sent = items.iter().filter(|item| item.id != CONVERSATION_ID);
        let mut prefix_holds = true;
        let costs = sent
            .zip(&hashes)
            .enumerate()
            .map(|(position, (item, hash))| {
                prefix_holds &= self.previous.get(position) == Some(hash);
                let tokens = estimate_text_tokens(&item.header) + estimate_text_tokens(&item.content);
                let price = if prefix_holds { prices.hit } else { prices.miss };
                PanelCacheCost { id: item.id.clone(), tokens, hit: prefix_holds, cost: tokens as f64 * price / 1e6 }
            })
            .collect();
        self.previous = hashes;
        costs
    }
}

/// A fixed-seed hash (the same in every request of the process; never stored).
pub(super) fn stable_hash(value: impl Hash) -> u64 {
    foldhash::fast::FixedState::with_seed(0x7061_6e65_6c73).hash_one(value)
}

fn panel_hash(item: &ContextItem) -> u64 {
    stable_hash((&item.id, &item.header, &item.content, item.last_refresh_ms))
}
