//! The user's own shell commands over RPC (`bash`, `abort_bash`): run with the agent's shell, working
//! directory and command prefix, answered with pi's `BashResult`, and kept in the conversation as a
//! `bashExecution` message. At pi 1.5's level the output also streams while the command runs, as the text
//! each moment added (`bash_execution_update`).

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::protocol::{BashExecutionMessage, now_ms};
use crate::tools::ToolEnvironment;
use crate::tools::bash::{ShellCommand, run_command, with_command_prefix};
use crate::tools::truncate::TruncationResult;

/// What one command produced: the reply's data and the message to keep.
pub struct UserBashOutcome {
    pub data: Value,
    pub message: BashExecutionMessage,
}

/// Runs `command` until it ends or `cancel` fires. A command that cannot start is an error text.
pub async fn run_user_bash(
    env: &ToolEnvironment,
    command: &str,
    cancel: &CancellationToken,
) -> Result<UserBashOutcome, String> {
    run_user_bash_streaming(env, command, cancel, |_| {}).await
}

/// [`run_user_bash`], handing `on_delta` each piece of output as it arrives (the pieces add up to the whole
/// output, even when the reply only keeps its tail).
pub async fn run_user_bash_streaming(
    env: &ToolEnvironment,
    command: &str,
    cancel: &CancellationToken,
    mut on_delta: impl FnMut(&str),
) -> Result<UserBashOutcome, String> {
    let script = with_command_prefix(env, command);
    let shell = ShellCommand::for_env(env).map_err(|error| error.to_string())?;
    let mut deltas = Deltas::default();
    let out = run_command(&script, &shell, None, cancel, |snapshot, spill| {
        if let Some(delta) = deltas.next(snapshot, spill, false) {
            on_delta(&delta);
        }
    })
    .await
    .map_err(|error| error.to_string())?;
    if let Some(delta) = deltas.next(&out.truncation, out.full_output_path.as_deref(), true) {
        on_delta(&delta);
    }
    let exit_code = if out.cancelled { None } else { out.exit_code.map(i64::from) };
    let full_output_path = out.full_output_path.as_ref().map(|path| path.to_string_lossy().into_owned());
    let mut data = json!({ "output": out.truncation.content });
    if let Some(code) = exit_code {
        data["exitCode"] = json!(code);
    }
    data["cancelled"] = json!(out.cancelled);
    data["truncated"] = json!(out.truncation.truncated);
    if let Some(path) = &full_output_path {
        data["fullOutputPath"] = json!(path);
    }
    let message = BashExecutionMessage {
        command: command.to_owned(),
        output: out.truncation.content,
        exit_code,
        cancelled: out.cancelled,
        truncated: out.truncation.truncated,
        full_output_path,
        timestamp: now_ms(),
        exclude_from_context: None,
    };
    Ok(UserBashOutcome { data, message })
}

/// Turns the snapshots a running command reports (its output so far, tail-truncated, and the file holding
/// all of it once it is long) into the text each one added.
#[derive(Debug, Default)]
struct Deltas {
    /// Bytes of output already reported.
    sent: usize,
}

impl Deltas {
    /// The text added since the last call; `None` when nothing was. A snapshot that is not plain UTF-8 (a
    /// character split between two reads, or binary output) waits for a later one unless it is the `last`.
    fn next(&mut self, snapshot: &TruncationResult, spill: Option<&Path>, last: bool) -> Option<String> {
        let total = snapshot.total_bytes;
        if total <= self.sent {
            return None;
        }
        if let Some(bytes) = spill.and_then(|path| read_range(path, self.sent, total)) {
            // Raw bytes: an unfinished character at the end waits for the rest of it.
            let keep = if last { bytes.len() } else { complete_prefix(&bytes) };
            self.sent += keep;
            return (keep > 0).then(|| String::from_utf8_lossy(&bytes[..keep]).into_owned());
        }
        let content = snapshot.content.as_str();
        let lossless = !content.contains('\u{FFFD}');
        // Lines cut off before they were sent: wait for the file that holds everything (a truncated output
        // has one by the end).
        let gap = snapshot.truncated && total - self.sent > content.len();
        if (!lossless || gap) && !last {
            return None;
        }
        // Whole, the snapshot's text holds what was sent at its start; cut to the last lines, its end holds
        // the new bytes unchanged (when it has no replacement characters).
        let start = if snapshot.truncated {
            content.len().saturating_sub(total - self.sent)
        } else {
            self.sent.min(content.len())
        };
        let start = (start..=content.len()).find(|index| content.is_char_boundary(*index)).unwrap_or(content.len());
        self.sent = total;
        let delta = &content[start..];
        (!delta.is_empty()).then(|| delta.to_owned())
    }
}

