//! Kubernetes names and labels derived from policy names.
//!
//! Invariant: every object name placid emits is a DNS-1123 label (which is also a valid
//! DNS-1123 subdomain, so it fits every kind), and every label key or value it writes passes
//! Kubernetes' label syntax. Policy [`Name`]s allow upper case, `_` and `.`, so they are mapped
//! (lower case, `_` and `.` become `-`: tier `P0` is object `p0`) and checked once here; a name
//! that cannot be mapped is reported at the span of the model element (E050, E054).

use std::fmt;

use placid_lang::diag::{Code, Diagnostic};
use placid_lang::labels;
use placid_lang::name::{LabelKey, Name, is_dns_label, is_label_value};
use placid_lang::span::Span;

use crate::facts::NodeFact;

/// A DNS-1123 label: at most 63 lower-case alphanumerics or `-`, starting and ending
/// alphanumeric. Only made by [`ObjectName::map`] and [`ObjectName::join`], which check it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ObjectName(String);

impl ObjectName {
    /// Maps a policy name to an object name, or explains at `span` why it cannot be one.
    pub fn map(name: &Name, span: Span, what: &str) -> Result<ObjectName, Diagnostic> {
        ObjectName::checked(labels::value(name), span, what, name.as_str())
    }

    /// Joins an object name and a suffix with `-` (`p0` + `1000` = `p0-1000`), checking that
    /// the result is still a DNS-1123 label.
    pub fn join(&self, suffix: &str, span: Span, what: &str) -> Result<ObjectName, Diagnostic> {
        ObjectName::checked(format!("{}-{suffix}", self.0), span, what, &self.0)
    }

    /// A name placid chooses itself (`placid-scheduler-config`); `span` is where the element
    /// it belongs to is declared, for the unlikely case a prefix makes it invalid.
    pub fn fixed(text: &str, span: Span) -> Result<ObjectName, Diagnostic> {
        ObjectName::checked(text.to_owned(), span, "object", text)
    }

    /// A policy name taken as it is written, not mapped: the name of an object that exists
    /// outside placid (a Deployment, its namespace), which a mapped name would miss, or one
    /// the other targets write as it is (a migration's). Explains at `span` why it cannot be
    /// a Kubernetes name.
    pub fn exact(name: &Name, span: Span, what: &str) -> Result<ObjectName, Diagnostic> {
        ObjectName::checked(name.as_str().to_owned(), span, what, name.as_str())
    }

    fn checked(mapped: String, span: Span, what: &str, original: &str) -> Result<ObjectName, Diagnostic> {
        if is_dns_label(&mapped) {
            return Ok(ObjectName(mapped));
        }
        let message = if mapped == original {
            format!("{what} `{}` cannot be a Kubernetes name", original.escape_debug())
        } else {
            format!("{what} `{}` cannot become the Kubernetes name `{}`", original.escape_debug(), mapped.escape_debug())
        };
        Err(Diagnostic::error(Code::KubernetesInvalidName, span, message)
            .label("not a DNS-1123 label")
            .help("use at most 63 lower-case letters, digits and `-`, starting and ending with a letter or digit (placid adds suffixes to some names)"))
    }

    /// The name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl serde::Serialize for ObjectName {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl fmt::Display for ObjectName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A label value placid writes (`r1`, `true`), checked against Kubernetes' label syntax.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct LabelValue(String);

impl LabelValue {
    /// The value `true`, used for membership labels.
    pub fn yes() -> LabelValue {
        LabelValue("true".to_owned())
    }

    /// A value from a policy name, or a diagnostic at `span` when it is not a label value.
    pub fn from_name(name: &Name, span: Span) -> Result<LabelValue, Diagnostic> {
        if is_label_value(name.as_str()) {
            return Ok(LabelValue(name.as_str().to_owned()));
        }
        Err(Diagnostic::error(Code::KubernetesInvalidLabel, span, format!("`{name}` is not a valid Kubernetes label value"))
            .label("invalid label value")
            .help("label values start and end with a letter or digit"))
    }

    /// A value placid writes from a keyword or a number (`on-demand`, `900`, `3.1`), always a
    /// valid label value.
    pub fn from_plain(text: String) -> LabelValue {
        debug_assert!(is_label_value(&text), "{text} is not a label value");
        LabelValue(text)
    }

