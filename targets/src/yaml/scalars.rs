//! The memo of serde_yaml's renderings: a string this writer does not style itself is asked
//! of serde_yaml once per distinct string, since a build repeats the same quantities
//! thousands of times.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::error::Unsupported;
use super::style::{Styled, libyaml_style, surely_plain};

/// How `serde_yaml` writes each string scalar, asked once per distinct string.
#[derive(Debug, Default)]
pub struct Scalars {
    /// Where each string serde_yaml was asked about is in `rendered`.
    index: HashMap<String, usize, BuildHasherDefault<Fnv>>,
    /// serde_yaml's one-line rendering of each.
    rendered: Vec<Box<str>>,
}

impl Scalars {
    /// The scalar as `serde_yaml` writes it on one line (plain, `'single'` or `"double"`
    /// quoted); [`Unsupported`] for a string it would write as a block.
    pub(super) fn render<'v>(&'v mut self, value: &'v str) -> Result<Styled<'v>, Unsupported> {
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
