//! A block-style YAML writer for placid's typed content (Kubernetes objects, kustomizations,
//! ConfigMap payloads, Prometheus rule files), byte-identical to `serde_yaml` for what it
//! accepts and many times faster: `serde_yaml` drives libyaml's
//! emitter one event at a time, which was half of a build's time at 100 teams × 64 flavors.
//!
//! What it writes is exactly what `serde_yaml::to_string` writes: 2-space indentation,
//! sequences inside mappings without indentation (`key:` then `- item` at the key's column),
//! a mapping or sequence inside a sequence starting on the dash's line, `{}` and `[]` for
//! empty ones, and every string scalar in the style `serde_yaml` gives it. Two kinds of
//! strings are styled here, as serde_yaml and libyaml would style them: names (plain) and
//! printable ASCII that cannot be read as a number, boolean or null (plain or single-quoted,
//! by libyaml's rules, `style`); the property test in `tests` holds both to serde_yaml. Any
//! other string (a quantity, a look-alike of a number, non-ASCII) is asked of `serde_yaml`
//! once per distinct string ([`Scalars`]): a build repeats the same quantities thousands of times.
//!
//! Invariants: anything whose layout depends on more than the rules above (a string with a
//! line break, which becomes a literal block; an enum variant with data, which becomes a
//! YAML tag; a key that is long or not a string; a char or bytes) is `Unsupported`, and
//! [`to_string`] and [`write_mapping`] serialise that value with `serde_yaml` instead: the
//! output never differs. A value that cannot be written at all is an [`Error`] for the
//! caller, never an empty document.
//!
//! The parts: `style` (how a one-line string is styled), `scalars` (serde_yaml's renderings,
//! asked once), `block` (where each node goes), `serializer` (the serde glue that drives it)
//! and `error`. It lives beside the targets, not in one: `k8s` and `ops` both write YAML.

mod block;
mod error;
mod scalars;
mod serializer;
mod style;
#[cfg(test)]
mod tests;

use serde::Serialize;
use serde_yaml::Value;

pub use error::Error;
pub use scalars::Scalars;

/// `value`, a struct or map, as a YAML document: the same bytes as `serde_yaml::to_string`,
/// through this writer where it can (see the module's invariants), else through `serde_yaml`.
pub fn to_string<T: Serialize + ?Sized>(value: &T) -> Result<String, Error> {
    let mut out = String::new();
    if block::write_block(value, &[], &mut Scalars::default(), &mut out).is_ok() {
        return Ok(out);
    }
    Ok(serde_yaml::to_string(value)?)
}

/// Appends the YAML of `value`'s top-level fields but `skipped` to `out`: through the block
/// writer, or `serde_yaml` where the writer leaves the layout to it (the same bytes either
/// way). `scalars` is the memo of serde_yaml's renderings, kept across the values of a build.
pub fn write_mapping<T: Serialize + ?Sized>(
    value: &T,
    skipped: &'static [&'static str],
    scalars: &mut Scalars,
    out: &mut String,
) -> Result<(), Error> {
    let start = out.len();
    if block::write_block(value, skipped, scalars, out).is_ok() {
        return Ok(());
    }
    // The writer may have left a part of the mapping.
    out.truncate(start);
    let Value::Mapping(mut mapping) = serde_yaml::to_value(value)? else { return Err(Error::NotAMapping) };
    // `Mapping::remove` is a swap-remove: the block writer drops skipped keys in that same
    // order, so both paths write the entries alike.
    for owned in skipped {
        mapping.remove(*owned);
    }
    if !mapping.is_empty() {
        out.push_str(&serde_yaml::to_string(&Value::Mapping(mapping))?);
    }
    Ok(())
}
