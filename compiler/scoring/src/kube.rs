//! Features and job parameters from Kubernetes objects, as the extender receives them when
//! `nodeCacheCapable` is false: Node labels and allocatable resources, Pod labels, node
//! selector and container resources. Which field feeds which value is read from the
//! plugin's `placid.meta`: each field's [`Source`] (`label:<key>`, `allocatable:<resource>`,
//! `pod.request:...`).
//!
//! Invariant: a value that is absent or does not parse becomes NaN (missing), which the
//! expression language defines, so a malformed label cannot make a request fail.

use std::collections::BTreeMap;

use placid_lang::expr::{Entry, JobParam, NodeFeature, Type};
use placid_targets::wasm::meta::{Field, Source};
use serde::Deserialize;

use super::Codes;
use super::job::category_value;

/// The parts of a `v1.Node` the extender reads.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct KubeNode {
    /// `metadata`.
    #[serde(default)]
    pub metadata: Metadata,
    /// `status`.
    #[serde(default)]
    pub status: NodeStatus,
}

/// `metadata` of an object.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Metadata {
    /// `metadata.name`.
    #[serde(default)]
    pub name: String,
    /// `metadata.labels`.
    #[serde(default)]
    pub labels: BTreeMap<String, String>,
}

/// `status` of a Node.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct NodeStatus {
    /// `status.allocatable`: resource name to quantity.
    #[serde(default)]
    pub allocatable: BTreeMap<String, String>,
}

/// The parts of a `v1.Pod` the extender reads.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct KubePod {
    /// `metadata`.
    #[serde(default)]
    pub metadata: Metadata,
    /// `spec`.
    #[serde(default)]
    pub spec: PodSpec,
}

/// `spec` of a Pod.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodSpec {
    /// `spec.nodeSelector`.
    #[serde(default)]
    pub node_selector: BTreeMap<String, String>,
    /// `spec.containers`.
    #[serde(default)]
    pub containers: Vec<Container>,
}

/// A container's resources.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Container {
    /// `resources`.
    #[serde(default)]
    pub resources: Resources,
}

/// `requests` and `limits`.
#[derive(Clone, Debug, Default, Deserialize)]
pub struct Resources {
    /// `resources.requests`.
    #[serde(default)]
    pub requests: BTreeMap<String, String>,
    /// `resources.limits`.
    #[serde(default)]
    pub limits: BTreeMap<String, String>,
}

/// A Kubernetes quantity (`8`, `500m`, `512Gi`, `1.5G`, `1e3`) as a number.
pub fn quantity(text: &str) -> Option<f64> {
    const SUFFIXES: &[(&str, f64)] = &[
        ("Ki", 1024.0),
        ("Mi", 1048576.0),
        ("Gi", 1073741824.0),
        ("Ti", 1099511627776.0),
        ("Pi", 1125899906842624.0),
        ("Ei", 1152921504606846976.0),
        ("n", 1e-9),
        ("u", 1e-6),
        ("m", 1e-3),
        ("k", 1e3),
        ("M", 1e6),
        ("G", 1e9),
        ("T", 1e12),
        ("P", 1e15),
        ("E", 1e18),
    ];
    let text = text.trim();
    let (number, factor) =
        SUFFIXES.iter().find_map(|(suffix, factor)| text.strip_suffix(suffix).map(|number| (number, *factor))).unwrap_or((text, 1.0));
    let value: f64 = number.parse().ok()?;
    value.is_finite().then_some(value * factor)
}

/// The value of a field given its text in the object (`None` when absent).
fn typed_value<T: Entry>(field: &Field<T>, text: Option<&str>, codes: &mut Codes) -> f64 {
    let Some(text) = text else {
        return f64::NAN;
    };
    match field.name.ty() {
        Type::Number => quantity(text).map_or(f64::NAN, |value| value * field.scale),
        Type::Bool => match text {
            "true" | "1" => 1.0,
            "false" | "0" => 0.0,
            _ => f64::NAN,
        },
        Type::Category(category) => category_value(category, text, codes).unwrap_or(f64::NAN),
    }
}

/// The row of `node` for the plugin's `fields`, appended to `row`.
pub fn node_row(fields: &[Field<NodeFeature>], node: &KubeNode, codes: &mut Codes, row: &mut Vec<f64>) {
    for field in fields {
        let text = match &field.kubernetes {
            Source::Label(key) => node.metadata.labels.get(key),
            Source::Allocatable(resource) => node.status.allocatable.get(resource),
            // A Node has no pod fields: the value is missing. Telemetry is the extender's to
            // fill in (extender/live.rs).
            Source::PodRequest(_) | Source::PodLabel(_) | Source::PodNodeSelector(_) | Source::Telemetry(_) => None,
        };
        row.push(typed_value(field, text.map(String::as_str), codes));
    }
}

/// The parameter block of `pod` for the plugin's `params`.
pub fn pod_params(params: &[Field<JobParam>], pod: &KubePod, codes: &mut Codes) -> Vec<f64> {
    params
        .iter()
        .map(|field| match &field.kubernetes {
            Source::PodRequest(resource) => requested(pod, resource) * field.scale,
            Source::PodLabel(key) => typed_value(field, pod.metadata.labels.get(key).map(String::as_str), codes),
            Source::PodNodeSelector(key) => typed_value(field, pod.spec.node_selector.get(key).map(String::as_str), codes),
            // A Pod has no node fields: the value is missing.
            Source::Label(_) | Source::Allocatable(_) | Source::Telemetry(_) => f64::NAN,
        })
        .collect()
}

/// How much of `resource` the containers of `pod` ask for together. Extended resources such
/// as GPUs are requested through limits; requests, when given, must equal them.
fn requested(pod: &KubePod, resource: &str) -> f64 {
    let per_container = pod.spec.containers.iter().filter_map(|container| {
        let resources = &container.resources;
        resources.limits.get(resource).or_else(|| resources.requests.get(resource)).and_then(|text| quantity(text))
    });
    per_container.sum()
}

#[cfg(test)]
mod tests {
    use super::quantity;

    #[test]
    fn quantities_parse_like_kubernetes() {
        assert_eq!(quantity("8"), Some(8.0));
        assert_eq!(quantity("500m"), Some(0.5));
        assert_eq!(quantity("512Gi"), Some(512.0 * 1073741824.0));
        assert_eq!(quantity("1.5G"), Some(1.5e9));
        assert_eq!(quantity("1e3"), Some(1000.0));
        assert_eq!(quantity("lots"), None);
        assert_eq!(quantity(""), None);
    }
}
