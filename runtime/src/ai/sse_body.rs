//! What the SSE parser is fed: the response body without a leading byte-order mark, cut after each event.
//! eventsource-stream 0.2.3 strips a leading U+FEFF by slicing one byte into it (a panic), and moves the
//! rest of its buffer to the front after every line it reads (a whole 16 KiB chunk copied once per line);
//! both are avoided here without copying the body.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use bytes::Bytes;
use futures_util::{Stream, StreamExt};

/// U+FEFF in UTF-8.
const BYTE_ORDER_MARK: &[u8] = b"\xEF\xBB\xBF";

/// `body` as pieces that each end after a blank line (the end of an event), leading byte-order marks gone.
pub(crate) fn event_pieces<S, B, E>(body: S) -> impl Stream<Item = Result<Bytes, E>> + Unpin
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: Into<Bytes>,
{
    let body = SkipByteOrderMarks { body: body.fuse(), head: Some(Vec::new()) };
    body.flat_map(|chunk| futures_util::stream::iter(split_events(chunk)))
}

/// A body stream with its leading byte-order marks removed, even when they arrive split across chunks.
struct SkipByteOrderMarks<S> {
    body: futures_util::stream::Fuse<S>,
    /// The first bytes, held while they might still be (part of) a byte-order mark; `None` once decided.
    head: Option<Vec<u8>>,
}

impl<S, B, E> Stream for SkipByteOrderMarks<S>
where
    S: Stream<Item = Result<B, E>> + Unpin,
    B: Into<Bytes>,
{
    type Item = Result<Bytes, E>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        loop {
            let next = ready!(self.body.poll_next_unpin(cx));
            let Some(head) = self.head.as_mut() else {
                return Poll::Ready(next.map(|chunk| chunk.map(Into::into)));
            };
            match next {
                Some(Ok(chunk)) => {
                    head.extend_from_slice(&chunk.into());
                    while head.starts_with(BYTE_ORDER_MARK) {
                        head.drain(..BYTE_ORDER_MARK.len());
                    }
                    if head.is_empty() || BYTE_ORDER_MARK.starts_with(head) {
                        continue;
                    }
                    let first = self.head.take().unwrap_or_default();
                    return Poll::Ready(Some(Ok(Bytes::from(first))));
                }
                Some(Err(error)) => {
                    self.head = None;
                    return Poll::Ready(Some(Err(error)));
                }
                None => {
                    let rest = self.head.take().unwrap_or_default();
                    return Poll::Ready((!rest.is_empty()).then(|| Ok(Bytes::from(rest))));
                }
            }
        }
    }
}

/// A body chunk cut after each blank line (the end of an event), without copying. The SSE parser moves what
/// follows each line it reads to the front of its buffer, so a whole network chunk (a hundred events) would
/// be copied once per line; an event at a time it copies almost nothing. (A stream whose lines end in a bare
/// `\r` is not cut, and still parses.)
fn split_events<E>(chunk: Result<Bytes, E>) -> Vec<Result<Bytes, E>> {
    let bytes = match chunk {
        Ok(bytes) => bytes,
        Err(error) => return vec![Err(error)],
    };
    let mut pieces = Vec::with_capacity(bytes.len() / 128 + 1);
    let (mut piece_start, mut line_start) = (0, 0);
    for line_end in memchr::memchr_iter(b'\n', &bytes) {
        let line = &bytes[line_start..line_end];
        line_start = line_end + 1;
        if line.is_empty() || line == b"\r" {
            pieces.push(Ok(bytes.slice(piece_start..line_start)));
            piece_start = line_start;
        }
    }
    if piece_start < bytes.len() {
        pieces.push(Ok(bytes.slice(piece_start..)));
    }
    pieces
}

#[cfg(test)]
mod tests {
    use futures_util::StreamExt;

    use super::event_pieces;

    fn pieces(chunks: &[&[u8]]) -> Vec<String> {
        let body = futures_util::stream::iter(chunks.iter().map(|chunk| Ok::<_, ()>(chunk.to_vec())));
        let runtime = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let collected = runtime.block_on(event_pieces(body).collect::<Vec<_>>());
        collected.into_iter().map(|piece| String::from_utf8_lossy(&piece.unwrap()).into_owned()).collect()
    }

    #[test]
    fn pieces_end_after_each_event_and_keep_every_byte() {
        assert_eq!(pieces(&[b"data: a\n\ndata: b\r\n\r\ndata: c\n"]), ["data: a\n\n", "data: b\r\n\r\n", "data: c\n"]);
        assert_eq!(pieces(&[b"data: a\n", b"\ndata: b"]), ["data: a\n", "\n", "data: b"]);
    }

    #[test]
    fn leading_byte_order_marks_go_even_when_split_across_chunks() {
        assert_eq!(pieces(&[b"\xEF\xBB\xBFdata: a\n\n"]), ["data: a\n\n"]);
        assert_eq!(pieces(&[b"\xEF", b"\xBB", b"\xBF\xEF\xBB\xBFdata: a\n\n"]), ["data: a\n\n"]);
        assert_eq!(pieces(&[b"\xEF\xBB"]), ["\u{FFFD}"], "a cut-off mark at the very end is kept as bytes");
        assert_eq!(pieces(&[b"data: \xEF\xBB\xBF\n\n"]), ["data: \u{feff}\n\n"], "only leading marks go");
        assert!(pieces(&[b"\xEF\xBB\xBF", b""]).is_empty());
    }
}
