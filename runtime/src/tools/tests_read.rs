//! Tests for the read tool on real files: paging, truncation notices, errors and images.

use serde_json::{Value, json};
use tempfile::TempDir;

use super::read::{base64_encode, detect_image_mime};
use super::{AgentTool, ToolContext, ToolEnvironment, ToolError, builtin_tool};
use crate::protocol::{AgentToolResult, UserContent};

fn tool(dir: &TempDir) -> std::sync::Arc<dyn AgentTool> {
    builtin_tool("read", &ToolEnvironment::new(dir.path())).unwrap()
}

async fn read(dir: &TempDir, args: Value) -> Result<AgentToolResult, ToolError> {
    tool(dir).execute(args, ToolContext::new("call-1")).await
}

fn text(result: &AgentToolResult) -> &str {
    result.content[0].as_text().unwrap()
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line{i}")).collect::<Vec<_>>().join("\n")
}

#[tokio::test]
async fn returns_raw_file_content() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("hello.txt"), "Hello from the fixture file.\nSecond line.\n").unwrap();
    let result = read(&dir, json!({"path": "hello.txt"})).await.unwrap();
    assert_eq!(text(&result), "Hello from the fixture file.\nSecond line.\n");
    assert_eq!(result.details, None);
}

#[tokio::test]
async fn strips_at_prefix_and_accepts_absolute_paths() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha").unwrap();
    assert_eq!(text(&read(&dir, json!({"path": "@a.txt"})).await.unwrap()), "alpha");
    let abs = dir.path().join("a.txt").display().to_string();
    assert_eq!(text(&read(&dir, json!({"path": abs})).await.unwrap()), "alpha");
    assert_eq!(text(&read(&dir, json!({"path": "./sub/../a.txt"})).await.unwrap()), "alpha");
}

#[tokio::test]
async fn truncates_by_lines_with_continue_notice() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("long.txt"), numbered(2500)).unwrap();
    let result = read(&dir, json!({"path": "long.txt"})).await.unwrap();
    let out = text(&result);
    assert!(out.ends_with("line2000\n\n[Showing lines 1-2000 of 2500. Use offset=2001 to continue.]"), "{out}");
    let details = result.details.unwrap();
    assert_eq!(details["truncation"]["truncatedBy"], "lines");
    assert_eq!(details["truncation"]["outputLines"], 2000);
}

#[tokio::test]
async fn truncates_by_bytes_with_limit_notice() {
    let dir = TempDir::new().unwrap();
    let line = "x".repeat(1000);
    std::fs::write(dir.path().join("wide.txt"), vec![line.as_str(); 100].join("\n")).unwrap();
    let result = read(&dir, json!({"path": "wide.txt"})).await.unwrap();
    assert!(
        text(&result).ends_with("\n\n[Showing lines 1-51 of 100 (50.0KB limit). Use offset=52 to continue.]"),
        "{}",
        &text(&result)[text(&result).len() - 120..]
    );
    assert_eq!(result.details.unwrap()["truncation"]["truncatedBy"], "bytes");
}

#[tokio::test]
async fn continues_from_offset_after_truncation() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("long.txt"), numbered(2500)).unwrap();
    let result = read(&dir, json!({"path": "long.txt", "offset": 2001})).await.unwrap();
    let out = text(&result);
    assert!(out.starts_with("line2001\nline2002"));
    assert!(out.ends_with("line2500"));
    assert!(!out.contains("[Showing"));
}

#[tokio::test]
async fn oversized_first_line_suggests_bash() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("big.txt"), "q".repeat(60_000)).unwrap();
    let result = read(&dir, json!({"path": "big.txt"})).await.unwrap();
    assert_eq!(
        text(&result),
        "[Line 1 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '1p' big.txt | head -c 51200]"
    );
    assert_eq!(result.details.unwrap()["truncation"]["firstLineExceedsLimit"], true);
}

#[tokio::test]
async fn limit_reports_remaining_lines() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("f.txt"), numbered(100)).unwrap();
    let result = read(&dir, json!({"path": "f.txt", "limit": 10})).await.unwrap();
    let expected = format!("{}\n\n[90 more lines in file. Use offset=11 to continue.]", numbered(10));
    assert_eq!(text(&result), expected);
}

#[tokio::test]
async fn offset_and_limit_select_a_window() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("f.txt"), numbered(10)).unwrap();
    let result = read(&dir, json!({"path": "f.txt", "offset": 5, "limit": 2})).await.unwrap();
    assert_eq!(text(&result), "line5\nline6\n\n[4 more lines in file. Use offset=7 to continue.]");
    let tail = read(&dir, json!({"path": "f.txt", "offset": "9"})).await.unwrap();
    assert_eq!(text(&tail), "line9\nline10");
}

#[tokio::test]
async fn offset_beyond_end_is_an_error() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("three.txt"), "a\nb\nc").unwrap();
    let err = read(&dir, json!({"path": "three.txt", "offset": 100})).await.unwrap_err();
    assert_eq!(err.message, "Offset 100 is beyond end of file (3 lines total)");
}

