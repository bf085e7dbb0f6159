//! Text that costs nothing to copy, even while it grows: the text and thinking of messages. A streamed
//! answer is copied into an event at every delta (each event carries the message so far), so a copy shares
//! the bytes written so far instead of duplicating them while the original keeps appending; and a session's
//! messages are copied into the agent's context without copying their text.

use std::borrow::{Borrow, Cow};
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;
use std::sync::Arc;

use append_only_bytes::{AppendOnlyBytes, BytesSlice};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A UTF-8 string with `String`'s reading API, `push_str`, and an O(1) `clone`.
///
/// Text made whole (read from JSON, built from a `String`) is one shared allocation. Text that grows by
/// `push_str` lives in an append-only buffer: a clone is a read-only view of the bytes so far and the
/// original goes on appending in place (bytes once written never change, so views stay valid). Appending
/// to shared text or a view first copies it.
pub struct SharedText(Repr);

enum Repr {
    Empty,
    /// Whole text, shared.
    Whole(Arc<str>),
    /// The only writer of its buffer.
    Growing(AppendOnlyBytes),
    /// A read-only view.
    Frozen(BytesSlice),
}

impl SharedText {
    pub const fn new() -> Self {
        Self(Repr::Empty)
    }

    pub fn as_str(&self) -> &str {
        let bytes: &[u8] = match &self.0 {
            Repr::Empty => return "",
            Repr::Whole(text) => return text,
            Repr::Growing(bytes) => bytes.as_bytes(),
            Repr::Frozen(slice) => slice,
        };
        // SAFETY: every byte in an append-only buffer was appended from a `&str` (`push_str` is the only
        // writer), and a view always starts and ends where an appended `&str` started or ended, so the bytes
        // are whole UTF-8.
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    pub fn push_str(&mut self, text: &str) {
        if text.is_empty() {
            return;
        }
        match &mut self.0 {
            Repr::Growing(bytes) => bytes.push_str(text),
            Repr::Empty | Repr::Whole(_) | Repr::Frozen(_) => {
                let mut bytes = AppendOnlyBytes::with_capacity(self.len() + text.len());
                bytes.push_str(self.as_str());
                bytes.push_str(text);
                self.0 = Repr::Growing(bytes);
            }
        }
    }

    /// Appends `text` and returns just that part as shared text: a view of the bytes it now occupies here,
    /// so a streamed delta costs no allocation of its own.
    pub fn push_str_view(&mut self, text: &str) -> SharedText {
        let start = self.len();
        self.push_str(text);
        match &self.0 {
            Repr::Growing(bytes) if !text.is_empty() => Self(Repr::Frozen(bytes.slice(start..))),
            _ => Self::from(text),
        }
    }

    /// Stops growing: text in an append-only buffer (which may be up to twice its size) moves to one
    /// allocation of its exact size. Views taken earlier keep the old buffer until they go.
    pub fn settle(&mut self) {
        if let Repr::Growing(_) = self.0 {
            let settled: Arc<str> = Arc::from(self.as_str());
            self.0 = Repr::Whole(settled);
        }
    }

    /// An owned `String` with the same text (a copy).
    pub fn into_string(self) -> String {
        self.as_str().to_owned()
    }
}

impl Default for SharedText {
    fn default() -> Self {
        Self::new()
    }
}

impl Clone for SharedText {
    fn clone(&self) -> Self {
        Self(match &self.0 {
            Repr::Empty => Repr::Empty,
            Repr::Whole(text) => Repr::Whole(Arc::clone(text)),
            Repr::Growing(bytes) => Repr::Frozen(bytes.slice(..)),
            Repr::Frozen(slice) => Repr::Frozen(slice.clone()),
        })
    }
}

impl Deref for SharedText {
    type Target = str;

    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for SharedText {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl Borrow<str> for SharedText {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl From<&str> for SharedText {
    fn from(text: &str) -> Self {
        if text.is_empty() { Self::new() } else { Self(Repr::Whole(Arc::from(text))) }
    }
}

impl From<String> for SharedText {
    fn from(text: String) -> Self {
        Self::from(text.as_str())
    }
}

impl From<&String> for SharedText {
    fn from(text: &String) -> Self {
        Self::from(text.as_str())
    }
}

impl From<Cow<'_, str>> for SharedText {
    fn from(text: Cow<'_, str>) -> Self {
        Self::from(text.as_ref())
    }
}

impl From<SharedText> for String {
    fn from(text: SharedText) -> Self {
        text.into_string()
    }
}

impl fmt::Debug for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

impl fmt::Display for SharedText {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl PartialEq for SharedText {
    fn eq(&self, other: &Self) -> bool {
        self.as_str() == other.as_str()
    }
}

impl Eq for SharedText {}

impl Hash for SharedText {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl PartialOrd for SharedText {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for SharedText {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.as_str().cmp(other.as_str())
    }
}

macro_rules! equal_to_strings {
    ($($other:ty),*) => {$(
        impl PartialEq<$other> for SharedText {
            fn eq(&self, other: &$other) -> bool {
                self.as_str() == AsRef::<str>::as_ref(other)
            }
        }
        impl PartialEq<SharedText> for $other {
            fn eq(&self, other: &SharedText) -> bool {
                AsRef::<str>::as_ref(self) == other.as_str()
            }
        }
    )*};
}

equal_to_strings!(str, &str, String);

impl Serialize for SharedText {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for SharedText {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct TextVisitor;
        impl serde::de::Visitor<'_> for TextVisitor {
            type Value = SharedText;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string")
            }

            fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<SharedText, E> {
                Ok(SharedText::from(text))
            }
        }
        deserializer.deserialize_str(TextVisitor)
    }
}

/// Reads a short string that repeats from message to message (a model's api, provider and id) sharing
/// the text of an equal string read recently on this thread: a session of 100,000 messages then holds a
/// few copies instead of 300,000.
pub(crate) fn deserialize_interned<'de, D: Deserializer<'de>>(deserializer: D) -> Result<SharedText, D::Error> {
    /// How many recent strings are remembered.
    const SLOTS: usize = 8;
    thread_local! {
        static RECENT: std::cell::RefCell<(usize, [Option<Arc<str>>; SLOTS])> = Default::default();
    }
    struct InternVisitor;
    impl serde::de::Visitor<'_> for InternVisitor {
        type Value = SharedText;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a string")
        }

        fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<SharedText, E> {
            if text.is_empty() {
                return Ok(SharedText::new());
            }
            let shared = RECENT.with_borrow_mut(|(next, slots)| {
                if let Some(found) = slots.iter().flatten().find(|recent| &***recent == text) {
                    return Arc::clone(found);
                }
                let shared: Arc<str> = Arc::from(text);
                slots[*next] = Some(Arc::clone(&shared));
                *next = (*next + 1) % SLOTS;
                shared
            });
            Ok(SharedText(Repr::Whole(shared)))
        }
    }
    deserializer.deserialize_str(InternVisitor)
}

#[cfg(test)]
mod tests {
    use super::SharedText;

