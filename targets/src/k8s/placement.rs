//! Where a class puts a workload's pods on Kubernetes, in one place: the workload templates
//! ([`super::workloads`]) write it on a stage's pods, and a route's mutation
//! ([`super::route_mutation`]) writes the same on a workload routed to the class, so a routed
//! job and a job naming the class directly carry the same constraints.
//!
//! Every part is a map, because a MutatingAdmissionPolicy's ApplyConfiguration merges maps
//! key by key but replaces a list whole: a class's node filter (`lanes`, `min-bisection`) is
//! one `nodeSelector` key, a node label placid writes on exactly the nodes that pass the filter
//! ([`layout::fits`], from the facts the NVLink labels publish), not a node-affinity term the mutation
//! would have to replace (losing the submitter's pool affinity).

use std::collections::BTreeMap;

use placid_lang::diag::Diagnostic;
use placid_lang::expr::JobParam;
use placid_lang::model::{Class, Locality, NvlinkNeed};
use placid_lang::span::Span;

use crate::k8s::layout::{self, Layout};
use crate::k8s::names::ObjectName;
use crate::wasm::meta::Source;
use crate::wasm::sources::param_source;

/// Kueue's TAS annotation: all pods of the pod set in one unit of the level.
const REQUIRED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-required-topology";
/// Kueue's TAS annotation: the pods of the pod set in as few units of the level as can.
const PREFERRED_TOPOLOGY: &str = "kueue.x-k8s.io/podset-preferred-topology";
/// The well-known hostname label, the Topology's finest level.
const HOSTNAME_LABEL: &str = "kubernetes.io/hostname";

/// A class's constraints on a pod, each a map a mutation can merge.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Placement {
    /// Pod labels: the class label and the job parameters the score reads from pods
    /// ([`param_source`], the spelling the extender reads).
    pub labels: BTreeMap<String, String>,
    /// The Kueue Topology Aware Scheduling annotation at the class's locality.
    pub annotations: BTreeMap<String, String>,
    /// The class's node label, where the class filters nodes.
    pub node_selector: BTreeMap<String, String>,
}

/// The placement of a stage's pods of `class` (none: a stage naming no class); `span` is the
/// element the pods come from.
pub fn of_class(layout: &Layout, class: Option<&Class>, span: Span) -> Result<Placement, Diagnostic> {
    let keys = &layout.keys;
    let mut placement = Placement::default();
    if let Some(class) = class {
        let (key, name) = class_label(layout, class, span)?;
        placement.labels.insert(key, name.as_str().to_owned());
        if layout::filters_nodes(class) {
            placement.node_selector.insert(keys.class(&name, class.span)?.as_str().to_owned(), "true".to_owned());
        }
        if let Some((key, level)) = topology(layout, class) {
            placement.annotations.insert(key.to_owned(), level.to_owned());
        }
    }
    for param in JobParam::ALL {
        let Source::PodLabel(key) = param_source(*param, keys.prefix()).from else { continue };
        let value = match (param, class) {
            (JobParam::Comm, Some(class)) => Some(class.comm.as_str().to_owned()),
            (JobParam::NvlinkRequired, class) => Some((class.is_some_and(|class| class.nvlink == NvlinkNeed::Required)).to_string()),
            (JobParam::CommGbps, Some(class)) => class.min_bandwidth.map(|bandwidth| bandwidth.gigabytes_per_second().to_string()),
            // Whole GPUs: the share label is for sharing jobs, which plans do not declare.
            (JobParam::GpuMilli, _) => Some("1000".to_owned()),
            _ => None,
        };
        if let Some(value) = value {
            placement.labels.insert(key, value);
        }
    }
    Ok(placement)
}

/// The class label (`<label-prefix>/class`) of a workload of `class`, as (key, value): on its
/// pods, and on the workload object, where the route policies read it.
pub fn class_label(layout: &Layout, class: &Class, span: Span) -> Result<(String, ObjectName), Diagnostic> {
    Ok((class_key(layout, span)?, ObjectName::map(&class.name, class.span, "class")?))
}

/// The class label's key, for its readers (the route policies) as for [`class_label`].
pub fn class_key(layout: &Layout, span: Span) -> Result<String, Diagnostic> {
    layout.keys.pod("class", span)
}

/// The TAS annotation of `class`'s locality, as (key, Topology level).
fn topology<'a>(layout: &'a Layout, class: &Class) -> Option<(&'static str, &'a str)> {
    Some(match (class.locality, class.nvlink) {
        (Locality::Node, _) => (REQUIRED_TOPOLOGY, HOSTNAME_LABEL),
        (Locality::NvlinkDomain, _) => (REQUIRED_TOPOLOGY, layout.domain_label.as_str()),
        (Locality::Rack, _) => (REQUIRED_TOPOLOGY, layout.rack_label.as_str()),
        // An inventory naming no chassis has no chassis level to require.
        (Locality::Chassis, _) => (REQUIRED_TOPOLOGY, layout.chassis_label.as_ref()?.as_str()),
        (Locality::Any, NvlinkNeed::Preferred) => (PREFERRED_TOPOLOGY, layout.domain_label.as_str()),
        (Locality::Any, _) => return None,
    })
}