#[tokio::test]
async fn missing_file_is_an_error_naming_the_path() {
    let dir = TempDir::new().unwrap();
    let err = read(&dir, json!({"path": "nope.txt"})).await.unwrap_err();
    let expected = format!("ENOENT: no such file or directory, access '{}'", dir.path().join("nope.txt").display());
    assert_eq!(err.message, expected);
}

#[tokio::test]
async fn directory_is_an_error() {
    let dir = TempDir::new().unwrap();
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    let err = read(&dir, json!({"path": "sub"})).await.unwrap_err();
    assert!(err.message.starts_with("EISDIR"), "{}", err.message);
}

#[tokio::test]
async fn missing_path_argument_is_an_error() {
    let dir = TempDir::new().unwrap();
    let err = read(&dir, json!({"offset": 1})).await.unwrap_err();
    assert!(err.message.contains("\"path\""), "{}", err.message);
}

#[tokio::test]
async fn png_is_returned_as_image() {
    let dir = TempDir::new().unwrap();
    let mut png = vec![0x89, b'P', b'N', b'G', 0x0D, 0x0A, 0x1A, 0x0A];
    png.extend_from_slice(b"\0\0\0\rIHDR rest of the image");
    // The name says .txt: detection goes by content, not extension.
    std::fs::write(dir.path().join("pic.txt"), &png).unwrap();
    let result = read(&dir, json!({"path": "pic.txt"})).await.unwrap();
    assert_eq!(result.content.len(), 2);
    assert_eq!(result.content[0].as_text(), Some("Read image file [image/png]"));
    match &result.content[1] {
        UserContent::Image(image) => {
            assert_eq!(image.mime_type, "image/png");
            assert_eq!(image.data, base64_encode(&png));
        }
        other => panic!("expected an image, got {other:?}"),
    }
}

#[test]
fn detects_image_magic_bytes() {
    assert_eq!(detect_image_mime(&[0xFF, 0xD8, 0xFF, 0xE0, 0, 0]), Some("image/jpeg"));
    assert_eq!(detect_image_mime(b"GIF89a\x01\x00"), Some("image/gif"));
    assert_eq!(detect_image_mime(b"RIFF\x10\x00\x00\x00WEBPVP8 "), Some("image/webp"));
    assert_eq!(detect_image_mime(b"RIFF\x10\x00\x00\x00WAVEfmt "), None);
    assert_eq!(detect_image_mime(b"plain text"), None);
    assert_eq!(detect_image_mime(b""), None);
}

#[test]
fn base64_matches_rfc4648_vectors() {
    let cases =
        [("", ""), ("f", "Zg=="), ("fo", "Zm8="), ("foo", "Zm9v"), ("foob", "Zm9vYg=="), ("foobar", "Zm9vYmFy")];
    for (input, expected) in cases {
        assert_eq!(base64_encode(input.as_bytes()), expected, "{input}");
    }
    assert_eq!(base64_encode(&[0xFB, 0xFF, 0xBF]), "+/+/");
}

#[tokio::test]
async fn cancelled_read_fails() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("a.txt"), "alpha").unwrap();
    let ctx = ToolContext::new("c");
    ctx.cancel.cancel();
    let err = tool(&dir).execute(json!({"path": "a.txt"}), ctx).await.unwrap_err();
    assert_eq!(err.message, "Operation aborted");
}

#[tokio::test]
async fn devices_and_named_pipes_are_refused_at_once() {
    let dir = tempfile::TempDir::new().unwrap();
    let fifo = dir.path().join("pipe");
    let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    let started = std::time::Instant::now();
    let error = super::read::read_file(dir.path(), "pipe", None, None).await.expect_err("a FIFO is refused");
    assert!(error.message.contains("named pipe"), "{}", error.message);
    let error = super::read::read_file(dir.path(), "/dev/zero", None, None).await.expect_err("a device is refused");
    assert!(error.message.contains("character device"), "{}", error.message);
    assert!(started.elapsed() < std::time::Duration::from_secs(5), "nothing blocked");
}

#[tokio::test]
async fn offsets_at_and_past_the_end() {
    let dir = TempDir::new().unwrap();
    // A trailing newline ends the file with an empty line: "a\nb\n" has three lines.
    std::fs::write(dir.path().join("t.txt"), "a\nb\n").unwrap();
    assert_eq!(text(&read(&dir, json!({"path": "t.txt", "offset": 2})).await.unwrap()), "b\n");
    assert_eq!(text(&read(&dir, json!({"path": "t.txt", "offset": 3})).await.unwrap()), "");
    let err = read(&dir, json!({"path": "t.txt", "offset": 4})).await.unwrap_err();
    assert_eq!(err.message, "Offset 4 is beyond end of file (3 lines total)");
    std::fs::write(dir.path().join("empty.txt"), "").unwrap();
    assert_eq!(text(&read(&dir, json!({"path": "empty.txt"})).await.unwrap()), "");
    let err = read(&dir, json!({"path": "empty.txt", "offset": 2.5})).await.unwrap_err();
    assert_eq!(err.message, "Offset 2.5 is beyond end of file (1 lines total)");
}

