//! Source positions. A span is a file id plus a byte range; line and column are computed
//! only when a diagnostic is rendered, so every later stage can carry spans for free.

use std::fmt;

/// Index of a source file in the table of sources a compilation reads (`Sources`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct FileId(pub u32);

/// A byte range in one source file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// The file the range lies in.
    pub file: FileId,
    /// First byte of the range.
    pub start: u32,
    /// One past the last byte of the range.
    pub end: u32,
}

impl Span {
    /// A span for values the compiler made itself (defaults, derived elements); it points
    /// nowhere and renders without a snippet.
    pub const DETACHED: Span = Span { file: FileId(u32::MAX), start: 0, end: 0 };

    /// A span covering `start..end` of `file`.
    pub fn new(file: FileId, start: usize, end: usize) -> Span {
        let clamp = |offset: usize| u32::try_from(offset).unwrap_or(u32::MAX);
        Span { file, start: clamp(start), end: clamp(end.max(start)) }
    }

    /// Whether this span was made by the compiler rather than read from a file.
    pub fn is_detached(self) -> bool {
        self.file.0 == u32::MAX
    }

    /// Length of the range in bytes.
    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    /// Whether the range is empty.
    pub fn is_empty(self) -> bool {
        self.start == self.end
    }

    /// A sub-range of this span, given as offsets relative to its start (used to point inside
    /// a string, for example at one token of a score expression).
    pub fn sub(self, start: usize, end: usize) -> Span {
        if self.is_detached() {
            return self;
        }
        let base = self.start as usize;
        let limit = self.end as usize;
        Span::new(self.file, (base + start).min(limit), (base + end).min(limit))
    }

    /// This span through `last`, a later span of the same file (a node's arguments, first to
    /// last).
    pub fn through(self, last: Span) -> Span {
        Span { end: last.end.max(self.end), ..self }
    }
}

/// A value together with the span it was read from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Spanned<T> {
    /// The value.
    pub value: T,
    /// Where it came from.
    pub span: Span,
}

impl<T> Spanned<T> {
    /// Pairs a value with its span.
    pub fn new(value: T, span: Span) -> Spanned<T> {
        Spanned { value, span }
    }
}

impl<T: fmt::Display> fmt::Display for Spanned<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.value.fmt(f)
    }
}
