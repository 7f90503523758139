//! RISC-V ISA strings (`rv64imafdcv_zicsr_zba`) parsed by the naming rules of the ISA manual
//! (src/naming.adoc) and the kernel's uabi.rst: base, single-letter extensions with optional
//! versions, `_`-separated Z/S/X extensions. Case-insensitive in, canonical lower case out.
//!
//! Invariant: parsing never panics; [`Isa`]'s `Display` writes the canonical string, and a
//! canonical string parses back to the same [`Isa`] (kernels print canonical strings, so the
//! strings of /proc/cpuinfo round-trip byte for byte).

use std::collections::BTreeSet;
use std::fmt;

/// Canonical order of single-letter extensions (naming.adoc); also the order of Z categories.
const LETTER_ORDER: &str = "imafdqlcbkjtpvh";

/// Multi-letter names that end in `<digits>p<digits>` as part of the name, not as a version.
const NAMES_WITH_DIGITS: &[&str] = &["ss1p11", "ss1p12", "ss1p13", "sm1p11", "sm1p12", "sm1p13"];

/// A version suffix: `2p1` is 2.1, `2` is 2 with the minor left out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Version {
    /// Major version.
    pub major: u32,
    /// Minor version, when written.
    pub minor: Option<u32>,
}

/// One extension and its version, as written.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Extension {
    /// Lower-case name: one letter (`m`) or a multi-letter name (`zicsr`).
    pub name: String,
    /// Version, when written.
    pub version: Option<Version>,
}

/// A parsed ISA string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Isa {
    /// 32, 64 or 128.
    pub xlen: u32,
    /// The base: `i`, `e`, or `g` (which stands for `imafd_zicsr_zifencei`).
    pub base: Extension,
    /// Single-letter extensions after the base, in canonical order.
    pub letters: Vec<Extension>,
    /// Multi-letter extensions in canonical order.
    pub multi: Vec<Extension>,
}

/// Why an ISA string was refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct IsaError(pub String);

impl fmt::Display for IsaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Isa {
    /// Parses an ISA string. Unknown letters and names are kept (kernels and device trees
    /// print legacy `s`/`u` letters and vendor names); malformed text is refused.
    pub fn parse(text: &str) -> Result<Isa, IsaError> {
        let lower = text.trim().to_ascii_lowercase();
        if !lower.is_ascii() {
            return Err(IsaError(format!("`{}` has non-ASCII characters", text.escape_debug())));
        }
        let (xlen, rest) = [("rv128", 128), ("rv64", 64), ("rv32", 32)]
            .iter()
            .find_map(|(prefix, xlen)| lower.strip_prefix(prefix).map(|rest| (*xlen, rest)))
            .ok_or_else(|| IsaError(format!("`{}` does not start with rv32, rv64 or rv128", text.escape_debug())))?;
        let mut tokens = rest.split('_');
        let first = tokens.next().unwrap_or_default();
        let mut letters = single_letters(first)?;
        if letters.is_empty() || !matches!(letters[0].name.as_str(), "i" | "e" | "g") {
            return Err(IsaError(format!("`{}` has no base `i`, `e` or `g` after rv{xlen}", text.escape_debug())));
        }
        let base = letters.remove(0);
        let mut multi = Vec::new();
        for token in tokens {
            if token.is_empty() {
                return Err(IsaError(format!("`{}` has an empty extension between underscores", text.escape_debug())));
            }
            // `_p2p0` style: a single letter after an underscore (the P extension after a version).
            if is_single_letter_token(token) {
                letters.extend(single_letters(token)?);
                continue;
            }
            multi.push(multi_letter(token)?);
        }
        letters.sort_by_key(|extension| letter_rank(&extension.name));
        letters.dedup_by(|left, right| left.name == right.name);
        multi.sort_by_key(|extension| multi_rank(&extension.name));
        multi.dedup_by(|left, right| left.name == right.name);
        Ok(Isa { xlen, base, letters, multi })
    }

    /// Every extension named, expanded by the implications of the specifications (`g`, `b`,
    /// `v`, `d` -> `f` -> `zicsr`, ...), so profile checks compare like with like.
    pub fn expanded(&self) -> BTreeSet<String> {
        let named = std::iter::once(&self.base).chain(&self.letters).chain(&self.multi).map(|extension| extension.name.clone());
        expand(named)
    }