#[tokio::test]
async fn files_without_a_trailing_newline_and_crlf_lines() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("plain.txt"), "one\ntwo\nthree").unwrap();
    let result = read(&dir, json!({"path": "plain.txt", "offset": 2, "limit": 1})).await.unwrap();
    assert_eq!(text(&result), "two\n\n[1 more lines in file. Use offset=3 to continue.]");
    assert_eq!(text(&read(&dir, json!({"path": "plain.txt", "offset": 3})).await.unwrap()), "three");
    // Carriage returns stay in the lines, as pi returns them.
    std::fs::write(dir.path().join("crlf.txt"), "one\r\ntwo\r\nthree\r\n").unwrap();
    assert_eq!(text(&read(&dir, json!({"path": "crlf.txt"})).await.unwrap()), "one\r\ntwo\r\nthree\r\n");
    let result = read(&dir, json!({"path": "crlf.txt", "limit": 2})).await.unwrap();
    assert_eq!(text(&result), "one\r\ntwo\r\n\n[2 more lines in file. Use offset=3 to continue.]");
}

#[tokio::test]
async fn a_long_line_after_the_first_stops_the_output_before_it() {
    let dir = TempDir::new().unwrap();
    let long = "z".repeat(60_000);
    std::fs::write(dir.path().join("mixed.txt"), format!("first\nsecond\n{long}\nlast")).unwrap();
    let result = read(&dir, json!({"path": "mixed.txt"})).await.unwrap();
    assert_eq!(text(&result), "first\nsecond\n\n[Showing lines 1-2 of 4 (50.0KB limit). Use offset=3 to continue.]");
    let truncation = &result.details.unwrap()["truncation"];
    assert_eq!(truncation["totalLines"], 4);
    assert_eq!(truncation["totalBytes"], 60_018);
    assert_eq!(truncation["outputBytes"], 12);
    let result = read(&dir, json!({"path": "mixed.txt", "offset": 3})).await.unwrap();
    assert_eq!(
        text(&result),
        "[Line 3 is 58.6KB, exceeds 50.0KB limit. Use bash: sed -n '3p' mixed.txt | head -c 51200]"
    );
    assert_eq!(text(&read(&dir, json!({"path": "mixed.txt", "offset": 4})).await.unwrap()), "last");
}

#[tokio::test]
async fn invalid_utf8_is_replaced_and_counted_as_replaced() {
    let dir = TempDir::new().unwrap();
    std::fs::write(dir.path().join("bin.txt"), b"ok\n\xff\xfe\nend\xe2\x82").unwrap();
    let result = read(&dir, json!({"path": "bin.txt"})).await.unwrap();
    assert_eq!(text(&result), "ok\n\u{FFFD}\u{FFFD}\nend\u{FFFD}");
}

#[tokio::test]
async fn a_large_file_returns_its_window_and_counts_every_line() {
    let dir = TempDir::new().unwrap();
    let body: String = (1..=300_000).map(|i| format!("row {i}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), &body).unwrap();
    let result = read(&dir, json!({"path": "big.txt", "offset": 150_000, "limit": 2})).await.unwrap();
    assert_eq!(text(&result), "row 150000\nrow 150001\n\n[150000 more lines in file. Use offset=150002 to continue.]");
    let result = read(&dir, json!({"path": "big.txt"})).await.unwrap();
    assert!(text(&result).ends_with("row 2000\n\n[Showing lines 1-2000 of 300001. Use offset=2001 to continue.]"));
    assert_eq!(result.details.unwrap()["truncation"]["totalBytes"], body.len());
}

#[tokio::test]
async fn jpeg_gif_and_webp_are_images_whatever_the_offset() {
    let dir = TempDir::new().unwrap();
    let images: [(&str, &[u8], &str); 3] = [
        ("a.jpg", b"\xFF\xD8\xFF\xE0\x00\x10JFIF\x00\n\n\nmore", "image/jpeg"),
        // Exactly the magic bytes: shorter than the 12 bytes read to recognise a format.
        ("b.gif", b"GIF89a", "image/gif"),
        ("c.webp", b"RIFF\x10\x00\x00\x00WEBPVP8 \n", "image/webp"),
    ];
    for (name, bytes, mime) in images {
        std::fs::write(dir.path().join(name), bytes).unwrap();
        let result = read(&dir, json!({"path": name, "offset": 3, "limit": 1})).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some(format!("Read image file [{mime}]").as_str()), "{name}");
        match &result.content[1] {
            UserContent::Image(image) => assert_eq!(image.data, base64_encode(bytes), "{name}"),
            other => panic!("{name}: expected an image, got {other:?}"),
        }
    }
    // Not quite an image: read as text.
    std::fs::write(dir.path().join("d.txt"), b"GIF89").unwrap();
    assert_eq!(text(&read(&dir, json!({"path": "d.txt"})).await.unwrap()), "GIF89");
}
