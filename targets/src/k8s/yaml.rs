//! A block-style YAML writer for the typed content of Kubernetes objects, byte-identical to
//! `serde_yaml` for what it accepts and many times faster: `serde_yaml` drives libyaml's
//! emitter one event at a time, which was half of a build's time at 100 teams × 64 flavors.
//!
//! What it writes is exactly what `serde_yaml::to_string` writes: 2-space indentation,
//! sequences inside mappings without indentation (`key:` then `- item` at the key's column),
//! a mapping or sequence inside a sequence starting on the dash's line, `{}` and `[]` for
//! empty ones, and every string scalar in the style `serde_yaml` gives it. Two kinds of
//! strings are styled here, as serde_yaml and libyaml would style them: names (plain) and
//! printable ASCII that cannot be read as a number, boolean or null (plain or single-quoted,
//! by libyaml's rules); the property test below holds both to serde_yaml. Any other string
//! (a quantity, a look-alike of a number, non-ASCII) is asked of `serde_yaml` once per
//! distinct string ([`Scalars`]): a build repeats the same quantities thousands of times.
//!
//! Invariants: anything whose layout depends on more than the rules above (a string with a
//! line break, which becomes a literal block; an enum variant with data, which becomes a
//! YAML tag; a key that is long or not a string; a char or bytes) is [`Unsupported`], and
//! the caller serialises that object with `serde_yaml` instead: the output never differs.

use std::collections::HashMap;
use std::fmt::Display;
use std::hash::{BuildHasherDefault, Hasher};

use serde::ser::{self, Impossible, Serialize};

/// Content this writer does not lay out itself (see the module's invariants).
#[derive(Debug)]
pub struct Unsupported;

impl Display for Unsupported {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("content the YAML writer leaves to serde_yaml")
    }
}

impl std::error::Error for Unsupported {}

impl ser::Error for Unsupported {
    fn custom<T: Display>(_: T) -> Unsupported {
        Unsupported
    }
}

/// libyaml writes a key longer than this as a complex key (`? key`).
const MAX_SIMPLE_KEY: usize = 128;

/// How `serde_yaml` writes each string scalar, asked once per distinct string.
#[derive(Debug, Default)]
pub struct Scalars {
    /// Where each string serde_yaml was asked about is in `rendered`.
    index: HashMap<String, usize, BuildHasherDefault<Fnv>>,
    /// serde_yaml's one-line rendering of each.
    rendered: Vec<Box<str>>,
}

/// FNV-1a: the keys are short names, for which SipHash's setup costs more than the lookup.
/// Nothing here hashes input chosen to collide: the worst case is a slower build.
#[derive(Default)]
struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        let mut hash = if self.0 == 0 { 0xcbf2_9ce4_8422_2325 } else { self.0 };
        for byte in bytes {
            hash = (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = hash;
    }
}

/// Whether serde_yaml writes `value` plain, as it is, without asking it: a name of letters,
/// digits and `-._/` that starts with a letter is neither a number nor one of the words YAML
/// reads as something else (those are left to serde_yaml, with a few more to be safe), and
/// has no character libyaml quotes for.
fn surely_plain(value: &str) -> bool {
    /// Letters, digits and `-._/`, by byte: one load per byte, where most strings of a build
    /// are asked about.
    const NAME_BYTES: [bool; 256] = {
        let mut table = [false; 256];
        let mut byte = 0;
        while byte < 256 {
            table[byte] = (byte as u8).is_ascii_alphanumeric() || matches!(byte as u8, b'-' | b'.' | b'_' | b'/');
            byte += 1;
        }
        table
    };
    let bytes = value.as_bytes();
    let Some(first) = bytes.first() else { return false };
    if !first.is_ascii_alphabetic() || !bytes.iter().all(|byte| NAME_BYTES[usize::from(*byte)]) {
        return false;
    }
    // The longest word is `infinity`: a longer name is none of them.
    const WORDS: [&str; 12] = ["true", "false", "null", "inf", "infinity", "nan", "y", "n", "yes", "no", "on", "off"];
    value.len() > 8 || !WORDS.iter().any(|word| value.eq_ignore_ascii_case(word))
}