    /// Whether a single letter (`v`) is named.
    pub fn has_letter(&self, letter: &str) -> bool {
        self.letters.iter().any(|extension| extension.name == letter)
    }

    /// Whether a multi-letter extension is named.
    pub fn has_multi(&self, name: &str) -> bool {
        self.multi.iter().any(|extension| extension.name == name)
    }
}

fn is_single_letter_token(token: &str) -> bool {
    let mut chars = token.chars();
    chars.next().is_some_and(|first| first.is_ascii_lowercase())
        && chars.as_str().chars().all(|c| c.is_ascii_digit() || c == 'p')
        && chars.as_str().chars().next().is_none_or(|c| c.is_ascii_digit())
}

fn single_letters(run: &str) -> Result<Vec<Extension>, IsaError> {
    let bytes = run.as_bytes();
    let mut letters = Vec::new();
    let mut index = 0;
    while index < bytes.len() {
        let letter = bytes[index];
        if !letter.is_ascii_lowercase() {
            return Err(IsaError(format!("`{}` is not an extension letter in `{}`", letter as char, run.escape_debug())));
        }
        index += 1;
        let (version, used) = version_at(&run[index..]);
        index += used;
        letters.push(Extension { name: (letter as char).to_string(), version });
    }
    Ok(letters)
}

/// Reads `<major>[p<minor>]` at the start of `text`; returns it and the bytes used.
fn version_at(text: &str) -> (Option<Version>, usize) {
    let major_len = text.bytes().take_while(u8::is_ascii_digit).count();
    if major_len == 0 {
        return (None, 0);
    }
    let Ok(major) = text[..major_len].parse::<u32>() else {
        return (None, 0);
    };
    let after = &text[major_len..];
    let minor_len = after.strip_prefix('p').map_or(0, |minor| minor.bytes().take_while(u8::is_ascii_digit).count());
    if minor_len > 0
        && let Ok(minor) = after[1..=minor_len].parse::<u32>()
    {
        return (Some(Version { major, minor: Some(minor) }), major_len + 1 + minor_len);
    }
    (Some(Version { major, minor: None }), major_len)
}

fn multi_letter(token: &str) -> Result<Extension, IsaError> {
    if !token.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit()) || !token.as_bytes()[0].is_ascii_lowercase() {
        return Err(IsaError(format!("`{}` is not an extension name", token.escape_debug())));
    }
    // Names may contain digits (`zve32x`, `sv39`, `ss1p13`): only a trailing `<n>p<m>` after a
    // letter is a version, and not for the few names that end that way themselves.
    if !NAMES_WITH_DIGITS.contains(&token)
        && let Some(p_index) = token.rfind('p')
    {
        let (major_text, minor_text) = (&token[..p_index], &token[p_index + 1..]);
        let major_len = major_text.bytes().rev().take_while(u8::is_ascii_digit).count();
        let name = &major_text[..major_text.len() - major_len];
        if major_len > 0
            && !minor_text.is_empty()
            && minor_text.bytes().all(|byte| byte.is_ascii_digit())
            && name.len() > 1
            && name.bytes().last().is_some_and(|byte| byte.is_ascii_lowercase())
            && let (Ok(major), Ok(minor)) = (major_text[name.len()..].parse::<u32>(), minor_text.parse::<u32>())
        {
            return Ok(Extension { name: name.to_owned(), version: Some(Version { major, minor: Some(minor) }) });
        }
    }
    Ok(Extension { name: token.to_owned(), version: None })
}

fn letter_rank(name: &str) -> (usize, String) {
    let rank = name.chars().next().and_then(|letter| LETTER_ORDER.find(letter)).unwrap_or(LETTER_ORDER.len());
    (rank, name.to_owned())
}

/// Z extensions by category (their second letter, in single-letter order), then S, then
/// unknown prefixes, then X (vendor) last, each alphabetical (uabi.rst).
fn multi_rank(name: &str) -> (u8, usize, String) {
    let mut chars = name.chars();
    let class = match chars.next() {
        Some('z') => 0,
        Some('s') => 1,
        Some('x') => 3,
        _ => 2,
    };
    let category = if class == 0 { chars.next().and_then(|letter| LETTER_ORDER.find(letter)).unwrap_or(LETTER_ORDER.len()) } else { 0 };
    (class, category, name.to_owned())
}

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.minor {
            Some(minor) => write!(f, "{}p{minor}", self.major),
            None => write!(f, "{}", self.major),
        }
    }
}

