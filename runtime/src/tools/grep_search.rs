//! The engine behind the `grep` tool: ripgrep's own matcher and searcher run over the parallel walk, with
//! ripgrep's settings, collecting matching lines until the match limit is reached.

use std::io;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder, Sink, SinkMatch};
use ignore::{DirEntry, WalkParallel, WalkState};

use super::ToolError;
use super::walk::StopFlag;

/// One matching line as ripgrep reports it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct LineMatch {
    /// 1-based line number.
    pub line_number: u64,
    /// The line with its terminator, or `None` when it is not valid UTF-8 (ripgrep then sends bytes, and pi
    /// reads the line from the file instead).
    pub text: Option<String>,
}

/// The matches found in one file, in line order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FileMatches {
    pub path: PathBuf,
    pub matches: Vec<LineMatch>,
}

/// What a search found.
#[derive(Debug, Default)]
pub(crate) struct SearchOutcome {
    /// Files with matches, sorted by path.
    pub files: Vec<FileMatches>,
    /// Number of matching lines kept (at most the limit).
    pub total: usize,
    /// Reading a directory or file failed somewhere (ripgrep then exits with status 2).
    pub errors: Vec<String>,
}

/// Builds the regex matcher the way ripgrep does for `rg [--ignore-case] [--fixed-strings] -- pattern`.
pub(crate) fn build_matcher(pattern: &str, ignore_case: bool, literal: bool) -> Result<RegexMatcher, ToolError> {
    RegexMatcherBuilder::new()
        .multi_line(true)
        .unicode(true)
        .octal(false)
        .fixed_strings(literal)
        .case_insensitive(ignore_case)
        .line_terminator(Some(b'\n'))
        .dot_matches_new_line(false)
        .ban_byte(Some(b'\x00'))
        .build_many(&[pattern])
        .map_err(|err| ToolError::new(err.to_string()))
}

/// Searches every file the walker yields, in parallel, keeping at most `max_matches` matching lines in total
/// and stopping the walk once that many are found or `stop` is set from outside.
pub(crate) fn search_tree(
    walker: WalkParallel,
    matcher: &RegexMatcher,
    max_matches: usize,
    stop: &StopFlag,
) -> SearchOutcome {
    let collected = Mutex::new(SearchOutcome::default());
    walker.run(|| {
        let mut searcher = SearcherBuilder::new().line_number(true).build();
        let matcher = matcher.clone();
        let collected = &collected;
        Box::new(move |entry| {
            if stop.is_stopped() {
                return WalkState::Quit;
            }
            let entry = match entry {
                Ok(entry) => entry,
                Err(err) => {
                    lock(collected).errors.push(err.to_string());
                    return WalkState::Continue;
                }
            };
            let Some(haystack) = Haystack::of(&entry) else { return WalkState::Continue };
            searcher.set_binary_detection(haystack.binary_detection());
            match search_file(&mut searcher, &matcher, entry.path(), haystack, max_matches, stop) {
                Ok(matches) if matches.is_empty() => {}
                Ok(matches) => keep(collected, entry.into_path(), matches, max_matches, stop),
                Err(err) => lock(collected).errors.push(format!("{}: {err}", entry.path().display())),
            }
            stop.walk_state()
        })
    });
    let mut outcome = collected.into_inner().unwrap_or_else(|poisoned| poisoned.into_inner());
    outcome.files.sort_by(|a, b| a.path.cmp(&b.path));
    outcome
}

/// How ripgrep searches an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Haystack {
    /// The search path itself, a regular file: ripgrep memory-maps it (searching it as one slice) and
    /// converts NUL bytes instead of giving up on binary data.
    NamedFile,
    /// The search path itself, but not a regular file (a pipe, a device): read as a stream, NULs converted.
    NamedOther,
    /// A regular file found by the walk: streamed, abandoned at the first NUL byte.
    Walked,
}

impl Haystack {
    /// How ripgrep treats this entry, or `None` if it does not search it (directories, and anything the walk
    /// finds that is not a regular file, such as symlinks).
    fn of(entry: &DirEntry) -> Option<Self> {
        let file_type = entry.file_type()?;
        if entry.depth() == 0 && !file_type.is_dir() && !(entry.path_is_symlink() && entry.path().is_dir()) {
            Some(if entry.path().is_file() { Self::NamedFile } else { Self::NamedOther })
        } else if file_type.is_file() {
            Some(Self::Walked)
        } else {
            None
        }
    }

    fn binary_detection(self) -> BinaryDetection {
        match self {
            Self::NamedFile | Self::NamedOther => BinaryDetection::convert(b'\x00'),
            Self::Walked => BinaryDetection::quit(b'\x00'),
        }
    }
}

fn lock(collected: &Mutex<SearchOutcome>) -> std::sync::MutexGuard<'_, SearchOutcome> {
    collected.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Adds one file's matches, as ripgrep's output would deliver them (whole files, in completion order), up to
/// the limit; stops the walk when the limit is reached.
fn keep(collected: &Mutex<SearchOutcome>, path: PathBuf, mut matches: Vec<LineMatch>, max: usize, stop: &StopFlag) {
    let mut outcome = lock(collected);
    let room = max.saturating_sub(outcome.total);
    if room == 0 {
        return;
    }
    matches.truncate(room);
    outcome.total += matches.len();
    outcome.files.push(FileMatches { path, matches });
    if outcome.total >= max {
        stop.stop();
    }
}

/// Searches one file, returning at most `max` matching lines.
fn search_file(
    searcher: &mut Searcher,
    matcher: &RegexMatcher,
    path: &Path,
    haystack: Haystack,
    max: usize,
    stop: &StopFlag,
) -> io::Result<Vec<LineMatch>> {
    let mut sink = CollectLines { matches: Vec::new(), max, stop };
    if haystack == Haystack::NamedFile {
        // Searching the whole file as one slice gives the same results as ripgrep's memory map (line numbers
        // around converted NUL bytes differ between slice and stream searches).
        searcher.search_slice(matcher, &std::fs::read(path)?, &mut sink)?;
    } else {
        searcher.search_path(matcher, path, &mut sink)?;
    }
    Ok(sink.matches)
}

/// Collects matching lines (one per call, since the searcher runs line by line).
struct CollectLines<'a> {
    matches: Vec<LineMatch>,
    max: usize,
    stop: &'a StopFlag,
}

impl Sink for CollectLines<'_> {
    type Error = io::Error;

    fn matched(&mut self, _searcher: &Searcher, found: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let text = std::str::from_utf8(found.bytes()).ok().map(str::to_owned);
        self.matches.push(LineMatch { line_number: found.line_number().unwrap_or(0), text });
        Ok(self.matches.len() < self.max && !self.stop.is_stopped())
    }
}