    /// A value from an object name (always valid: DNS labels are label values).
    pub fn from_object(name: &ObjectName) -> LabelValue {
        LabelValue(name.as_str().to_owned())
    }

    /// The value.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The label and taint keys placid writes, all under the project's label prefix, which the
/// lowering has already checked is a DNS subdomain outside `kubernetes.io` and `k8s.io` (NFD
/// refuses to write those). The keys of node facts are spelled by [`NodeFact::key`].
#[derive(Clone, Debug)]
pub struct PlacidKeys {
    prefix: String,
    prefix_span: Span,
}

impl PlacidKeys {
    /// Keys under `prefix` (`placid.dev`), declared at `prefix_span`.
    pub fn new(prefix: &str, prefix_span: Span) -> PlacidKeys {
        PlacidKeys { prefix: prefix.to_owned(), prefix_span }
    }

    fn key(&self, name: &str, span: Span) -> Result<LabelKey, Diagnostic> {
        checked_key(labels::key(&self.prefix, name), span)
    }

    /// The label prefix (`placid.dev`).
    pub fn prefix(&self) -> &str {
        &self.prefix
    }

    /// `<prefix>/<name>` on a workload template's pods (`placid.dev/stage`), which recording
    /// rules join on; `span` is the element the pods come from.
    pub fn pod(&self, name: &str, span: Span) -> Result<String, Diagnostic> {
        self.key(name, span).map(|key| key.as_str().to_owned())
    }

    /// `<prefix>/team` on team namespaces.
    pub fn team(&self) -> Result<LabelKey, Diagnostic> {
        self.key("team", self.prefix_span)
    }

    /// The label key of a node fact (`<prefix>/rack`).
    pub fn fact(&self, fact: NodeFact) -> Result<LabelKey, Diagnostic> {
        checked_key(fact.key(&self.prefix), self.prefix_span)
    }

    /// The keys of every fact placid publishes on nodes, in [`NodeFact::ALL`] order: what the
    /// Wasm plugins read from Node labels in the extender's `nodeCacheCapable: false` mode.
    pub fn published_facts(&self) -> Result<Vec<(NodeFact, LabelKey)>, Diagnostic> {
        NodeFact::ALL.iter().copied().filter(|fact| fact.is_published()).map(|fact| Ok((fact, self.fact(fact)?))).collect()
    }

    /// `<prefix>/chassis` on nodes, the Topology's chassis level.
    pub fn chassis(&self) -> Result<LabelKey, Diagnostic> {
        self.key("chassis", self.prefix_span)
    }

    /// `<prefix>/rack-level` on every node, the Topology's rack level: the node's rack, or,
    /// outside one, its NVLink domain or the node itself (Kueue leaves a node lacking a level
    /// label out of TAS capacity). Not the `rack` fact the scoring plugins read, which only
    /// nodes in a rack carry, as the inventory says.
    pub fn rack_level(&self) -> Result<LabelKey, Diagnostic> {
        self.key("rack-level", self.prefix_span)
    }

    /// `<prefix>/nvlink-domain-level` on every node, the Topology's NVLink-domain level: the
    /// node's NVLink domain, or the node itself outside one (Kueue leaves a node lacking a level
    /// label out of TAS capacity). Not the `nvlink-domain` fact the scoring plugins read, which
    /// only nodes of a domain carry, as the inventory says.
    pub fn domain_level(&self) -> Result<LabelKey, Diagnostic> {
        self.key("nvlink-domain-level", self.prefix_span)
    }

    /// `<prefix>/tag` on a workload: the tag a route (`route tag= tier=`) maps to a tier.
    pub fn tag(&self) -> Result<LabelKey, Diagnostic> {
        self.key("tag", self.prefix_span)
    }

    /// `<prefix>/migration` on a migration's Rollouts and AnalysisTemplates.
    pub fn migration(&self) -> Result<LabelKey, Diagnostic> {
        self.key("migration", self.prefix_span)
    }

    /// `<prefix>/reserved`, the taint on nodes of a reserved pool.
    pub fn reserved(&self) -> Result<LabelKey, Diagnostic> {
        self.key("reserved", self.prefix_span)
    }