impl fmt::Display for Isa {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "rv{}{}", self.xlen, self.base.name)?;
        let mut previous_versioned = write_version(f, &self.base)?;
        for letter in &self.letters {
            // After a version, `p` would read as the minor separator, so the P extension
            // is written after an underscore there (naming.adoc).
            if previous_versioned && letter.name == "p" {
                f.write_str("_")?;
            }
            f.write_str(&letter.name)?;
            previous_versioned = write_version(f, letter)?;
        }
        for extension in &self.multi {
            write!(f, "_{}", extension.name)?;
            write_version(f, extension)?;
        }
        Ok(())
    }
}

fn write_version(f: &mut fmt::Formatter<'_>, extension: &Extension) -> Result<bool, fmt::Error> {
    match extension.version {
        Some(version) => write!(f, "{version}").map(|()| true),
        None => Ok(false),
    }
}

/// What each extension implies (naming.adoc, riscv-profiles, the unprivileged spec chapters).
const IMPLIES: &[(&str, &[&str])] = &[
    ("g", &["i", "m", "a", "f", "d", "zicsr", "zifencei"]),
    ("b", &["zba", "zbb", "zbs"]),
    ("m", &["zmmul"]),
    ("a", &["zaamo", "zalrsc"]),
    ("q", &["d"]),
    ("d", &["f"]),
    ("f", &["zicsr"]),
    ("c", &["zca"]),
    ("v", &["zve64d", "zvl128b"]),
    ("zve64d", &["zve64f", "d"]),
    ("zve64f", &["zve64x", "zve32f"]),
    ("zve64x", &["zve32x", "zvl64b"]),
    ("zve32f", &["zve32x", "f"]),
    ("zve32x", &["zicsr", "zvl32b"]),
    ("zvfh", &["zvfhmin", "zfhmin"]),
    ("zvfhmin", &["zve32f"]),
    ("zfh", &["zfhmin"]),
    ("zfhmin", &["f"]),
    ("zfa", &["f"]),
    ("zcb", &["zca"]),
    ("zcd", &["zca", "d"]),
    ("zcf", &["zca", "f"]),
    ("zcmop", &["zca"]),
    ("zvbb", &["zvkb"]),
    ("zk", &["zkn", "zkr", "zkt"]),
    ("zkn", &["zbkb", "zbkc", "zbkx", "zkne", "zknd", "zknh"]),
    ("zks", &["zbkb", "zbkc", "zbkx", "zksed", "zksh"]),
    ("zvkn", &["zvkned", "zvknhb", "zvkb", "zvkt"]),
    ("zvkng", &["zvkn", "zvkg"]),
    ("zicntr", &["zicsr"]),
    ("zihpm", &["zicsr"]),
    ("sha", &["h", "ssstateen", "shcounterenw", "shvstvala", "shtvala", "shvstvecd", "shvsatpa", "shgatpa"]),
];