/// Whether serde_yaml could read `byte` as part of a null, a boolean, an integer or a float
/// (`~`, `true`, `0x1F`, `-.inf`, `1e3`): its style inference (`InferScalarStyle`) quotes a
/// string only when every byte is one of these.
fn in_number_alphabet(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'+' | b'-' | b'_' | b'~')
}

/// How a one-line string of printable ASCII that holds a byte outside
/// [`in_number_alphabet`] is written, decided as libyaml decides it (`yaml_emitter_analyze_scalar`
/// and `select_scalar_style`, for a scalar serde_yaml leaves to the emitter in block context):
/// plain unless it starts or ends with a space, starts with `---`, `...` or an indicator, or
/// holds `: `, a final `:` or ` #`; single-quoted otherwise. `None` for anything else (a
/// look-alike of a number, a control or non-ASCII character), which is asked of serde_yaml.
fn libyaml_style(value: &str) -> Option<Styled<'_>> {
    let bytes = value.as_bytes();
    if !bytes.iter().all(|byte| (b' '..=b'~').contains(byte)) || bytes.iter().all(|byte| in_number_alphabet(*byte)) {
        return None;
    }
    // Neither is empty: each holds a byte outside the number alphabet.
    let (first, last) = (bytes[0], bytes[bytes.len() - 1]);
    // A NUL follows the scalar in libyaml's copy: the last byte is followed by a blank.
    let followed_by_blank = |at: usize| bytes.get(at + 1).is_none_or(|next| *next == b' ');
    let indicator_first =
        matches!(first, b'#' | b',' | b'[' | b']' | b'{' | b'}' | b'&' | b'*' | b'!' | b'|' | b'>' | b'\'' | b'"' | b'%' | b'@' | b'`')
            || (matches!(first, b'?' | b':' | b'-') && followed_by_blank(0));
    let indicator_inside = bytes.iter().enumerate().skip(1).any(|(at, byte)| match byte {
        b':' => followed_by_blank(at),
        b'#' => bytes[at - 1] == b' ',
        _ => false,
    });
    let plain =
        !(first == b' ' || last == b' ' || bytes.starts_with(b"---") || bytes.starts_with(b"...") || indicator_first || indicator_inside);
    Some(if plain { Styled::Verbatim(value) } else { Styled::SingleQuoted(value) })
}

/// A string scalar's text, as serde_yaml writes it on one line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Styled<'v> {
    /// Written as it is: the plain string, or serde_yaml's own rendering of it.
    Verbatim(&'v str),
    /// Written between single quotes, each `'` doubled.
    SingleQuoted(&'v str),
}

impl Styled<'_> {
    fn write_to(self, out: &mut String) {
        match self {
            Styled::Verbatim(text) => out.push_str(text),
            Styled::SingleQuoted(text) => {
                out.push('\'');
                for (at, part) in text.split('\'').enumerate() {
                    if at > 0 {
                        out.push_str("''");
                    }
                    out.push_str(part);
                }
                out.push('\'');
            }
        }
    }
}

impl Scalars {
    /// The scalar as `serde_yaml` writes it on one line (plain, `'single'` or `"double"`
    /// quoted); [`Unsupported`] for a string it would write as a block.
    fn render<'v>(&'v mut self, value: &'v str) -> Result<Styled<'v>, Unsupported> {
        if surely_plain(value) {
            return Ok(Styled::Verbatim(value));
        }
        // Asked before deciding: what is memoised (quantities, look-alikes of numbers) is what
        // a build repeats most.
        if let Some(index) = self.index.get(value).copied() {
            return Ok(Styled::Verbatim(&self.rendered[index]));
        }
        if let Some(styled) = libyaml_style(value) {
            return Ok(styled);
        }
        if value.contains('\n') {
            return Err(Unsupported);
        }
        // A document holding one scalar is the scalar and a newline: with libyaml's
        // unlimited width, a one-line scalar is laid out the same in any block context.
        let document = serde_yaml::to_string(value).map_err(|_| Unsupported)?;
        let line = document.strip_suffix('\n').ok_or(Unsupported)?;
        if line.contains('\n') || line.starts_with('|') || line.starts_with('>') {
            return Err(Unsupported);
        }
        self.index.insert(value.to_owned(), self.rendered.len());
        self.rendered.push(line.into());
        Ok(Styled::Verbatim(&self.rendered[self.rendered.len() - 1]))
    }
}

