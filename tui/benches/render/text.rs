//! The bench's text: prompts, short answers, tool output, and the long streamed markdown answer.

pub(crate) fn user_text(index: usize) -> String {
    const PROMPTS: [&str; 4] = [
        "The session list takes several seconds to open when there are a few thousand sessions. Can you find \
         where the time goes and make it load lazily, newest first? Keep the existing sort order and the \
         filter behaviour.",
        "Please look at src/module_{} and fix the failing test; it panics with an index out of bounds when the \
         list is empty. Add a regression test next to the others and run the whole suite afterwards.",
        "Rename `render_lines` to `draw` everywhere in the editor, update the docs that mention it, and make \
         sure nothing else in the workspace still calls the old name.",
        "Why does the footer show 0.0% after a resume? I expected the context usage of the last answer. \
         Explain what happens first, then propose the smallest fix.",
    ];
    PROMPTS[index % PROMPTS.len()].replace("{}", &index.to_string())
}

pub(crate) fn answer_text(index: usize) -> String {
    match index % 3 {
        0 => format!(
            "The test indexes past the end: `get` reads `items[i + 1]` where it should read `items[i]`, so the \
             last element panics. I fixed it in `src/module_{index}.rs` and added a regression test:\n\n\
             ```rust\n#[test]\nfn gets_the_last_item() {{\n    assert_eq!(get(&[1, 2, 3], 2), 3);\n}}\n```\n\n\
             All 214 tests pass now."
        ),
        1 => format!(
            "Here is what I changed (step {index}):\n\n\
             - **Loading**: the list reads only each file's header and first user message, newest first.\n\
             - **Sorting**: unchanged; it still sorts by the modification time.\n\
             - **Filter**: matches the name, the first message and the directory, as before.\n\n\
             Opening the selector with 3,000 sessions went from 4.1 s to 120 ms."
        ),
        _ => format!(
            "After a resume the usage comes from the **last assistant message**, but the footer asked for the \
             usage before the messages were loaded, so it saw none and showed `0.0%`. The fix moves the \
             computation after `load` (exchange {index}); nothing else reads it earlier."
        ),
    }
}

pub(crate) fn read_output(index: usize) -> String {
    let mut out = String::new();
    for line in 1..=40 {
        out.push_str(&format!(
            "{line:>4}\tpub fn item_{index}_{line}(items: &[u32], i: usize) -> Option<u32> {{ items.get(i).copied() }}\n"
        ));
    }
    out
}

pub(crate) fn bash_output(index: usize) -> String {
    let mut out =
        String::from("   Compiling pi-tui v0.1.0 (/home/dev/pi-gen/tui)\n    Finished `test` profile in 4.21s\n");
    for test in 0..24 {
        out.push_str(&format!("test editor::tests_editing::case_{index}_{test} ... ok\n"));
    }
    out.push_str("\ntest result: ok. 214 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.31s\n");
    out
}

/// A 2,000-token (~8 KB) answer: headings, paragraphs with inline styles, lists, code blocks and a table.
pub(crate) const ANSWER: &str = r#"# Making the session selector fast

The selector was slow because it **parsed every session file completely** before it showed anything. With
3,000 sessions of 200 entries each that is about 600,000 JSON lines, and all of it happened on the thread
that draws the screen. Nothing in the list needs more than the header, the first user message and the
modification time, so most of that work was thrown away.

## What the time went to

I timed the three phases with a small harness on the sessions directory you pointed me at:

| phase | before | after | note |
|---|---:|---:|---|
| listing the directory | 9 ms | 9 ms | unchanged, `read_dir` plus `metadata` |
| parsing files | 3.9 s | 84 ms | now only the first 16 KiB of each file |
| sorting and filtering | 140 ms | 21 ms | keys computed once, not per comparison |
| first frame | 4.1 s | 120 ms | the list shows as soon as it is sorted |

The parsing dominated. Each file was read into a `String`, split into lines and every line was decoded into
a typed entry, including tool results that can be hundreds of kilobytes. The sort then called
`display_name()` inside the comparator, which lowercased the name and the first message again for every
comparison, so `n log n` allocations on top.

## The changes

1. **Read only the head of each file.** The header is the first line and the first user message is almost
   always within the first few entries, so the loader reads at most 16 KiB and stops at the first user
   message. Files whose first message lies further in fall back to reading line by line.
2. **Decode lazily.** Instead of the typed entries the loader now looks at `type` and `role` with a
   borrowed `serde_json::value::RawValue` and only decodes the one message it needs.
3. **Compute the sort keys once.** Each row keeps its lowercased name and its modification time, so the
   comparator compares two fields and allocates nothing.
4. **Show the list before the details.** The message counts are filled in by a background task and the rows
   redraw when they arrive; until then they show `…`.

The reading part now looks like this:

```rust
/// The header and the first user message of a session file, reading at most `limit` bytes.
pub fn read_head(path: &Path, limit: usize) -> io::Result<Option<SessionHead>> {
    let file = File::open(path)?;
    let mut reader = BufReader::new(file.take(limit as u64));
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Ok(None);
    }
    let Ok(header) = serde_json::from_str::<SessionHeader>(&line) else {
        return Ok(None);
    };
    let mut first_message = None;
    loop {
        line.clear();
        if reader.read_line(&mut line)? == 0 {
            break;
        }
        let Ok(probe) = serde_json::from_str::<Probe<'_>>(&line) else { continue };
        if probe.kind == "message" && probe.role() == Some("user") {
            first_message = probe.text();
            break;
        }
    }
    Ok(Some(SessionHead { header, first_message }))
}
```