    #[test]
    fn a_clone_keeps_the_text_of_its_moment_while_the_original_grows() {
        let mut text = SharedText::new();
        let mut views = Vec::new();
        for piece in ["ünï", "cödé ", "日本語", "", " end"] {
            text.push_str(piece);
            views.push(text.clone());
        }
        let seen: Vec<&str> = views.iter().map(SharedText::as_str).collect();
        assert_eq!(seen, ["ünï", "ünïcödé ", "ünïcödé 日本語", "ünïcödé 日本語", "ünïcödé 日本語 end"]);
        assert_eq!(text, "ünïcödé 日本語 end");
    }

    #[test]
    fn a_pushed_piece_comes_back_as_a_view_of_itself() {
        let mut text = SharedText::from("ü");
        let pieces: Vec<SharedText> = ["日本", "", "語 ✓"].iter().map(|piece| text.push_str_view(piece)).collect();
        assert_eq!(pieces, ["日本", "", "語 ✓"]);
        text.push_str(" and more, which may move the text to a larger buffer");
        assert_eq!(pieces[2], "語 ✓");
        assert_eq!(text, "ü日本語 ✓ and more, which may move the text to a larger buffer");
    }

    #[test]
    fn settled_text_is_the_same_text_and_its_views_stay_valid() {
        let mut text = SharedText::from("a");
        text.push_str("bc");
        let view = text.clone();
        text.settle();
        text.push_str("d");
        assert_eq!((view.as_str(), text.as_str()), ("abc", "abcd"));
    }

    #[test]
    fn appending_to_a_view_copies_it_and_leaves_the_original_alone() {
        let mut original = SharedText::from("abc");
        let mut view = original.clone();
        view.push_str("-view");
        original.push_str("-original");
        assert_eq!(view, "abc-view");
        assert_eq!(original, "abc-original");
    }

    #[test]
    fn repeated_names_share_one_copy() {
        #[derive(serde::Deserialize)]
        struct Named {
            #[serde(deserialize_with = "super::deserialize_interned")]
            name: SharedText,
        }
        let read = |json: &str| serde_json::from_str::<Named>(json).unwrap().name;
        let (first, second, other) =
            (read(r#"{"name":"claude"}"#), read(r#"{"name":"claude"}"#), read(r#"{"name":"gpt"}"#));
        assert_eq!((first.as_str(), second.as_str(), other.as_str()), ("claude", "claude", "gpt"));
        assert!(std::ptr::eq(first.as_str(), second.as_str()), "one copy of the repeated name");
        assert!(serde_json::from_str::<Named>(r#"{"name":5}"#).is_err());
    }

    #[test]
    fn it_is_a_json_string() {
        let text: SharedText = serde_json::from_str(r#""a\nb \u00e9""#).unwrap();
        assert_eq!(text, "a\nb é");
        assert_eq!(serde_json::to_string(&text).unwrap(), r#""a\nb é""#);
        assert!(serde_json::from_str::<SharedText>("5").is_err());
    }
}
