//! Numbers written the way JavaScript writes them: integral floats without a fraction (`0`, not `0.0`)
//! and other values in `Number.prototype.toString` form (`0.000003`, not `3e-6`), so a cost that pi
//! wrote re-serializes to the same text. Also the millisecond clock pi uses for timestamps.

use serde::{Deserialize, Deserializer, Serialize, Serializer};

const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

pub fn serialize<S: Serializer>(value: &f64, serializer: S) -> Result<S::Ok, S::Error> {
    if !value.is_finite() {
        // JSON.stringify writes NaN and the infinities as null.
        return serializer.serialize_unit();
    }
    if value.fract() == 0.0 && value.abs() <= MAX_SAFE_INTEGER {
        // Exact: the value is integral and within i64's safe range.
        return serializer.serialize_i64(*value as i64);
    }
    match serde_json::value::RawValue::from_string(format_js_number(*value)) {
        Ok(raw) => raw.serialize(serializer),
        Err(_) => serializer.serialize_f64(*value),
    }
}

pub fn deserialize<'de, D: Deserializer<'de>>(deserializer: D) -> Result<f64, D::Error> {
    f64::deserialize(deserializer)
}

/// `value` as a JSON value whose text is JavaScript's (`0`, not `0.0`).
pub fn js_value(value: f64) -> serde_json::Value {
    serde_json::from_str(&format_js_number(value)).unwrap_or(serde_json::Value::Null)
}

/// `value` as JavaScript's `String(value)` writes it (for finite values).
pub fn format_js_number(value: f64) -> String {
    if value == 0.0 {
        return "0".to_owned();
    }
    // Rust's `{:e}` gives the shortest digits that round-trip, like JavaScript.
    let scientific = format!("{:e}", value.abs());
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((scientific.as_str(), "0"));
    let digits: String = mantissa.chars().filter(char::is_ascii_digit).collect();
    let exponent: i32 = exponent.parse().unwrap_or(0);
    // value = 0.d1d2...dk × 10^n
    let k = digits.len() as i32;
    let n = exponent + 1;
    let body = if k <= n && n <= 21 {
        format!("{digits}{}", "0".repeat((n - k) as usize))
    } else if 0 < n && n <= 21 {
        format!("{}.{}", &digits[..n as usize], &digits[n as usize..])
    } else if -6 < n && n <= 0 {
        format!("0.{}{digits}", "0".repeat((-n) as usize))
    } else {
        let sign = if n > 0 { "+" } else { "-" };
        let rest = if k > 1 { format!(".{}", &digits[1..]) } else { String::new() };
        format!("{}{rest}e{sign}{}", &digits[..1], (n - 1).abs())
    };
    if value < 0.0 { format!("-{body}") } else { body }
}

/// Milliseconds since the Unix epoch, like JavaScript's `Date.now()`.
pub fn now_ms() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_millis() as i64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::format_js_number;

    #[test]
    fn numbers_print_like_javascript() {
        let cases = [
            (0.004155, "0.004155"),
            (0.00030000000000000003, "0.00030000000000000003"),
            (0.000014999999999999999, "0.000014999999999999999"),
            (3e-6, "0.000003"),
            (3e-7, "3e-7"),
            (1.5e-10, "1.5e-10"),
            (123.456, "123.456"),
            (1e21, "1e+21"),
            (1.25e22, "1.25e+22"),
            (123456789012345680000.0, "123456789012345680000"),
            (-0.5, "-0.5"),
            (0.1 + 0.2, "0.30000000000000004"),
        ];
        for (value, expected) in cases {
            assert_eq!(format_js_number(value), expected, "{value:e}");
        }
    }

    #[test]
    fn costs_serialize_as_javascript_would() {
        #[derive(serde::Serialize)]
        struct Cost {
            #[serde(with = "super")]
            a: f64,
            #[serde(with = "super")]
            b: f64,
            #[serde(with = "super")]
            c: f64,
        }
        let text = serde_json::to_string(&Cost { a: 0.0, b: 3e-6, c: f64::NAN }).expect("serializes");
        assert_eq!(text, r#"{"a":0,"b":0.000003,"c":null}"#);
        let value = serde_json::to_value(Cost { a: 2.0, b: 0.25, c: 1.0 }).expect("to value");
        assert_eq!(value, serde_json::json!({"a": 2, "b": 0.25, "c": 1}));
    }
}
