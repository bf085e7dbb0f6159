//! Tests of the markdown layout: snapshots of the plain lines for every block type, styles on the raw
//! lines, streaming prefixes and the cache.

use super::Markdown;
use crate::component::Component;
use crate::text::{strip_escapes, visible_width};
use crate::theme::{ColorDepth, Role, Theme};

fn theme() -> Theme {
    Theme::dark(ColorDepth::TrueColor)
}

/// The styled lines of `source` at `width`, each checked to fit.
fn render(source: &str, width: usize) -> Vec<String> {
    let lines = Markdown::new(source, theme()).render(width);
    for line in &lines {
        assert!(visible_width(line) <= width, "{:?} is wider than {width}", strip_escapes(line));
    }
    lines
}

/// The lines without their styles, joined.
fn plain(source: &str, width: usize) -> String {
    render(source, width).iter().map(|line| strip_escapes(line)).collect::<Vec<_>>().join("\n")
}

#[test]
fn the_pi_example() {
    let source = "The file says hello from notes.\n\n- one\n- two\n\n```rust\nfn main() {}\n```\n";
    insta::assert_snapshot!(plain(source, 100));
}

#[test]
fn headings_lose_their_markers() {
    insta::assert_snapshot!(plain("# Title\n\n## Section\n\n### Sub *section*\n\nText under it.\n\n#### Four\n", 100));
}

#[test]
fn paragraphs_wrap_at_words() {
    let source = "A paragraph with **bold**, *italic*, ~~struck~~ and `inline code` that is long enough to be \
                  wrapped over several lines at forty columns.\nA soft break joins lines.  \nA hard break does not.";
    insta::assert_snapshot!(plain(source, 40));
}

#[test]
fn links_show_their_url_unless_it_is_the_text() {
    let source = "See [the docs](https://example.com/docs), <https://example.com> and <me@example.com>; \
                  ![a cat](cat.png).";
    insta::assert_snapshot!(plain(source, 100));
}

#[test]
fn bullet_ordered_and_task_lists() {
    let source = "- apples\n- pears\n\n3. third\n4. fourth\n\n- [ ] todo\n- [x] done\n";
    insta::assert_snapshot!(plain(source, 100));
}

#[test]
fn nested_lists_and_wrapped_items() {
    let source = "- top item whose text is long enough to wrap at thirty columns\n  - nested one\n    - deeper \
                  item that also wraps around\n  - nested two\n- second\n\n1. first\n   - inside ordered\n2. \
                  second\n";
    insta::assert_snapshot!(plain(source, 30));
}

#[test]
fn loose_lists_keep_blank_lines() {
    insta::assert_snapshot!(plain("- one\n\n- two\n\n  more of two\n", 100));
}

#[test]
fn quotes_and_nested_quotes() {
    let source = "> A quote that goes on for long enough to wrap inside its border.\n>\n> > A nested quote.\n>\n> - a \
                  list in a quote\n";
    insta::assert_snapshot!(plain(source, 30));
}

#[test]
fn rules_are_at_most_eighty_columns() {
    insta::assert_snapshot!(plain("above\n\n---\n\nbelow", 100));
    assert_eq!(plain("---", 20), "─".repeat(20));
}

#[test]
fn code_blocks_are_fenced_and_broken_at_the_width() {
    let source = "```\nplain\n\tindented with a tab\n```\n\n    indented code\n\n```python\nprint('a line far \
                  too long for the width of thirty')\n```\n";
    insta::assert_snapshot!(plain(source, 30));
}

#[test]
fn an_open_fence_is_code_up_to_the_end() {
    insta::assert_snapshot!(plain("Here:\n\n```rust\nfn main() {\n    println!(\"*not emphasis*\");", 100));
}

const TABLE: &str = "| Name | Role | Notes |\n|:-----|:----:|------:|\n| `ls` | lists files | A longer note that \
                     needs some room |\n| cat | prints | short |\n| 日本語 | wide | ok |\n";

#[test]
fn a_table_at_width_100() {
    insta::assert_snapshot!(plain(TABLE, 100));
}

#[test]
fn a_table_at_width_30_wraps_its_cells() {
    insta::assert_snapshot!(plain(TABLE, 30));
}

#[test]
fn a_table_too_narrow_for_a_grid() {
    insta::assert_snapshot!(plain("| a | b | c |\n|---|---|---|\n| 1 | 2 | 3 |\n", 8));
}

#[test]
fn html_is_plain_text() {
    insta::assert_snapshot!(plain("<div class=\"x\">\n  <b>hi</b>\n</div>\n\nInline <kbd>Ctrl</kbd> key.", 100));
}

#[test]
fn long_words_and_urls_are_broken() {
    let source = "Visit https://example.com/a/very/long/path/that/does/not/fit/anywhere?query=1 now. \
                  Supercalifragilisticexpialidocious!";
    insta::assert_snapshot!(plain(source, 20));
}

#[test]
fn cjk_at_width_20() {
    let source = "# 日本語の見出し\n\n日本語のテキストはとても長いので折り返す必要があります。\n\n- 項目一つ目の長い説明文です\n\n> 引用された日本語の文章\n\n| 名前 | 説明 |\n|---|---|\n| 東京 | 日本の首都です |\n\n```\n日本語のコードの行はとても長い\n```";
    insta::assert_snapshot!(plain(source, 20));
}

