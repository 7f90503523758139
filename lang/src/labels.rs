//! The one spelling of the labels placid puts on Kubernetes objects and reads back: the label
//! prefix, a key under it, a policy name as a label value, and the Prometheus label
//! kube-state-metrics turns a pod label into. The workload templates (which set the labels)
//! and the extender, the recording rules, the dashboards and their promtool tests (which read
//! them) all call these, so a project with another prefix or other tier names cannot make
//! the producer and a consumer disagree.

use crate::model::{KubernetesSettings, Project};
use crate::name::Name;

/// The prefix of every label and taint placid writes: the Kubernetes target's `label-prefix`,
/// or the default of a project without one (its Wasm plugins still say which labels a cluster
/// would hold).
pub fn prefix(project: &Project) -> &str {
    project.kubernetes.as_ref().map_or(KubernetesSettings::DEFAULT_LABEL_PREFIX, |settings| settings.label_prefix.value.as_str())
}

/// `<prefix>/<name>` (`placid.dev/tier`): a label key under the prefix.
pub fn key(prefix: &str, name: &str) -> String {
    format!("{prefix}/{name}")
}

/// A policy name as a Kubernetes object name or label value: lower case, with `_` and `.` as
/// `-` (tier `P0` is `p0`). Whether the result is a valid name is the target's check.
pub fn value(name: &Name) -> String {
    name.as_str().chars().map(|character| if matches!(character, '_' | '.') { '-' } else { character.to_ascii_lowercase() }).collect()
}

/// The Prometheus label kube-state-metrics gives pod label `key` in `kube_pod_labels`:
/// `label_` and the key with every character outside `[a-zA-Z0-9_]` as `_`
/// (`placid.dev/tier` is `label_placid_dev_tier`).
pub fn metric_label(key: &str) -> String {
    let sanitized: String = key.chars().map(|character| if character.is_ascii_alphanumeric() { character } else { '_' }).collect();
    format!("label_{sanitized}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_spelled_once() {
        assert_eq!(key("acme.io", "tier"), "acme.io/tier");
        assert_eq!(metric_label(&key("ml.acme-corp.io", "tier")), "label_ml_acme_corp_io_tier");
        let name = Name::new("Gold_tier.A").expect("a name");
        assert_eq!(value(&name), "gold-tier-a");
    }
}