/// Expands extension names by [`IMPLIES`] until nothing new appears.
pub fn expand(names: impl IntoIterator<Item = String>) -> BTreeSet<String> {
    let mut set: BTreeSet<String> = BTreeSet::new();
    let mut pending: Vec<String> = names.into_iter().collect();
    while let Some(name) = pending.pop() {
        if let Some((_, implied)) = IMPLIES.iter().find(|(from, _)| *from == name) {
            pending.extend(implied.iter().map(|implied| (*implied).to_owned()).filter(|implied| !set.contains(implied)));
        }
        set.insert(name);
    }
    set
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn check(text: &str, canonical: &str) {
        let isa = Isa::parse(text).unwrap_or_else(|error| panic!("{text}: {error}"));
        assert_eq!(isa.to_string(), canonical);
    }

    #[test]
    fn kernel_strings_are_canonical() {
        for text in [
            "rv64imafdc_zicntr_zicsr_zifencei_zihpm_zba_zbb",
            "rv64imafdcv_zicbom_zicboz_zicntr_zicond_zicsr_zifencei_zihintpause_zihpm_zfh_zfhmin_zca_zcd_zba_zbb_zbc_zbs_zkt_zve32f_zve32x_zve64d_zve64f_zve64x_zvfh_zvfhmin_zvkt_sscofpmf_sstc_svinval_svnapot_svpbmt",
            "rv64imafdc_zicntr_zicsr_zifencei_zihpm_xtheadvector",
            "rv64imafdcvsu",
            "rv64gc",
            "rv32e",
        ] {
            check(text, text);
        }
    }

    #[test]
    fn versions_case_and_order_are_normalised() {
        check("RV64I2p1M2P0_Zicsr2p0", "rv64i2p1m2p0_zicsr2p0");
        check("rv64ima_zba_sstc_zicsr_xfoo", "rv64ima_zicsr_zba_sstc_xfoo");
        check("rv64i2p0_p", "rv64i2p0_p");
        check("rv64imafdch_zicsr_zifencei_zba_zbb_sscofpmf", "rv64imafdch_zicsr_zifencei_zba_zbb_sscofpmf");
        check("rv64i_ss1p13_sv39_zve32x", "rv64i_zve32x_ss1p13_sv39");
    }

    #[test]
    fn malformed_strings_are_refused() {
        for text in ["", "rv", "x86_64", "rv64", "rv64m", "rv64i__zba", "rv64i_z-a", "rv64i\u{e9}"] {
            assert!(Isa::parse(text).is_err(), "{text} should be refused");
        }
    }

    #[test]
    fn implications_expand() {
        let isa = Isa::parse("rv64gcv_zfh").unwrap_or_else(|error| panic!("{error}"));
        let expanded = isa.expanded();
        for name in ["i", "m", "a", "f", "d", "zicsr", "zifencei", "zca", "zve64d", "zve32x", "zfhmin", "zmmul"] {
            assert!(expanded.contains(name), "{name} missing from {expanded:?}");
        }
    }

    fn extension_name() -> impl Strategy<Value = String> {
        prop_oneof!["z[a-z]{1,6}[0-9]{0,2}[a-z]{0,2}", "s[a-z]{1,6}", "x[a-z]{2,8}", Just("sv39".to_owned()), Just("ss1p13".to_owned())]
    }

    fn canonical_isa() -> impl Strategy<Value = Isa> {
        let letters = proptest::sample::subsequence("mafdqlcbkjtvhsu".chars().collect::<Vec<_>>(), 0..8);
        let version = proptest::option::of((0u32..5, proptest::option::of(0u32..5)).prop_map(|(major, minor)| Version { major, minor }));
        (
            prop_oneof![Just(32u32), Just(64), Just(128)],
            prop_oneof![Just("i"), Just("e"), Just("g")],
            letters,
            version,
            proptest::collection::btree_set(extension_name(), 0..6),
        )
            .prop_filter_map("names ending in a version are written with it", |(xlen, base, letters, version, names)| {
                let mut multi: Vec<Extension> = names.into_iter().map(|name| Extension { name, version: None }).collect();
                multi.sort_by_key(|extension| multi_rank(&extension.name));
                let isa = Isa {
                    xlen,
                    base: Extension { name: base.to_owned(), version },
                    letters: letters.into_iter().map(|letter| Extension { name: letter.to_string(), version: None }).collect(),
                    multi,
                };
                let reparsed = Isa::parse(&isa.to_string()).ok()?;
                (reparsed.multi.iter().all(|extension| extension.version.is_none())).then_some(isa)
            })
    }

    proptest! {
        #[test]
        fn parsing_never_panics(text in "\\PC{0,60}") {
            let _ = Isa::parse(&text);
        }

        #[test]
        fn parsing_isa_like_text_never_panics(text in "rv(32|64|128)[a-z0-9_]{0,40}") {
            if let Ok(isa) = Isa::parse(&text) {
                let canonical = isa.to_string();
                prop_assert_eq!(Isa::parse(&canonical).map(|again| again.to_string()), Ok(canonical));
            }
        }

        #[test]
        fn canonical_strings_round_trip(isa in canonical_isa()) {
            let text = isa.to_string();
            let reparsed = Isa::parse(&text);
            prop_assert_eq!(reparsed.as_ref().map(ToString::to_string), Ok(text));
            prop_assert_eq!(reparsed.map(|again| again.letters), Ok(isa.letters.clone()));
        }
    }
}
