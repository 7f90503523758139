//! Scalar styling: how serde_yaml (through libyaml) writes a one-line string, decided here
//! for the strings a build writes most (names, and printable ASCII that reads as no number),
//! so that they need not be asked of serde_yaml.

/// Whether serde_yaml writes `value` plain, as it is, without asking it: a name of letters,
/// digits and `-._/` that starts with a letter is neither a number nor one of the words YAML
/// reads as something else (those are left to serde_yaml, with a few more to be safe), and
/// has no character libyaml quotes for.
pub(super) fn surely_plain(value: &str) -> bool {
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
pub(super) fn libyaml_style(value: &str) -> Option<Styled<'_>> {
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
pub(super) enum Styled<'v> {
    /// Written as it is: the plain string, or serde_yaml's own rendering of it.
    Verbatim(&'v str),
    /// Written between single quotes, each `'` doubled.
    SingleQuoted(&'v str),
}

impl Styled<'_> {
    /// Appends the text to `out`, quoted as the style says.
    pub(super) fn write_to(self, out: &mut String) {
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