/// Bytes `from..to` of the file at `path`, when it holds them all.
fn read_range(path: &Path, from: usize, to: usize) -> Option<Vec<u8>> {
    let mut file = std::fs::File::open(path).ok()?;
    file.seek(SeekFrom::Start(u64::try_from(from).ok()?)).ok()?;
    let mut bytes = vec![0; to - from];
    file.read_exact(&mut bytes).ok()?;
    Some(bytes)
}

/// How many leading bytes of `bytes` end on a character boundary: all of them, unless the last character
/// is still incomplete (invalid bytes elsewhere count as they are).
fn complete_prefix(bytes: &[u8]) -> usize {
    match std::str::from_utf8(bytes) {
        Ok(_) => bytes.len(),
        Err(error) if error.error_len().is_none() => error.valid_up_to(),
        Err(_) => {
            // Invalid bytes earlier on: only an unfinished sequence in the last three bytes is held back.
            let tail_start = bytes.len().saturating_sub(3);
            (tail_start..bytes.len())
                .find(|&index| {
                    bytes[index] >= 0xC0 && std::str::from_utf8(&bytes[index..]).is_err_and(|e| e.error_len().is_none())
                })
                .unwrap_or(bytes.len())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::truncate::{TruncationOptions, truncate_tail};

    fn snapshot(text: &str, total: usize) -> TruncationResult {
        let mut result = truncate_tail(text, TruncationOptions::default());
        result.total_bytes = total;
        result
    }

    #[test]
    fn deltas_are_what_each_snapshot_added() {
        let mut deltas = Deltas::default();
        assert_eq!(deltas.next(&snapshot("a\n", 2), None, false).as_deref(), Some("a\n"));
        assert_eq!(deltas.next(&snapshot("a\n", 2), None, false), None, "nothing new");
        assert_eq!(deltas.next(&snapshot("a\nbé", 5), None, false).as_deref(), Some("bé"));
        // A character split between reads shows as a replacement character: it waits for the rest.
        assert_eq!(deltas.next(&snapshot("a\nbé\u{FFFD}", 6), None, false), None);
        assert_eq!(deltas.next(&snapshot("a\nbé€", 8), None, false).as_deref(), Some("€"));
        assert_eq!(deltas.next(&snapshot("a\nbé€\u{FFFD}", 9), None, true).as_deref(), Some("\u{FFFD}"));
    }

    #[test]
    fn lines_cut_off_before_they_were_sent_wait_for_the_whole_output() {
        let lines: String = (1..=3000).map(|n| format!("{n}\n")).collect();
        let mut deltas = Deltas::default();
        assert_eq!(deltas.next(&snapshot(&lines[..4], 4), None, false).as_deref(), Some("1\n2\n"));
        let cut = snapshot(&lines, lines.len());
        assert!(cut.truncated);
        assert_eq!(deltas.next(&cut, None, false), None, "the first lines of this piece are gone");
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("all.log");
        std::fs::write(&path, &lines).expect("write");
        assert_eq!(deltas.next(&cut, Some(&path), true).as_deref(), Some(&lines[4..]));
    }

    #[test]
    fn long_output_is_read_from_the_file_that_holds_all_of_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("out.log");
        let whole = "x".repeat(10) + "€y";
        std::fs::write(&path, &whole).expect("write");
        let mut deltas = Deltas { sent: 4 };
        // Only the first byte of the euro sign is in: it waits.
        let delta = deltas.next(&snapshot("tail", 11), Some(&path), false);
        assert_eq!(delta.as_deref(), Some("xxxxxx"));
        assert_eq!(deltas.next(&snapshot("tail", 14), Some(&path), false).as_deref(), Some("€y"));
        assert_eq!(complete_prefix(b"ab\xe2\x82"), 2);
        assert_eq!(complete_prefix(b"a\xffb\xe2"), 3);
        assert_eq!(complete_prefix(b"a\xffb"), 3);
    }
}