And the sort keys:

```rust
let mut rows: Vec<Row> = heads.into_iter().map(Row::new).collect();
rows.sort_by(|a, b| b.modified.cmp(&a.modified).then_with(|| a.key.cmp(&b.key)));
```

## Behaviour that stays the same

- The order is still newest first, ties broken by name.
- The filter still matches the session name, the first message and the working directory, case-insensitively.
- Sessions without a user message still show `(no messages)` and sort by their header's timestamp.
- A file that is not a session (no header) is skipped, as before, and does not stop the listing.

Two things changed on purpose:

- The message count shows `…` for a moment on very large directories.
- A session whose header is corrupt is now listed as unreadable instead of making the whole list fail; before,
  one bad file hid every session.

## Tests

I added three tests next to the existing ones in `session_list.rs`:

- `reads_only_the_head_of_a_large_session`, with a 40 MB file whose first user message is on line 3; it
  checks that no more than 16 KiB are read, through a reader that counts bytes;
- `falls_back_when_the_first_message_is_far_in`, where the first user message is entry 500;
- `a_corrupt_header_is_listed_not_fatal`.

The whole suite passes:

```text
$ cargo test -p pi-runtime session_list
running 17 tests
test cli::interactive::session_list::tests::reads_only_the_head_of_a_large_session ... ok
test cli::interactive::session_list::tests::falls_back_when_the_first_message_is_far_in ... ok
test cli::interactive::session_list::tests::a_corrupt_header_is_listed_not_fatal ... ok
test result: ok. 17 passed; 0 failed; 0 ignored; 0 measured; 512 filtered out; finished in 0.42s
```

## Numbers on your directory

With your 3,112 sessions (1.9 GB in total) the selector now opens in **118 ms** cold and **41 ms** warm,
against 4.1 s and 2.7 s before. Memory while it is open went from 410 MiB to 23 MiB, because the typed
entries are no longer kept; only the rows are.

| sessions | size | before (cold) | after (cold) | after (warm) |
|---:|---:|---:|---:|---:|
| 100 | 61 MB | 160 ms | 14 ms | 5 ms |
| 1,000 | 610 MB | 1.4 s | 46 ms | 16 ms |
| 3,112 | 1.9 GB | 4.1 s | 118 ms | 41 ms |

## What I did not do

- I did not add an on-disk index. It would make the warm case faster still, but it needs invalidation when
  another process writes a session, and the numbers above already feel instant.
- I left `export_html` alone; it still parses whole files, which is right since it needs every entry.
- The `--resume` path outside the interactive mode still uses the old loader. It lists sessions once and
  exits, so it matters less, but switching it over is a three-line change if you want it.

## Risks

- **Partial reads.** A session being written while the selector reads it may end mid-line in the first
  16 KiB; the loader treats an undecodable line as the end of the head, so the row shows the header and
  `(no messages)` until the next refresh.
- **Encodings.** Session files are UTF-8 by construction, but a truncated read could cut a character in two;
  `read_line` on the limited reader returns an error then, which the loader maps to the fallback path.
- **Clock skew.** Sorting still uses the file's modification time, so copying sessions between machines
  without preserving times reorders them. That was true before and is out of scope here.

The fallback path is small enough to show whole:

```rust
pub(crate) fn first_user_message(path: &Path) -> io::Result<Option<String>> {
    let reader = BufReader::new(File::open(path)?);
    for line in reader.lines().skip(1) {
        let line = line?;
        let Ok(probe) = serde_json::from_str::<Probe<'_>>(&line) else { continue };
        if probe.kind == "message" && probe.role() == Some("user") {
            return Ok(probe.text());
        }
    }
    Ok(None)
}
```

## Next steps

If you want, I can:

1. switch `--resume` to the new loader as well;
2. add a benchmark under `runtime/benches/` that builds 3,000 synthetic sessions and measures the listing, so
   a regression shows up in numbers rather than in a bug report;
3. look at the tree view, which has the same pattern of decoding every entry to draw a few hundred rows.

> Note: the 16 KiB limit is a constant, `HEAD_LIMIT`, in `session_list.rs`. Sessions written by extensions
> with very large custom entries before the first message may need more; they still work, only slower,
> because of the fallback.

Let me know which of these you want, or whether the `…` placeholder for the counts is acceptable. If it is
not, I can compute the counts while reading the head for small files and only defer the large ones, which
keeps the first frame fast and shows real counts for almost every row. One more detail: the background task
that fills in the counts is cancelled when the selector closes, so opening and closing it quickly does not
pile up work. The cancellation is tested by `closing_the_selector_stops_the_counting`, which opens and closes
the list a hundred times against a slow reader and checks that at most one count is in flight.

### Summary

- Parsing only the head of each file: **3.9 s → 84 ms**.
- Sort keys once: **140 ms → 21 ms**.
- First frame: **4.1 s → 120 ms**, memory **410 MiB → 23 MiB**.
- Three new tests, all 17 in the module passing.
"#;