/// Where the node being written goes.
#[derive(Clone, Copy, Debug)]
enum Place {
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

/// Writes the top-level mapping `value` as YAML into `out`, leaving out the top-level keys in
/// `skipped` (the fields the object list owns). On [`Unsupported`], `out` may hold a part.
pub fn write_mapping<T: Serialize + ?Sized>(
    value: &T,
    skipped: &'static [&'static str],
    scalars: &mut Scalars,
    out: &mut String,
) -> Result<(), Unsupported> {
    let mut writer = Writer { out, scalars, column: None, skipped, depth: 0 };
    value.serialize(&mut writer)
}

/// `value`, a struct or map, as a YAML document: the same bytes as `serde_yaml::to_string`,
/// through this writer where it can (see the module's invariants), else through `serde_yaml`.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> String {
    let mut out = String::new();
    if write_mapping(value, &[], &mut Scalars::default(), &mut out).is_ok() {
        return out;
    }
    // Plain structs of strings and numbers always serialise.
    serde_yaml::to_string(value).unwrap_or_default()
}

struct Writer<'a> {
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
    fn scalar(&mut self, place: Place, text: &str) {
        put_scalar(self.out, &mut self.column, place, Styled::Verbatim(text));
    }

    fn string(&mut self, place: Place, value: &str) -> Result<(), Unsupported> {
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
    fn key_column(place: Place) -> usize {
        match place {
            Place::Root => 0,
            Place::Value(key) => key + 2,
            Place::Item(dash) => dash + 2,
        }
    }

    /// The column of the dashes of a sequence at `place` (inside a mapping, a sequence is
    /// not indented).
    fn dash_column(place: Place) -> usize {
        match place {
            Place::Root => 0,
            Place::Value(key) => key,
            Place::Item(dash) => dash + 2,
        }
    }
}

/// Serialises one node at a place.
struct Node<'w, 'a> {
    writer: &'w mut Writer<'a>,
    place: Place,
}

/// An open mapping or sequence being serialised.
struct Compound<'w, 'a> {
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
    fn compound(self, column: usize) -> Compound<'w, 'a> {
        self.writer.depth += 1;
        Compound { writer: self.writer, open: Open { place: self.place, entries: 0 }, column, top: Vec::new(), entry_start: 0 }
    }
}

