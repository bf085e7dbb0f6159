//! bash's `structuredContent` (pi 1.5): the command's whole output up to 1 MiB (its first and last halves
//! beyond), whether it was cut, where the complete output is, the exit code and the wall time in seconds.

use std::io::{Read as _, Seek as _, SeekFrom};
use std::path::Path;
use std::time::Duration;

use serde_json::{Map, Value, json};

use super::bash::BashOutput;

/// The most output bytes `structuredContent.output` holds.
pub const STRUCTURED_OUTPUT_MAX_BYTES: usize = 1024 * 1024;

/// Put between the two halves of an output too long for `structuredContent`.
const ELISION: &str = "\n\n[... output elided ...]\n\n";

/// The structured record of a finished command that ran for `wall_time`.
pub fn structured_content(out: &BashOutput, wall_time: Duration) -> Value {
    let (output, truncated) = match &out.full_output_path {
        Some(path) if out.truncation.truncated => {
            read_capped(path, STRUCTURED_OUTPUT_MAX_BYTES).unwrap_or_else(|_| (out.truncation.content.clone(), true))
        }
        _ => (out.truncation.content.clone(), out.truncation.truncated),
    };
    let mut record = Map::new();
    record.insert("output".into(), Value::String(output));
    record.insert("truncated".into(), Value::Bool(truncated));
    if truncated && let Some(path) = &out.full_output_path {
        record.insert("full_output_path".into(), Value::String(path.display().to_string()));
    }
    record.insert("exit_code".into(), json!(out.exit_code.unwrap_or(-1)));
    record.insert("wall_time_seconds".into(), wall_time_seconds(wall_time));
    Value::Object(record)
}

/// Seconds to one decimal, written as an integer when whole (`0`, `0.1`, `2`).
fn wall_time_seconds(wall_time: Duration) -> Value {
    let tenths = (wall_time.as_secs_f64() * 10.0).round();
    if tenths % 10.0 == 0.0 { json!((tenths / 10.0) as u64) } else { json!(tenths / 10.0) }
}

/// The file's text when it holds at most `max` bytes, else its first and last `max / 2` bytes around a marker
/// (cut on character boundaries); the flag says whether anything was left out.
fn read_capped(path: &Path, max: usize) -> std::io::Result<(String, bool)> {
    let mut file = std::fs::File::open(path)?;
    let size = usize::try_from(file.metadata()?.len()).unwrap_or(usize::MAX);
    if size <= max {
        let mut bytes = Vec::with_capacity(size);
        file.read_to_end(&mut bytes)?;
        return Ok((String::from_utf8_lossy(&bytes).into_owned(), false));
    }
    let head_len = max / 2;
    let tail_len = max - head_len;
    let mut head = vec![0; head_len];
    file.read_exact(&mut head)?;
    let mut tail = vec![0; tail_len];
    file.seek(SeekFrom::Start(u64::try_from(size - tail_len).unwrap_or(u64::MAX)))?;
    file.read_exact(&mut tail)?;
    let head = whole_chars_prefix(&head);
    let tail = whole_chars_suffix(&tail);
    Ok((format!("{}{ELISION}{}", String::from_utf8_lossy(head), String::from_utf8_lossy(tail)), true))
}

/// `bytes` without a UTF-8 character cut at its end.
fn whole_chars_prefix(bytes: &[u8]) -> &[u8] {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes,
        Err(error) if error.error_len().is_none() => &bytes[..error.valid_up_to()],
        Err(_) => bytes,
    }
}

/// `bytes` without the continuation bytes of a character cut at its start.
fn whole_chars_suffix(bytes: &[u8]) -> &[u8] {
    let skip = bytes.iter().take(3).take_while(|byte| (**byte & 0b1100_0000) == 0b1000_0000).count();
    &bytes[skip..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wall_time_is_rounded_to_tenths() {
        assert_eq!(wall_time_seconds(Duration::from_millis(12)), json!(0));
        assert_eq!(wall_time_seconds(Duration::from_millis(149)), json!(0.1));
        assert_eq!(wall_time_seconds(Duration::from_millis(2_000)), json!(2));
        assert_eq!(wall_time_seconds(Duration::from_millis(2_460)), json!(2.5));
    }

    #[test]
    fn long_files_keep_their_two_ends_on_character_boundaries() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("out.log");
        let text = format!("{}{}{}", "a".repeat(9), "é".repeat(10), "z".repeat(9));
        std::fs::write(&path, &text).unwrap();
        let (whole, cut) = read_capped(&path, 100).unwrap();
        assert_eq!((whole.as_str(), cut), (text.as_str(), false));
        let (capped, cut) = read_capped(&path, 22).unwrap();
        assert!(cut);
        assert_eq!(capped, format!("aaaaaaaaa\u{e9}{ELISION}\u{e9}zzzzzzzzz"));
        // Halves that end inside a character drop its pieces.
        let (capped, _) = read_capped(&path, 20).unwrap();
        assert_eq!(capped, format!("aaaaaaaaa{ELISION}zzzzzzzzz"));
    }
}
