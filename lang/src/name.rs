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
        if let Some(prefix) = prefix
            && !is_dns_subdomain(prefix)
        {
            return Err(format!("`{}` is not a valid label prefix (a lower-case DNS subdomain)", prefix.escape_debug()));
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

/// The longest DNS label (RFC 1123), which is also Kubernetes' limit for most object names.
pub const DNS_LABEL_MAX: usize = 63;

/// The longest DNS subdomain (RFC 1123).
pub const DNS_SUBDOMAIN_MAX: usize = 253;

/// Whether `text` is a DNS label (RFC 1123), as Kubernetes checks it (`IsDNS1123Label`): 1 to
/// 63 lower-case letters, digits or `-`, starting and ending with a letter or digit.
/// Kubernetes names most objects and every namespace so.
pub fn is_dns_label(text: &str) -> bool {
    text.len() <= DNS_LABEL_MAX && is_dns_part(text)
}

/// Whether `text` is a DNS subdomain (RFC 1123), as Kubernetes checks it
/// (`IsDNS1123Subdomain`): parts like DNS labels joined by `.`, at most 253 characters in
/// all. Kubernetes, unlike DNS, puts no limit on one part. It asks this of label-key
/// prefixes and of the names of the object kinds that allow dots (Rollouts,
/// AnalysisTemplates).
pub fn is_dns_subdomain(text: &str) -> bool {
    text.len() <= DNS_SUBDOMAIN_MAX && text.split('.').all(is_dns_part)
}

/// One part of a DNS name of any length: lower-case letters, digits or `-`, starting and
/// ending with a letter or digit.
fn is_dns_part(text: &str) -> bool {
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.iter().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || *byte == b'-')
        && bytes[0] != b'-'
        && bytes[bytes.len() - 1] != b'-'
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

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

    #[test]
    fn dns_labels_and_subdomains() {
        for good in ["a", "0", "p0-1000", &"a".repeat(DNS_LABEL_MAX)] {
            assert!(is_dns_label(good) && is_dns_subdomain(good), "{good:?} refused");
        }
        for bad in ["", "-a", "a-", "A", "a_b", "a.b", "a b", "ä", &"a".repeat(DNS_LABEL_MAX + 1)] {
            assert!(!is_dns_label(bad), "{bad:?} accepted as a label");
        }
        for good in ["placid.dev", "a.b-c.d0", "llm.serve", &"a".repeat(DNS_LABEL_MAX + 1)] {
            assert!(is_dns_subdomain(good), "{good:?} refused");
        }
        for bad in ["", ".", "a.", ".a", "a..b", "a.-b", "a-.b", "Placid.dev", "a_b.c"] {
            assert!(!is_dns_subdomain(bad), "{bad:?} accepted as a subdomain");
        }
        let longest = ["a".repeat(63), "b".repeat(63), "c".repeat(63), "d".repeat(61)].join(".");
        assert_eq!(longest.len(), DNS_SUBDOMAIN_MAX);
        assert!(is_dns_subdomain(&longest));
        assert!(!is_dns_subdomain(&format!("{longest}e")));
    }

    /// RFC 1123's grammar for one label, written independently of [`is_dns_label`].
    const LABEL: &str = "[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?";

    proptest! {
        #[test]
        fn the_rfc_grammar_and_the_predicates_agree(labels in proptest::collection::vec(LABEL, 1..5)) {
            for label in &labels {
                prop_assert!(is_dns_label(label));
            }
            let joined = labels.join(".");
            prop_assert_eq!(is_dns_subdomain(&joined), joined.len() <= DNS_SUBDOMAIN_MAX);
        }

        #[test]
        fn a_corrupted_label_is_refused(label in LABEL, at in 0usize..64, bad in prop::sample::select(vec!['A', '_', '.', ' ', 'é'])) {
            // The grammar makes ASCII, so every byte offset is a character boundary.
            let mut corrupted = label.clone();
            corrupted.insert(at % (label.len() + 1), bad);
            prop_assert!(!is_dns_label(&corrupted));
            let (leading, trailing) = (format!("-{label}"), format!("{label}-"));
            prop_assert!(!is_dns_label(&leading) && !is_dns_label(&trailing));
        }

        #[test]
        fn what_the_predicates_accept_names_objects_and_labels(text in "[a-z0-9.-]{0,70}") {
            // Targets rely on these: a DNS label is also a placid name and a label value, and
            // a DNS subdomain prefixes label keys.
            if is_dns_label(&text) {
                prop_assert!(Name::new(&text).is_ok() && is_label_value(&text));
            }
            if is_dns_subdomain(&text) {
                let key = format!("{text}/x");
                prop_assert!(LabelKey::new(&key).is_ok());
            }
        }
    }
}
