//! Tests for file panels on real files: opening, truncation, errors, refreshing by stamp.

use std::path::Path;
use std::time::{Duration, SystemTime};

use super::{DELETED_FILE_TEXT, FilePanel, FilePanelError};

/// Moves the file's modification time an hour back, out of the racy window.
fn age(path: &Path) -> SystemTime {
    let an_hour_ago = SystemTime::now() - Duration::from_secs(3600);
    std::fs::File::options().write(true).open(path).unwrap().set_modified(an_hour_ago).unwrap();
    an_hour_ago
}

#[test]
fn opens_a_relative_path_against_the_working_directory() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("src")).unwrap();
    std::fs::write(dir.path().join("src/main.rs"), "fn main() {}\n").unwrap();

    let panel = FilePanel::open(dir.path(), "src/main.rs", 1000).unwrap();
    assert_eq!(panel.path(), "src/main.rs");
    assert_eq!(panel.resolved_path(), dir.path().join("src/main.rs"));
    assert_eq!(panel.content(), "fn main() {}\n");

    let absolute = dir.path().join("src/main.rs");
    let panel = FilePanel::open(Path::new("/"), absolute.to_str().unwrap(), 1000).unwrap();
    assert_eq!(panel.resolved_path(), absolute);
    assert_eq!(panel.content(), "fn main() {}\n");
}

#[test]
fn a_missing_file_a_directory_and_binary_data_are_errors() {
    let dir = tempfile::tempdir().unwrap();
    let missing = FilePanel::open(dir.path(), "nope.txt", 1000).unwrap_err();
    assert!(matches!(missing, FilePanelError::NotFound { .. }), "{missing:?}");
    assert!(missing.to_string().contains("nope.txt"), "{missing}");

    let directory = FilePanel::open(dir.path(), ".", 1000).unwrap_err();
    assert!(matches!(directory, FilePanelError::IsDirectory { .. }), "{directory:?}");
    assert!(directory.to_string().contains("is a directory"), "{directory}");

    std::fs::write(dir.path().join("image.png"), [0x89, b'P', b'N', b'G', 0xff, 0xfe, b'\n']).unwrap();
    let binary = FilePanel::open(dir.path(), "image.png", 1000).unwrap_err();
    assert!(matches!(binary, FilePanelError::NotUtf8 { .. }), "{binary:?}");
    assert!(binary.to_string().contains("not UTF-8"), "{binary}");
}

#[test]
fn a_large_file_is_cut_at_a_line_boundary_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    // 10 lines of 10 bytes each.
    let text: String = (0..10).map(|i| format!("line {i:04}\n")).collect();
    std::fs::write(dir.path().join("big.txt"), &text).unwrap();

    let panel = FilePanel::open(dir.path(), "big.txt", 35).unwrap();
    assert_eq!(panel.content(), "line 0000\nline 0001\nline 0002\n[... truncated: showing first 30 of 100 bytes]");

    // Exactly at the limit nothing is cut.
    let panel = FilePanel::open(dir.path(), "big.txt", 100).unwrap();
    assert_eq!(panel.content(), text);
}

#[test]
fn a_single_long_line_is_cut_on_a_character_boundary() {
    let dir = tempfile::tempdir().unwrap();
    // "é" is two bytes: a 5-byte limit falls inside the third one.
    std::fs::write(dir.path().join("accents.txt"), "ééééé").unwrap();

    let panel = FilePanel::open(dir.path(), "accents.txt", 5).unwrap();
    assert_eq!(panel.content(), "éé\n[... truncated: showing first 4 of 10 bytes]");
}

#[test]
fn refresh_reads_again_when_the_file_changes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("notes.md");
    std::fs::write(&path, "one\n").unwrap();
    let mut panel = FilePanel::open(dir.path(), "notes.md", 1000).unwrap();
    assert!(!panel.refresh(), "nothing changed");

    // Same length, written right away: the racy window makes the panel look anyway.
    std::fs::write(&path, "two\n").unwrap();
    assert!(panel.refresh());
    assert_eq!(panel.content(), "two\n");

    std::fs::write(&path, "three\n").unwrap();
    assert!(panel.refresh());
    assert_eq!(panel.content(), "three\n");
    assert!(!panel.refresh());
}

#[test]
fn an_unchanged_stamp_skips_the_read() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settled.txt");
    std::fs::write(&path, "old\n").unwrap();
    let old_time = age(&path);
    let mut panel = FilePanel::open(dir.path(), "settled.txt", 1000).unwrap();
    assert!(panel.stamp().is_some(), "an old file's stamp is trusted");

    // Same length and time: the panel cannot tell, and does not read.
    std::fs::write(&path, "new\n").unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(old_time).unwrap();
    assert!(!panel.refresh());
    assert_eq!(panel.content(), "old\n");

    // A new time makes it read.
    age(&path);
    assert!(panel.refresh());
    assert_eq!(panel.content(), "new\n");
}

#[test]
fn a_deleted_file_says_so_and_a_recreated_one_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("gone.txt");
    std::fs::write(&path, "here\n").unwrap();
    let mut panel = FilePanel::open(dir.path(), "gone.txt", 1000).unwrap();

    std::fs::remove_file(&path).unwrap();
    assert!(panel.refresh());
    assert_eq!(panel.content(), DELETED_FILE_TEXT);
    assert!(!panel.refresh(), "still deleted: no change");

    std::fs::write(&path, "back\n").unwrap();
    assert!(panel.refresh());
    assert_eq!(panel.content(), "back\n");
}

#[test]
fn a_file_that_turns_binary_shows_why_it_cannot_be_shown() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("data.txt");
    std::fs::write(&path, "text\n").unwrap();
    let mut panel = FilePanel::open(dir.path(), "data.txt", 1000).unwrap();

    std::fs::write(&path, [0xff, 0xfe, 0x00]).unwrap();
    assert!(panel.refresh());
    assert!(panel.content().starts_with('[') && panel.content().contains("not UTF-8"), "{}", panel.content());
}

#[test]
fn a_file_changed_just_before_it_was_read_is_read_again() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fresh.txt");
    std::fs::write(&path, "one\n").unwrap();
    let mut panel = FilePanel::open(dir.path(), "fresh.txt", 1000).unwrap();
    assert_eq!(panel.stamp(), None, "a file written just now could change again within the same clock tick");

    // A change in the same clock tick would leave length and time as they were; pretend that happened.
    let time = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::fs::write(&path, "two\n").unwrap();
    std::fs::File::options().write(true).open(&path).unwrap().set_modified(time).unwrap();
    assert!(panel.refresh());
    assert_eq!(panel.content(), "two\n");
}
