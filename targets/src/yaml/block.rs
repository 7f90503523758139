//! The block writer: where each node of a document goes (its column, its line, a dash before
//! it), as libyaml lays out a block document with serde_yaml's settings, and the document's
//! skipped keys. The serde glue in `serializer` drives it.

use serde::Serialize;

use super::error::Unsupported;
use super::scalars::Scalars;
use super::style::Styled;

/// libyaml writes a key longer than this as a complex key (`? key`).
pub(super) const MAX_SIMPLE_KEY: usize = 128;

/// Writes the top-level mapping `value` as YAML into `out`, leaving out the top-level keys in
/// `skipped` (the fields the object list owns). On [`Unsupported`], `out` may hold a part.
pub(super) fn write_block<T: Serialize + ?Sized>(
    value: &T,
    skipped: &'static [&'static str],
    scalars: &mut Scalars,
    out: &mut String,
) -> Result<(), Unsupported> {
    let mut writer = Writer { out, scalars, column: None, skipped, depth: 0 };
    value.serialize(&mut writer)
}

/// Where the node being written goes.
#[derive(Clone, Copy, Debug)]
pub(super) enum Place {
    /// The document itself.
    Root,
    /// The value of a key written at this column (`key:` is written, nothing after it).
    Value(usize),
    /// An item of a sequence whose dashes are at this column.
    Item(usize),
}

/// An open mapping or sequence: where it goes and how many entries it has so far.
#[derive(Debug)]
struct Open {
    place: Place,
    entries: usize,
}

pub(super) struct Writer<'a> {
    out: &'a mut String,
    scalars: &'a mut Scalars,
    /// `Some(column)` while the current line ends in a dash (`- `) at which the next mapping
    /// key or sequence dash continues; `None` at the start of a line.
    column: Option<usize>,
    skipped: &'static [&'static str],
    /// How many mappings and sequences are open (1 inside the document's mapping).
    depth: usize,
}

/// Moves to `column` on a fresh line, or stays where a dash left the line at `column`.
fn start_at(out: &mut String, line: &mut Option<usize>, column: usize) {
    // Pushed as slices of one run of spaces: once per line of every object, where pushing a
    // char at a time showed in the profile.
    const SPACES: &str = "                                                                ";
    if line.take() != Some(column) {
        let mut left = column;
        while left > 0 {
            let run = left.min(SPACES.len());
            out.push_str(&SPACES[..run]);
            left -= run;
        }
    }
}

/// Writes a one-line scalar at `place`.
fn put_scalar(out: &mut String, line: &mut Option<usize>, place: Place, text: Styled<'_>) {
    match place {
        Place::Root => {}
        Place::Value(_) => out.push(' '),
        Place::Item(dash) => {
            start_at(out, line, dash);
            out.push_str("- ");
        }
    }
    text.write_to(out);
    out.push('\n');
}

impl Writer<'_> {
    /// Writes a scalar's text, as it is, at `place`.
    pub(super) fn scalar(&mut self, place: Place, text: &str) {
        put_scalar(self.out, &mut self.column, place, Styled::Verbatim(text));
    }

    /// Writes a string scalar at `place`, styled as serde_yaml styles it.
    pub(super) fn string(&mut self, place: Place, value: &str) -> Result<(), Unsupported> {
        let text = self.scalars.render(value)?;
        put_scalar(self.out, &mut self.column, place, text);
        Ok(())
    }

    /// Before the first entry of a mapping or sequence at `place`: what leads to it.
    fn open_first(&mut self, place: Place) {
        match place {
            Place::Root => {}
            Place::Value(_) => self.out.push('\n'),
            Place::Item(dash) => {
                start_at(self.out, &mut self.column, dash);
                self.out.push_str("- ");
                self.column = Some(dash + 2);
            }
        }
    }

    /// After the last entry: an empty mapping or sequence is written in flow style, except
    /// the document's, whose entries follow the object list's header (none then).
    fn close(&mut self, open: &Open, empty: &str) {
        if open.entries == 0 && !matches!(open.place, Place::Root) {
            self.scalar(open.place, empty);
        }
        self.depth -= 1;
    }

    /// The column of the keys of a mapping at `place`.
    pub(super) fn key_column(place: Place) -> usize {
        match place {
            Place::Root => 0,
            Place::Value(key) => key + 2,
            Place::Item(dash) => dash + 2,
        }
    }

    /// The column of the dashes of a sequence at `place` (inside a mapping, a sequence is
    /// not indented).
    pub(super) fn dash_column(place: Place) -> usize {
        match place {
            Place::Root => 0,
            Place::Value(key) => key,
            Place::Item(dash) => dash + 2,
        }
    }
}

