//! Every line of a large mixed document fits every width from 1 to 120.

use super::Markdown;
use crate::component::Component;
use crate::text::visible_width;
use crate::theme::{ColorDepth, Theme};

const MIXED: &str = r#"# A heading long enough to need wrapping at small widths

A paragraph with **bold**, *italic*, ~~struck~~, `code spans`, a [link](https://example.com/some/long/path?x=1)
and an autolink <https://example.org/another/long/url/without/spaces/at/all>. 日本語のテキストも含まれています。

## Lists

- first item
- second item that runs on and on, long enough to wrap at most widths we try
  - nested item with 中文字符 in it
    - deeper still: Supercalifragilisticexpialidocious
- [x] a finished task
- [ ] an open task

10. ten
11. eleven with a rather longer text to wrap

> A quote with *emphasis* and a long line that should wrap within the border.
>
> > A nested quote, also with enough words to wrap.

---

```rust
fn main() { println!("a code line that is much longer than the narrow widths, with 全角 characters"); }
```

| Column | Another column | Right |
|:-------|:--------------:|------:|
| short | a cell with several words in it | 1 |
| 長い日本語のセル | x | 12345678901234567890 |

<details><summary>html</summary>raw html block</details>

Final line with a hard break  
after it.
"#;

#[test]
fn every_line_fits_every_width() {
    let mut view = Markdown::new(MIXED, Theme::dark(ColorDepth::TrueColor));
    for width in 1..=120 {
        let lines = view.render(width);
        assert!(!lines.is_empty());
        for line in &lines {
            assert!(visible_width(line) <= width, "width {width}: {line:?}");
        }
    }
}
