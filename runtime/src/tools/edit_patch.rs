//! The unified patch pi 1.5's edit tool reports in `details.patch`: file headers only (`--- path`,
//! `+++ path`), then hunks with four lines of context, as `diff -u` writes them.

use super::edit_diff::diff_lines;

/// Unchanged lines kept around each change.
pub const PATCH_CONTEXT_LINES: usize = 4;

/// The unified patch turning `old` into `new`, both named `path`.
pub fn unified_patch(path: &str, old: &str, new: &str, context: usize) -> String {
    let lines = diff_lines(old, new);
    let mut patch = format!("--- {path}\n+++ {path}\n");
    let changes: Vec<usize> = (0..lines.len()).filter(|&index| lines[index].0 != ' ').collect();
    let mut next = 0;
    while next < changes.len() {
        // A hunk runs from `context` lines before its first change to `context` lines after its last one;
        // changes closer than twice the context share a hunk.
        let mut last = next;
        while last + 1 < changes.len() && changes[last + 1] - changes[last] <= 2 * context + 1 {
            last += 1;
        }
        let start = changes[next].saturating_sub(context);
        let end = (changes[last] + context + 1).min(lines.len());
        push_hunk(&mut patch, &lines, start, end);
        next = last + 1;
    }
    patch
}

/// Writes the hunk of `lines[start..end]` with its `@@ -a,b +c,d @@` header.
fn push_hunk(patch: &mut String, lines: &[(char, &str)], start: usize, end: usize) {
    let old_before = lines[..start].iter().filter(|(sign, _)| *sign != '+').count();
    let new_before = lines[..start].iter().filter(|(sign, _)| *sign != '-').count();
    let hunk = &lines[start..end];
    let old_count = hunk.iter().filter(|(sign, _)| *sign != '+').count();
    let new_count = hunk.iter().filter(|(sign, _)| *sign != '-').count();
    // An empty side names the line before it, as diff does.
    let old_start = if old_count == 0 { old_before } else { old_before + 1 };
    let new_start = if new_count == 0 { new_before } else { new_before + 1 };
    patch.push_str(&format!("@@ -{old_start},{old_count} +{new_start},{new_count} @@\n"));
    for (sign, line) in hunk {
        patch.push(*sign);
        match line.strip_suffix('\n') {
            Some(text) => {
                patch.push_str(text);
                patch.push('\n');
            }
            None => {
                patch.push_str(line);
                patch.push_str("\n\\ No newline at end of file\n");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_changed_line() {
        assert_eq!(
            unified_patch("a.txt", "hello\n", "bye\n", PATCH_CONTEXT_LINES),
            "--- a.txt\n+++ a.txt\n@@ -1,1 +1,1 @@\n-hello\n+bye\n"
        );
    }

    #[test]
    fn distant_changes_get_hunks_of_their_own_with_four_lines_of_context() {
        let old: String = (1..=20).map(|n| format!("{n}\n")).collect();
        let new = old.replacen("2\n", "two\n", 1).replace("\n19\n", "\nnineteen\n");
        let patch = unified_patch("n.txt", &old, &new, PATCH_CONTEXT_LINES);
        let expected = "--- n.txt\n+++ n.txt\n@@ -1,6 +1,6 @@\n 1\n-2\n+two\n 3\n 4\n 5\n 6\n\
                        @@ -15,6 +15,6 @@\n 15\n 16\n 17\n 18\n-19\n+nineteen\n 20\n";
        assert_eq!(patch, expected);
        // Changes nine lines apart (eight unchanged between them) share one hunk.
        let near = old.replacen("2\n", "two\n", 1).replace("\n11\n", "\neleven\n");
        let patch = unified_patch("n.txt", &old, &near, PATCH_CONTEXT_LINES);
        assert_eq!(patch.matches("@@ -").count(), 1, "{patch}");
        assert!(patch.contains("@@ -1,15 +1,15 @@"), "{patch}");
    }

    #[test]
    fn a_missing_final_newline_is_marked() {
        let patch = unified_patch("x", "a\nb", "a\nc", PATCH_CONTEXT_LINES);
        assert_eq!(
            patch,
            "--- x\n+++ x\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+c\n\\ No newline at end of file\n"
        );
        let added = unified_patch("y", "", "new\n", PATCH_CONTEXT_LINES);
        assert_eq!(added, "--- y\n+++ y\n@@ -0,0 +1,1 @@\n+new\n");
    }
}