/// Serialises one node at a place.
pub(super) struct Node<'w, 'a> {
    pub(super) writer: &'w mut Writer<'a>,
    pub(super) place: Place,
}

/// An open mapping or sequence being serialised.
pub(super) struct Compound<'w, 'a> {
    writer: &'w mut Writer<'a>,
    open: Open,
    /// The column of this mapping's keys, or this sequence's dashes.
    column: usize,
    /// The document's entries so far, `(key, start, end)` in the output, while there are
    /// keys to skip (only the document's mapping has them).
    top: Vec<(String, usize, usize)>,
    /// Where the entry being written starts in the output.
    entry_start: usize,
}

impl<'w, 'a> Node<'w, 'a> {
    /// Opens a mapping or sequence here, whose keys or dashes are at `column`.
    pub(super) fn compound(self, column: usize) -> Compound<'w, 'a> {
        self.writer.depth += 1;
        Compound { writer: self.writer, open: Open { place: self.place, entries: 0 }, column, top: Vec::new(), entry_start: 0 }
    }
}

impl Compound<'_, '_> {
    /// Writes the next item of a sequence.
    pub(super) fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        if self.open.entries == 0 {
            self.writer.open_first(self.open.place);
        }
        self.open.entries += 1;
        value.serialize(Node { writer: self.writer, place: Place::Item(self.column) })
    }

    /// Writes the next key of a mapping, up to its `:`.
    pub(super) fn key(&mut self, key: &str) -> Result<(), Unsupported> {
        // serde_yaml reads a one-entry mapping whose key starts with `!` as a tag.
        if key.len() > MAX_SIMPLE_KEY || key.starts_with('!') {
            return Err(Unsupported);
        }
        self.entry_start = self.writer.out.len();
        if self.writer.depth == 1 && !self.writer.skipped.is_empty() {
            self.top.push((key.to_owned(), self.entry_start, self.entry_start));
        }
        if self.open.entries == 0 {
            self.writer.open_first(self.open.place);
        }
        start_at(self.writer.out, &mut self.writer.column, self.column);
        self.writer.scalars.render(key)?.write_to(self.writer.out);
        self.writer.out.push(':');
        Ok(())
    }

    /// Writes the value of the key just written.
    pub(super) fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        value.serialize(Node { writer: self.writer, place: Place::Value(self.column) })?;
        self.open.entries += 1;
        if let Some(entry) = self.top.last_mut() {
            entry.2 = self.writer.out.len();
        }
        Ok(())
    }

    /// Closes a mapping, leaving out the document's skipped keys.
    pub(super) fn end_mapping(mut self) -> Result<(), Unsupported> {
        if self.top.iter().any(|(key, _, _)| self.writer.skipped.contains(&key.as_str())) {
            self.drop_skipped();
        }
        self.writer.close(&self.open, "{}");
        Ok(())
    }

    /// Drops the document's skipped entries the way `serde_yaml::Mapping::remove` does, one
    /// skipped key after the other: the last entry takes the removed one's place (its
    /// `swap_remove`). The order is odd, but it is the order of every build before this
    /// writer, and output must not change.
    fn drop_skipped(&mut self) {
        let mut order: Vec<usize> = (0..self.top.len()).collect();
        for skipped in self.writer.skipped {
            if let Some(position) = order.iter().position(|index| self.top[*index].0 == *skipped) {
                order.swap_remove(position);
            }
        }
        let start = self.top.first().map_or(self.writer.out.len(), |entry| entry.1);
        let mut kept = String::with_capacity(self.writer.out.len() - start);
        for index in &order {
            let (_, from, to) = &self.top[*index];
            kept.push_str(&self.writer.out[*from..*to]);
        }
        self.writer.out.truncate(start);
        self.writer.out.push_str(&kept);
        self.open.entries = order.len();
    }

    /// Closes a sequence.
    pub(super) fn end_sequence(self) -> Result<(), Unsupported> {
        self.writer.close(&self.open, "[]");
        Ok(())
    }
}
