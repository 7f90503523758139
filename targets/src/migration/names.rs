//! Kubernetes names of the migration objects, validated before anything is emitted.
//!
//! placid names may hold `_` and upper case, which Kubernetes rejects: object names are
//! DNS-1123 subdomains (lower-case alphanumerics, `-`, `.`, at most 253 characters) and the
//! service name is also a label value (at most 63 characters).

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::name::{DNS_SUBDOMAIN_MAX, is_dns_subdomain};
use placid_lang::span::Span;

const MAX_LABEL_VALUE: usize = 63;

/// What a name becomes in Kubernetes, which decides its length limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Use {
    /// An object name only.
    ObjectName,
    /// An object name that is also a label value.
    LabelValue,
}

/// Checks `name` (built from the element declared at `span`), recording a diagnostic when it
/// cannot name a Kubernetes object.
pub(super) fn check(name: &str, span: Span, usage: Use, diagnostics: &mut Diagnostics) {
    let limit = match usage {
        Use::ObjectName => DNS_SUBDOMAIN_MAX,
        Use::LabelValue => MAX_LABEL_VALUE,
    };
    if is_dns_subdomain(name) && name.len() <= limit {
        return;
    }
    diagnostics.push(
        Diagnostic::error(Code::MigrationNameInvalid, span, format!("`{name}` cannot name a Kubernetes object"))
            .label("not a DNS-1123 name")
            .help(format!(
                "use lower-case letters, digits, `-` and `.`, starting and ending with a letter or digit, at most {limit} characters"
            )),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn errors(name: &str, usage: Use) -> usize {
        let mut diagnostics = Diagnostics::new();
        check(name, Span::DETACHED, usage, &mut diagnostics);
        diagnostics.error_count()
    }

    #[test]
    fn dns_names_pass_and_others_fail() {
        assert_eq!(errors("x86-to-riscv-accept-p99-latency", Use::ObjectName), 0);
        assert_eq!(errors("llm.serve", Use::LabelValue), 0);
        assert_eq!(errors("Upper", Use::ObjectName), 1);
        assert_eq!(errors("under_score", Use::ObjectName), 1);
        assert_eq!(errors("trailing-", Use::ObjectName), 1);
        assert_eq!(errors(&"a".repeat(64), Use::LabelValue), 1);
        assert_eq!(errors(&"a".repeat(64), Use::ObjectName), 0);
        assert_eq!(errors("a..b", Use::ObjectName), 1);
        assert_eq!(errors("a.-b", Use::ObjectName), 1);
    }
}
