//! `HOST:PORT` network addresses that may name a host (`prometheus-operated.monitoring.svc:9090`),
//! as the extender's `--prometheus` and the Kubernetes target's `extender prometheus=` take
//! them. One parser for both, so the policy accepts exactly what the extender will.

use std::fmt;
use std::net::{Ipv4Addr, Ipv6Addr};
use std::str::FromStr;

/// A host (a DNS name or an IP address) and a port.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct HostPort {
    /// The DNS name (lowercase letters, digits, `-` and `.`) or IP address, without brackets.
    pub host: String,
    /// 1-65535.
    pub port: u16,
}

/// The longest DNS name (RFC 1035).
const MAX_NAME: usize = 253;

impl HostPort {
    /// Parses `name:port`, `1.2.3.4:port` or `[::1]:port`.
    pub fn parse(text: &str) -> Option<HostPort> {
        let (host, port) = match text.strip_prefix('[') {
            Some(rest) => {
                let (host, port) = rest.split_once("]:")?;
                host.parse::<Ipv6Addr>().ok()?;
                (host, port)
            }
            None => {
                let (host, port) = text.rsplit_once(':')?;
                // An IPv6 address needs its brackets, or its last group would read as the port.
                if host.contains(':') || (host.parse::<Ipv4Addr>().is_err() && !is_dns_name(host)) {
                    return None;
                }
                (host, port)
            }
        };
        // Digits only: `u16::from_str` would take `+80`.
        if port.is_empty() || !port.bytes().all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        let port: u16 = port.parse().ok().filter(|port| *port > 0)?;
        Some(HostPort { host: host.to_owned(), port })
    }
}

/// Dot-separated labels of lowercase letters, digits and inner hyphens, 1-63 bytes each.
fn is_dns_name(text: &str) -> bool {
    let label = |label: &str| {
        (1..=63).contains(&label.len())
            && label.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-')
            && !label.starts_with('-')
            && !label.ends_with('-')
    };
    !text.is_empty() && text.len() <= MAX_NAME && text.split('.').all(label)
}

impl FromStr for HostPort {
    type Err = String;

    fn from_str(text: &str) -> Result<HostPort, String> {
        HostPort::parse(text).ok_or_else(|| format!("`{text}` is not HOST:PORT (a DNS name or IP address, and a port 1-65535)"))
    }
}

impl fmt::Display for HostPort {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.host.contains(':') { write!(f, "[{}]:{}", self.host, self.port) } else { write!(f, "{}:{}", self.host, self.port) }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::HostPort;

    #[test]
    fn names_and_addresses_with_ports_parse() {
        for (text, host, port) in [
            ("prometheus-operated.monitoring.svc:9090", "prometheus-operated.monitoring.svc", 9090),
            ("127.0.0.1:9090", "127.0.0.1", 9090),
            ("[::1]:80", "::1", 80),
            ("prom:65535", "prom", 65535),
        ] {
            assert_eq!(HostPort::parse(text), Some(HostPort { host: host.to_owned(), port }), "{text}");
        }
        for text in [
            "prom",
            "prom:",
            "prom:0",
            "prom:65536",
            "prom:+80",
            ":9090",
            "Prom:9090",
            "-a:1",
            "a..b:1",
            "a b:1",
            "::1:80",
            "[::1]80",
            "a_b:1",
            "[x]:1",
        ] {
            assert_eq!(HostPort::parse(text), None, "{text}");
        }
    }

    proptest! {
        #[test]
        fn what_parses_prints_back_the_same(text in "[a-z0-9.:\\[\\]-]{0,20}") {
            if let Some(address) = HostPort::parse(&text) {
                prop_assert_eq!(HostPort::parse(&address.to_string()), Some(address));
            }
        }
    }
}