impl<'w, 'a> ser::Serializer for Node<'w, 'a> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Compound<'w, 'a>;
    type SerializeTuple = Compound<'w, 'a>;
    type SerializeTupleStruct = Compound<'w, 'a>;
    type SerializeTupleVariant = Impossible<(), Unsupported>;
    type SerializeMap = Compound<'w, 'a>;
    type SerializeStruct = Compound<'w, 'a>;
    type SerializeStructVariant = Impossible<(), Unsupported>;

    fn serialize_bool(self, value: bool) -> Result<(), Unsupported> {
        self.writer.scalar(self.place, if value { "true" } else { "false" });
        Ok(())
    }
    fn serialize_i8(self, value: i8) -> Result<(), Unsupported> {
        self.serialize_i64(i64::from(value))
    }
    fn serialize_i16(self, value: i16) -> Result<(), Unsupported> {
        self.serialize_i64(i64::from(value))
    }
    fn serialize_i32(self, value: i32) -> Result<(), Unsupported> {
        self.serialize_i64(i64::from(value))
    }
    fn serialize_i64(self, value: i64) -> Result<(), Unsupported> {
        self.writer.scalar(self.place, &value.to_string());
        Ok(())
    }
    fn serialize_u8(self, value: u8) -> Result<(), Unsupported> {
        self.serialize_u64(u64::from(value))
    }
    fn serialize_u16(self, value: u16) -> Result<(), Unsupported> {
        self.serialize_u64(u64::from(value))
    }
    fn serialize_u32(self, value: u32) -> Result<(), Unsupported> {
        self.serialize_u64(u64::from(value))
    }
    fn serialize_u64(self, value: u64) -> Result<(), Unsupported> {
        self.writer.scalar(self.place, &value.to_string());
        Ok(())
    }
    fn serialize_f32(self, value: f32) -> Result<(), Unsupported> {
        self.serialize_f64(f64::from(value))
    }
    fn serialize_f64(self, value: f64) -> Result<(), Unsupported> {
        // Rare in objects: serde_yaml's own float text (ryu, `.inf`, `.nan`) is reused.
        let document = serde_yaml::to_string(&value).map_err(|_| Unsupported)?;
        self.writer.scalar(self.place, document.trim_end_matches('\n'));
        Ok(())
    }
    fn serialize_char(self, _: char) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_str(self, value: &str) -> Result<(), Unsupported> {
        self.writer.string(self.place, value)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_none(self) -> Result<(), Unsupported> {
        self.serialize_unit()
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Unsupported> {
        self.writer.scalar(self.place, "null");
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Unsupported> {
        self.serialize_unit()
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<(), Unsupported> {
        self.serialize_str(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Compound<'w, 'a>, Unsupported> {
        let column = Writer::dash_column(self.place);
        Ok(self.compound(column))
    }
    fn serialize_tuple(self, len: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_struct(self, _: &'static str, len: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        self.serialize_seq(Some(len))
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'w, 'a>, Unsupported> {
        let column = Writer::key_column(self.place);
        Ok(self.compound(column))
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        Err(Unsupported)
    }
}

impl Compound<'_, '_> {
    fn item<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        if self.open.entries == 0 {
            self.writer.open_first(self.open.place);
        }
        self.open.entries += 1;
        value.serialize(Node { writer: self.writer, place: Place::Item(self.column) })
    }

    fn key(&mut self, key: &str) -> Result<(), Unsupported> {
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

    fn value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        value.serialize(Node { writer: self.writer, place: Place::Value(self.column) })?;
        self.open.entries += 1;
        if let Some(entry) = self.top.last_mut() {
            entry.2 = self.writer.out.len();
        }
        Ok(())
    }

    fn end_mapping(mut self) -> Result<(), Unsupported> {
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

    fn end_sequence(self) -> Result<(), Unsupported> {
        self.writer.close(&self.open, "[]");
        Ok(())
    }
}

impl ser::SerializeSeq for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.item(value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.end_sequence()
    }
}

impl ser::SerializeTuple for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_element<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.item(value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.end_sequence()
    }
}

impl ser::SerializeTupleStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.item(value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.end_sequence()
    }
}

impl ser::SerializeMap for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Unsupported> {
        self.key(&key.serialize(KeyName)?)
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Unsupported> {
        self.value(value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.end_mapping()
    }
}

impl ser::SerializeStruct for Compound<'_, '_> {
    type Ok = ();
    type Error = Unsupported;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, key: &'static str, value: &T) -> Result<(), Unsupported> {
        self.key(key)?;
        self.value(value)
    }
    fn end(self) -> Result<(), Unsupported> {
        self.end_mapping()
    }
}

impl<'w, 'a> ser::Serializer for &'w mut Writer<'a> {
    type Ok = ();
    type Error = Unsupported;
    type SerializeSeq = Impossible<(), Unsupported>;
    type SerializeTuple = Impossible<(), Unsupported>;
    type SerializeTupleStruct = Impossible<(), Unsupported>;
    type SerializeTupleVariant = Impossible<(), Unsupported>;
    type SerializeMap = Compound<'w, 'a>;
    type SerializeStruct = Compound<'w, 'a>;
    type SerializeStructVariant = Impossible<(), Unsupported>;

    fn serialize_bool(self, _: bool) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i8(self, _: i8) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i16(self, _: i16) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i32(self, _: i32) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i64(self, _: i64) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u8(self, _: u8) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u16(self, _: u16) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u32(self, _: u32) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u64(self, _: u64) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_f32(self, _: f32) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_f64(self, _: f64) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_char(self, _: char) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_str(self, _: &str) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_none(self) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_unit(self) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<(), Unsupported> {
        value.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(self, _: &'static str, _: u32, _: &'static str, _: &T) -> Result<(), Unsupported> {
        Err(Unsupported)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        Err(Unsupported)
    }
    /// The document is a mapping whose entries start at column 0, so that the object list
    /// can put its header before them.
    fn serialize_map(self, _: Option<usize>) -> Result<Compound<'w, 'a>, Unsupported> {
        Ok(Node { writer: self, place: Place::Root }.compound(0))
    }
    fn serialize_struct(self, _: &'static str, len: usize) -> Result<Compound<'w, 'a>, Unsupported> {
        self.serialize_map(Some(len))
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        Err(Unsupported)
    }
}

/// Takes a mapping key: a string or a unit variant, nothing else.
struct KeyName;

impl ser::Serializer for KeyName {
    type Ok = String;
    type Error = Unsupported;
    type SerializeSeq = Impossible<String, Unsupported>;
    type SerializeTuple = Impossible<String, Unsupported>;
    type SerializeTupleStruct = Impossible<String, Unsupported>;
    type SerializeTupleVariant = Impossible<String, Unsupported>;
    type SerializeMap = Impossible<String, Unsupported>;
    type SerializeStruct = Impossible<String, Unsupported>;
    type SerializeStructVariant = Impossible<String, Unsupported>;

    fn serialize_str(self, value: &str) -> Result<String, Unsupported> {
        Ok(value.to_owned())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, variant: &'static str) -> Result<String, Unsupported> {
        Ok(variant.to_owned())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, value: &T) -> Result<String, Unsupported> {
        value.serialize(self)
    }
    fn serialize_bool(self, _: bool) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i8(self, _: i8) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i16(self, _: i16) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i32(self, _: i32) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_i64(self, _: i64) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u8(self, _: u8) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u16(self, _: u16) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u32(self, _: u32) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_u64(self, _: u64) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_f32(self, _: f32) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_f64(self, _: f64) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_char(self, _: char) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_bytes(self, _: &[u8]) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_none(self) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_unit(self) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<String, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeTupleStruct, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Unsupported> {
        Err(Unsupported)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Unsupported> {
        Err(Unsupported)
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde::Serialize;

    use super::*;

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Inner {
        name: String,
        values: Vec<String>,
        nested: Vec<Vec<u32>>,
        empty_list: Vec<u32>,
        empty_map: BTreeMap<String, String>,
        maybe: Option<bool>,
    }

    #[derive(Serialize)]
    #[serde(rename_all = "camelCase")]
    struct Content {
        spec: Vec<Inner>,
        labels: BTreeMap<String, String>,
        weight: f64,
        count: i64,
        lists_of_maps: Vec<Vec<BTreeMap<String, u32>>>,
        map_of_lists: BTreeMap<String, Vec<BTreeMap<String, Vec<String>>>>,
    }

    fn content() -> Content {
        let strings = ["plain", "0", "1.5", "true", "null", "", "a: b", "- x", "'quoted'", "x #y", "~", "0x1F", "012", "@at", "ünï"];
        let inner = |name: &str| Inner {
            name: name.to_owned(),
            values: strings.iter().map(|text| (*text).to_owned()).collect(),
            nested: vec![vec![1, 2], vec![], vec![3]],
            empty_list: Vec::new(),
            empty_map: BTreeMap::new(),
            maybe: None,
        };
        Content {
            spec: vec![inner("first"), inner("0")],
            labels: strings.iter().map(|text| ((*text).to_owned(), (*text).to_owned())).collect(),
            weight: 0.25,
            count: -3,
            lists_of_maps: vec![vec![BTreeMap::from([("a".to_owned(), 1), ("b".to_owned(), 2)])], vec![BTreeMap::new()]],
            map_of_lists: BTreeMap::from([("k".to_owned(), vec![BTreeMap::from([("inner".to_owned(), vec!["v".to_owned()])])])]),
        }
    }

    #[test]
    fn writes_what_serde_yaml_writes() {
        let value = content();
        let mut out = String::new();
        assert!(write_mapping(&value, &[], &mut Scalars::default(), &mut out).is_ok());
        assert_eq!(out, serde_yaml::to_string(&value).unwrap_or_default());
    }

    #[test]
    fn skipped_keys_leave_as_serde_yaml_mapping_remove_leaves_them() {
        let value = content();
        let mut out = String::new();
        assert!(write_mapping(&value, &["spec", "weight"], &mut Scalars::default(), &mut out).is_ok());
        let mut mapping = match serde_yaml::to_value(&value) {
            Ok(serde_yaml::Value::Mapping(mapping)) => mapping,
            _ => serde_yaml::Mapping::new(),
        };
        mapping.remove("spec");
        mapping.remove("weight");
        assert_eq!(out, serde_yaml::to_string(&mapping).unwrap_or_default());
        assert!(out.starts_with("mapOfLists:"), "the last entry takes the first removed one's place: {out}");
    }

    #[test]
    fn what_is_surely_plain_is_plain_to_serde_yaml() {
        for text in ["cpu", "nvidia.com/gpu", "team-0001", "placid.dev/team", "LowerPriority", "a_b", "Infinite", "nano", "x1.5e3"] {
            assert!(surely_plain(text), "{text}");
            assert_eq!(serde_yaml::to_string(text).unwrap_or_default(), format!("{text}\n"));
        }
        for text in ["True", "NULL", "nan", "Yes", "0", "-a", "a b", "a:b", ""] {
            assert!(!surely_plain(text), "{text}");
        }
    }

    /// serde_yaml's one-line rendering of `value`, or `None` where it writes a block.
    fn serde_yaml_line(value: &str) -> Option<String> {
        let document = serde_yaml::to_string(value).ok()?;
        let line = document.strip_suffix('\n')?;
        (!line.contains('\n')).then(|| line.to_owned())
    }

    fn rendered(value: &str) -> Option<String> {
        let mut out = String::new();
        Scalars::default().render(value).ok()?.write_to(&mut out);
        Some(out)
    }

    #[test]
    fn strings_with_indicators_and_spaces_are_styled_as_libyaml_styles_them() {
        let plain = [
            "pods of tier P1 must set terminationGracePeriodSeconds >= 300 (the preemption window)",
            "(object.kind == 'Pod' && variables.queue == '') || has(spec.x) && \"q\" != 'p2-100'",
            "placid_team_budget_daily{team=\"team-0001\"}",
            "a:b",
            "a#b",
            "-a b",
            "1 2",
            "it's",
            "ends in a dot.",
        ];
        let quoted = [
            "a: b", "a #b", "a b:", "a b ", " a", "'a b'", "- a", "? a", ": a", "{a}", "#a", "--- a", "... a", "@a", "*a", "%a", "`a",
            "!a", "&a", "|a", ">a", "\"a", "[a", "]a", ",a", ":", "?",
        ];
        for text in plain.iter().chain(&quoted) {
            assert_eq!(rendered(text), serde_yaml_line(text), "{text:?}");
        }
        for text in plain {
            assert_eq!(libyaml_style(text), Some(Styled::Verbatim(text)), "{text:?}");
        }
        for text in quoted {
            assert_eq!(libyaml_style(text), Some(Styled::SingleQuoted(text)), "{text:?}");
        }
        // Look-alikes of numbers, control and non-ASCII characters are asked of serde_yaml.
        for text in ["0", "-1", "-", "1e3", "0x1F", "1+0x10", ".inf", "~", "true", "a\tb", "ü b", "a\u{7f}"] {
            assert_eq!(libyaml_style(text), None, "{text:?}");
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(2000))]
        /// Every one-line string comes out as serde_yaml writes it, as a value and as a key.
        #[test]
        fn scalars_are_written_as_serde_yaml_writes_them(value in "[ a-zA-Z0-9:#'\"\\-.?,\\[\\]{}&*!|>%@`~+_/=()\t\u{e9}]{0,12}") {
            proptest::prop_assert_eq!(rendered(&value), serde_yaml_line(&value), "{:?}", value);
            let mapping = BTreeMap::from([(value.clone(), value.clone())]);
            let mut out = String::new();
            if value.len() <= MAX_SIMPLE_KEY && !value.starts_with('!') {
                proptest::prop_assert!(write_mapping(&mapping, &[], &mut Scalars::default(), &mut out).is_ok());
                proptest::prop_assert_eq!(out, serde_yaml::to_string(&mapping).unwrap_or_default());
            }
        }
    }

    #[test]
    fn block_scalars_and_tags_are_left_to_serde_yaml() {
        #[derive(Serialize)]
        enum Tagged {
            Variant(u32),
        }
        let mut out = String::new();
        let multi_line = BTreeMap::from([("script", "line one\nline two\n")]);
        assert!(write_mapping(&multi_line, &[], &mut Scalars::default(), &mut out).is_err());
        assert!(write_mapping(&BTreeMap::from([("tag", Tagged::Variant(1))]), &[], &mut Scalars::default(), &mut out).is_err());
        assert!(write_mapping(&BTreeMap::from([("x".repeat(200), 1)]), &[], &mut Scalars::default(), &mut out).is_err());
    }
}
