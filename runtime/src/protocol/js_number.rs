//! Numbers written the way JavaScript writes them: integral floats without a fraction (`0`, not `0.0`),
//! so a cost that pi wrote as `0` re-serializes as `0`. Also the millisecond clock pi uses for timestamps.

use serde::{Deserialize, Deserializer, Serializer};

const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER {
        // Exact: the value is integral and within i64's safe range.
        serializer.serialize_i64(*value as i64)
    } else {
        serializer.serialize_f64(*value)
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    f64::deserialize(deserializer)
}

/// Milliseconds since the Unix epoch, like JavaScript's `Date.now()`.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}