#[test]
fn streaming_prefixes_render_within_the_width() {
    let document = "# Plan\n\nSome **bold text** and a [link](https://example.com).\n\n| a | b |\n|---|:-:|\n| one | \
                    two |\n\n```rust\nfn main() {}\n```\n\n> quoted\n\n1. first\n2. second\n   - [x] nested\n";
    let mut view = Markdown::new("", theme());
    for (end, _) in document.char_indices().chain(std::iter::once((document.len(), ' '))) {
        view.set_text(&document[..end]);
        for width in [1, 12, 40] {
            for line in view.render(width) {
                assert!(visible_width(&line) <= width, "prefix {end}, width {width}: {line:?}");
            }
        }
    }
    let half_table = document.find("| one").unwrap_or(0) + 5;
    let open_fence = document.find("fn main").unwrap_or(0) + 4;
    insta::assert_snapshot!("streaming_half_table", plain(&document[..half_table], 40));
    insta::assert_snapshot!("streaming_open_fence", plain(&document[..open_fence], 40));
}

#[test]
fn styles_on_the_raw_lines() {
    let theme = theme();
    let heading = render("# Title", 40);
    let heading_colour = theme.fg(Role::MdHeading, "");
    let heading_open = heading_colour.trim_end_matches("\x1b[39m");
    assert!(heading[0].starts_with(heading_open), "{:?}", heading[0]);
    assert!(heading[0].contains("\x1b[1m") && heading[0].contains("\x1b[4m"), "{:?}", heading[0]);
    assert!(!render("## Two", 40)[0].contains("\x1b[4m"));

    let code = render("run `ls` now", 40);
    assert!(code[0].contains(&theme.fg(Role::MdCode, "ls")), "{:?}", code[0]);

    let link = render("[docs](https://x.dev)", 40);
    assert!(link[0].contains("\x1b[4mdocs\x1b[24m"), "{:?}", link[0]);
    assert!(link[0].contains(&theme.fg(Role::MdLinkUrl, " (https://x.dev)")), "{:?}", link[0]);

    let quote = render("> said", 40);
    assert!(quote[0].starts_with(&theme.fg(Role::MdQuoteBorder, "│ ")), "{:?}", quote[0]);
    assert!(quote[0].contains("\x1b[3m"), "{:?}", quote[0]);

    let bullet = render("- item", 40);
    assert!(bullet[0].starts_with(&theme.fg(Role::MdListBullet, "- ")), "{:?}", bullet[0]);
}

#[test]
fn a_code_span_inside_a_heading_keeps_the_heading_style_after_it() {
    let theme = theme();
    let line = &render("## Use `cargo` here", 40)[0];
    let after_code = line.split("cargo").nth(1).unwrap_or_default();
    let heading_open = theme.fg(Role::MdHeading, "").replace("\x1b[39m", "");
    assert!(after_code.contains(&heading_open) && after_code.contains("\x1b[1m"), "{line:?}");
}

#[test]
fn control_characters_in_the_text_are_dropped() {
    assert_eq!(plain("clear\x1b[2J screen\x07", 40), "clear[2J screen");
}

#[test]
fn empty_text_renders_nothing() {
    assert!(render("", 40).is_empty());
    assert!(render("   \n\n", 40).is_empty());
    assert!(render("anything", 0).iter().all(String::is_empty));
}

#[test]
fn the_cache_follows_text_and_width() {
    let mut view = Markdown::new("one", theme());
    assert_eq!(view.render(20), ["one"]);
    assert_eq!(view.render(20), ["one"]);
    view.set_text("one two");
    assert_eq!(view.render(20), ["one two"]);
    assert_eq!(view.render(4), ["one", "two"]);
    assert_eq!(view.text(), "one two");
}

#[test]
fn rendering_a_streamed_document_is_fast() {
    let paragraph = "Some **bold** text with `code`, a [link](https://example.com) and enough words to wrap. ";
    let mut document = String::new();
    while document.len() < 8_000 {
        let section =
            format!("## Section\n\n{}\n\n- item one\n- item two\n\n```rust\nlet x = 1;\n```\n\n", paragraph.repeat(3));
        document.push_str(&section);
    }
    let runs: u32 = 20;
    let started = std::time::Instant::now();
    for _ in 0..runs {
        Markdown::new(&document, theme()).render(100);
    }
    let fresh = started.elapsed() / runs;

    // Streaming: the text grows by a few characters before each render.
    let mut view = Markdown::new(&document[..document.len() - 200], theme());
    view.render(100);
    let started = std::time::Instant::now();
    let mut end = document.len() - 200;
    while end < document.len() {
        end = (end + 10).min(document.len());
        view.set_text(&document[..end]);
        view.render(100);
    }
    let streamed = started.elapsed() / 20;

    let started = std::time::Instant::now();
    view.render(100);
    let cached = started.elapsed();
    println!("{} bytes: {fresh:?} fresh, {streamed:?} per streamed delta, {cached:?} unchanged", document.len());
}

#[test]
fn deep_nesting_and_huge_blocks_render() {
    let sources = [
        ">".repeat(20_000) + " deep",
        "- ".repeat(20_000) + "deep",
        "*".repeat(20_000) + "a" + &"*".repeat(20_000),
        "[".repeat(20_000),
        "word `code` **bold** ".repeat(5_000),
        "| a |\n|---|\n".to_owned() + &"| x |\n".repeat(5_000),
        "|".repeat(3_000) + "\n" + &"|-".repeat(1_500) + "\n",
    ];
    for source in sources {
        assert!(!render(&source, 30).is_empty());
    }
    let nested = plain(&">".repeat(40), 100);
    assert!(nested.is_empty());
    let quoted = plain(&(">".repeat(40) + " x"), 100);
    assert_eq!(quoted, "│ ".repeat(24) + "x");
}
