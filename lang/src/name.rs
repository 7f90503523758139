//! Validated names. Every name that can reach a generated file is checked once, here, so
//! targets can embed it without escaping concerns: no `:`, `=`, `,`, spaces, quotes or
//! control characters can ever be part of a [`Name`].

use std::fmt;

/// A policy or inventory name: 1-63 ASCII letters, digits, `-`, `_` or `.`, starting with a
/// letter or digit.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Name(String);

impl Name {
    /// Longest accepted name; the Kubernetes label-value and DNS label limit.
    pub const MAX_LEN: usize = 63;

    /// Checks and wraps a name, or says why it is refused.
    pub fn new(text: &str) -> Result<Name, String> {
        if text.is_empty() {
            return Err("a name cannot be empty".into());
        }
        if text.len() > Name::MAX_LEN {
            return Err(format!(
                "`{}…` is {} characters long; names have at most {} characters",
                text.chars().take(20).collect::<String>(),
                text.len(),
                Name::MAX_LEN
            ));
        }
        if !text.as_bytes()[0].is_ascii_alphanumeric() {
            return Err(format!("`{}` must start with a letter or digit", text.escape_debug()));
        }
        if let Some(bad) = text.chars().find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))) {
            return Err(format!(
                "`{}` contains `{}`; names use only letters, digits, `-`, `_` and `.`",
                text.escape_debug(),
                bad.escape_debug()
            ));
        }
        Ok(Name(text.to_owned()))
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A Kubernetes-style label key (`[prefix/]name`) for node labels in the inventory and pool
/// selectors.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LabelKey(String);

impl LabelKey {
    /// Checks a label key: an optional DNS-subdomain prefix and `/`, then a name of at most
    /// 63 characters of alphanumerics, `-`, `_`, `.` that starts and ends alphanumeric.
    pub fn new(text: &str) -> Result<LabelKey, String> {
        let (prefix, name) = match text.rsplit_once('/') {
            Some((prefix, name)) => (Some(prefix), name),
            None => (None, text),
        };
        if let Some(prefix) = prefix {
            let valid_prefix = !prefix.is_empty()
                && prefix.len() <= 253
                && prefix.split('.').all(|part| {
                    !part.is_empty()
                        && part.len() <= 63
                        && part.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
                        && !part.starts_with('-')
                        && !part.ends_with('-')
                });
            if !valid_prefix {
                return Err(format!("`{}` is not a valid label prefix (a lower-case DNS subdomain)", prefix.escape_debug()));
            }
        }
        if !is_label_value(name) || name.is_empty() {
            return Err(format!("`{}` is not a valid label name", name.escape_debug()));
        }
        Ok(LabelKey(text.to_owned()))
    }

    /// The key as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for LabelKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Whether `text` is a valid Kubernetes label value (empty, or at most 63 characters of
/// alphanumerics, `-`, `_`, `.`, starting and ending alphanumeric).
pub fn is_label_value(text: &str) -> bool {
    if text.is_empty() {
        return true;
    }
    text.len() <= 63
        && text.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
        && text.as_bytes()[0].is_ascii_alphanumeric()
        && text.as_bytes()[text.len() - 1].is_ascii_alphanumeric()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_refuse_injection_characters() {
        assert!(Name::new("nvl-a").is_ok());
        assert!(Name::new("P0").is_ok());
        for bad in ["", "a b", "a:b", "a=b", "a\nb", "-a", "a,b", "a\"b", "ä"] {
            assert!(Name::new(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn label_keys() {
        assert!(LabelKey::new("placid.dev/nvlink-domain").is_ok());
        assert!(LabelKey::new("zone").is_ok());
        assert!(LabelKey::new("Bad_Prefix/x").is_err());
        assert!(LabelKey::new("a/").is_err());
    }

    #[test]
    fn long_non_ascii_names_are_refused_without_panicking() {
        assert!(Name::new(&"\u{e9}".repeat(40)).is_err());
    }
}