    /// `<prefix>/cell=<cell>` on every node of a cell (`super::layout::cells`): the one key every
    /// ResourceFlavor selects on, so that Kueue's flavor matching sees a pod's pool affinity.
    pub fn cell(&self) -> Result<LabelKey, Diagnostic> {
        self.key("cell", self.prefix_span)
    }

    /// `<prefix>/class-<class>=true` on every node that passes the class's NVLink node filter
    /// ([`super::layout::fits`]): the `nodeSelector` key of the class's pods.
    pub fn class(&self, class: &ObjectName, class_span: Span) -> Result<LabelKey, Diagnostic> {
        self.key(&format!("class-{class}"), class_span)
    }

    /// `<prefix>/pool-<pool>` on every node of the pool. One key per pool, because pools may
    /// overlap and a single `pool` key could hold only one of them.
    pub fn pool(&self, pool: &ObjectName, pool_span: Span) -> Result<LabelKey, Diagnostic> {
        self.key(&format!("pool-{pool}"), pool_span)
    }
}

/// `text` as a label key, or the diagnostic at `span` saying why placid cannot write it.
fn checked_key(text: String, span: Span) -> Result<LabelKey, Diagnostic> {
    LabelKey::new(&text).map_err(|reason| {
        Diagnostic::error(Code::KubernetesInvalidLabel, span, format!("placid would write the invalid label key `{text}`"))
            .label(reason)
            .help("the part after `/` has at most 63 characters and starts and ends with a letter or digit; shorten the name")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn map(text: &str) -> Result<String, Code> {
        let name = Name::new(text).map_err(|_| Code::InvalidName)?;
        ObjectName::map(&name, Span::DETACHED, "tier").map(|name| name.0).map_err(|diagnostic| diagnostic.code)
    }

    #[test]
    fn tier_names_become_lower_case_dns_labels() {
        assert_eq!(map("P0"), Ok("p0".to_owned()));
        assert_eq!(map("gpu_a.b"), Ok("gpu-a-b".to_owned()));
        assert_eq!(map("a_"), Err(Code::KubernetesInvalidName));
    }

    fn exact(text: &str) -> Result<String, Code> {
        let name = Name::new(text).map_err(|_| Code::InvalidName)?;
        ObjectName::exact(&name, Span::DETACHED, "service").map(|name| name.0).map_err(|diagnostic| diagnostic.code)
    }

    #[test]
    fn exact_names_are_dns_labels_as_written() {
        assert_eq!(exact("x86-to-riscv-accept-p99-latency"), Ok("x86-to-riscv-accept-p99-latency".to_owned()));
        assert_eq!(exact("Upper"), Err(Code::KubernetesInvalidName));
        assert_eq!(exact("under_score"), Err(Code::KubernetesInvalidName));
        assert_eq!(exact("trailing-"), Err(Code::KubernetesInvalidName));
        assert_eq!(exact("llm.serve"), Err(Code::KubernetesInvalidName));
        assert_eq!(exact(&"a".repeat(63)).map(|name| name.len()), Ok(63));
        assert_eq!(
            ObjectName::fixed(&"a".repeat(64), Span::DETACHED).map_err(|diagnostic| diagnostic.code),
            Err(Code::KubernetesInvalidName)
        );
    }

    #[test]
    fn suffixes_keep_names_within_63_characters() {
        let long = ObjectName("a".repeat(60));
        assert!(long.join("1000", Span::DETACHED, "tier").is_err());
        assert_eq!(ObjectName("p0".into()).join("1000", Span::DETACHED, "tier").map(|name| name.0), Ok("p0-1000".to_owned()));
    }

    #[test]
    fn pool_keys_are_checked() {
        let keys = PlacidKeys::new("placid.dev", Span::DETACHED);
        assert_eq!(
            keys.pool(&ObjectName("nvl-a".into()), Span::DETACHED).map(|key| key.as_str().to_owned()),
            Ok("placid.dev/pool-nvl-a".into())
        );
        let long = ObjectName("a".repeat(60));
        assert_eq!(keys.pool(&long, Span::DETACHED).map_err(|diagnostic| diagnostic.code), Err(Code::KubernetesInvalidLabel));
    }
}
