//! The JSON of kube-scheduler's extender protocol (`k8s.io/kube-scheduler/extender/v1`).
//! The Go types have no json tags, so keys are the Go field names (`Pod`, `NodeNames`); Go
//! decodes keys case-insensitively, and so do we for the keys we read (serde aliases).
//!
//! Invariant: these types are the wire format only; nothing outside `extender` sees them.
//! Node objects stay borrowed slices of the request body ([`RawValue`]): a parsed
//! `serde_json::Value` costs about 25 times the JSON it came from, and the filter verb only
//! echoes the objects back.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use placid_scoring::kube::KubePod;

/// `ExtenderArgs`, the request of both the filter and the prioritize verb.
#[derive(Debug, Deserialize)]
pub struct ExtenderArgs<'body> {
    /// The pod being scheduled.
    #[serde(rename = "Pod", alias = "pod")]
    pub pod: KubePod,
    /// Full Node objects, when the extender is not `nodeCacheCapable`.
    #[serde(rename = "Nodes", alias = "nodes", default, borrow)]
    pub nodes: Option<NodeList<'body>>,
    /// Node names, when the extender is `nodeCacheCapable`.
    #[serde(rename = "NodeNames", alias = "nodenames", alias = "nodeNames", default)]
    pub node_names: Option<Vec<String>>,
}

impl ExtenderArgs<'_> {
    /// How many nodes the request lists, by name or as objects.
    pub fn node_count(&self) -> usize {
        match (&self.node_names, &self.nodes) {
            (Some(names), _) => names.len(),
            (None, Some(nodes)) => nodes.items.len(),
            (None, None) => 0,
        }
    }
}

/// A `v1.NodeList`; items are kept as raw JSON so the filter verb can echo them back.
#[derive(Debug, Deserialize)]
pub struct NodeList<'body> {
    /// The nodes.
    #[serde(default, borrow)]
    pub items: Vec<&'body RawValue>,
}

/// `ExtenderFilterResult`.
#[derive(Debug, Default, Serialize)]
pub struct FilterResult<'body> {
    /// Passing nodes as objects (only when the request carried objects).
    #[serde(rename = "Nodes")]
    pub nodes: Option<OutNodeList<'body>>,
    /// Passing node names (only when the request carried names).
    #[serde(rename = "NodeNames")]
    pub node_names: Option<Vec<String>>,
    /// Nodes that failed, with the reason; preemption might help.
    #[serde(rename = "FailedNodes")]
    pub failed_nodes: BTreeMap<String, String>,
    /// Nodes that failed where preemption cannot help.
    #[serde(rename = "FailedAndUnresolvableNodes")]
    pub failed_and_unresolvable: BTreeMap<String, String>,
    /// A non-empty error fails the scheduling attempt (the pod is retried).
    #[serde(rename = "Error")]
    pub error: String,
}

/// A `v1.NodeList` to send back.
#[derive(Debug, Serialize)]
pub struct OutNodeList<'body> {
    /// The nodes, as received.
    pub items: Vec<&'body RawValue>,
}

/// One entry of a `HostPriorityList`.
#[derive(Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct HostPriority {
    /// The node's name.
    #[serde(rename = "Host")]
    pub host: String,
    /// 0..=10.
    #[serde(rename = "Score")]
    pub score: i64,
}

/// The body of every answer that is not 200 (kube-scheduler reads only the status; this is for
/// the people reading logs or using curl).
#[derive(Debug, Serialize)]
pub struct ErrorBody {
    /// What went wrong, in one sentence.
    pub error: String,
    /// The diagnostic code (`placid::E067`), when the refusal has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    /// What to do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub help: Option<&'static str>,
}
