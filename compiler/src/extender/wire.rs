//! The JSON of kube-scheduler's extender protocol (`k8s.io/kube-scheduler/extender/v1`).
//! The Go types have no json tags, so keys are the Go field names (`Pod`, `NodeNames`); Go
//! decodes keys case-insensitively, and so do we for the keys we read (serde aliases).
//!
//! Invariant: these types are the wire format only; nothing outside `extender` sees them.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::scoring::kube::KubePod;

/// `ExtenderArgs`, the request of both the filter and the prioritize verb.
#[derive(Debug, Deserialize)]
pub struct ExtenderArgs {
    /// The pod being scheduled.
    #[serde(rename = "Pod", alias = "pod")]
    pub pod: KubePod,
    /// Full Node objects, when the extender is not `nodeCacheCapable`.
    #[serde(rename = "Nodes", alias = "nodes", default)]
    pub nodes: Option<NodeList>,
    /// Node names, when the extender is `nodeCacheCapable`.
    #[serde(rename = "NodeNames", alias = "nodenames", alias = "nodeNames", default)]
    pub node_names: Option<Vec<String>>,
}

/// A `v1.NodeList`; items are kept as raw JSON so the filter verb can echo them back.
#[derive(Debug, Deserialize)]
pub struct NodeList {
    /// The nodes.
    #[serde(default)]
    pub items: Vec<serde_json::Value>,
}

/// `ExtenderFilterResult`.
#[derive(Debug, Default, Serialize)]
pub struct FilterResult {
    /// Passing nodes as objects (only when the request carried objects).
    #[serde(rename = "Nodes")]
    pub nodes: Option<OutNodeList>,
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
pub struct OutNodeList {
    /// The nodes, as received.
    pub items: Vec<serde_json::Value>,
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
