//! Identifiers and timestamps as pi writes them: 8-hex entry ids, uuid v7 session ids, and ISO 8601 UTC
//! timestamps with milliseconds (`2026-03-15T22:40:18.123Z`).

use chrono::{DateTime, Utc};

/// How many random 8-hex ids to try before falling back to a full uuid (pi does the same).
const ENTRY_ID_ATTEMPTS: usize = 100;

/// A new entry id: the first 8 hex characters of a random (v4) uuid, drawn again while `taken` says the id is
/// already used in the session. After 100 collisions (practically never) the full uuid is used, as pi does.
pub fn new_entry_id(taken: impl Fn(&str) -> bool) -> String {
    for _ in 0..ENTRY_ID_ATTEMPTS {
        let uuid = uuid::Uuid::new_v4();
        let mut buffer = uuid::Uuid::encode_buffer();
        let hex = uuid.simple().encode_lower(&mut buffer);
        let short = &hex[..8];
        if !taken(short) {
            return short.to_owned();
        }
    }
    uuid::Uuid::new_v4().to_string()
}

/// A new session id: a time-ordered uuid v7, hyphenated, as pi 0.73 writes in the header.
pub fn new_session_id() -> String {
    uuid::Uuid::now_v7().to_string()
}

/// The current time as pi's ISO timestamp.
pub fn iso_timestamp_now() -> String {
    format_iso(Utc::now())
}

/// Milliseconds since the Unix epoch as pi's ISO timestamp (`Date.toISOString()`); out-of-range values give
/// the epoch.
pub fn iso_timestamp(ms: i64) -> String {
    format_iso(DateTime::<Utc>::from_timestamp_millis(ms).unwrap_or(DateTime::<Utc>::UNIX_EPOCH))
}

fn format_iso(time: DateTime<Utc>) -> String {
    time.format("%Y-%m-%dT%H:%M:%S%.3fZ").to_string()
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn entry_ids_are_eight_lowercase_hex_characters() {
        let id = new_entry_id(|_| false);
        assert_eq!(id.len(), 8);
        assert!(id.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()), "{id}");
    }

    #[test]
    fn entry_ids_avoid_taken_ones() {
        let mut taken = HashSet::new();
        for _ in 0..2000 {
            let id = new_entry_id(|candidate| taken.contains(candidate));
            assert!(taken.insert(id));
        }
        let first = new_entry_id(|_| false);
        let calls = std::cell::Cell::new(0);
        let second = new_entry_id(|candidate| {
            calls.set(calls.get() + 1);
            calls.get() == 1 || candidate == first
        });
        assert!(calls.get() >= 2);
        assert_ne!(second, first);
    }

    #[test]
    fn session_ids_are_uuid_v7() {
        let id = new_session_id();
        let parsed = uuid::Uuid::parse_str(&id).unwrap();
        assert_eq!(parsed.get_version_num(), 7);
        assert_eq!(id.len(), 36);
    }

    #[test]
    fn timestamps_match_javascript_to_iso_string() {
        assert_eq!(iso_timestamp(1_773_614_418_123), "2026-03-15T22:40:18.123Z");
        assert_eq!(iso_timestamp(0), "1970-01-01T00:00:00.000Z");
        let now = iso_timestamp_now();
        assert_eq!(now.len(), 24, "{now}");
        assert!(now.ends_with('Z'));
    }
}
