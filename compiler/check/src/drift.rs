//! Drift between the declared inventory (the project's) and probed node files (placid-probe
//! output): NVLink domain, architecture, GPU count and model, MIG mode and layout, NVLink
//! links. Each difference is a [`Drift`] value, rendered both as a diagnostic pointing at the
//! declaration to fix (with the probed line as secondary label) and as JSON for tools.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Gpu, Mig, Model, Node};
use placid_lang::name::Name;
use placid_lang::span::Span;

/// What differs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum DriftKind {
    /// A probed node is not declared.
    Undeclared,
    /// A declared node has no probe file.
    Unprobed,
    /// The NVLink domain differs.
    Domain,
    /// The CPU architecture differs.
    Arch,
    /// The number of GPUs differs.
    GpuCount,
    /// A GPU's model differs.
    GpuModel,
    /// A GPU's MIG mode or instances differ.
    Mig,
    /// A GPU's NVLink links differ.
    Nvlink,
}

impl DriftKind {
    /// The name in JSON output.
    pub fn as_str(self) -> &'static str {
        match self {
            DriftKind::Undeclared => "undeclared-node",
            DriftKind::Unprobed => "unprobed-node",
            DriftKind::Domain => "nvlink-domain",
            DriftKind::Arch => "arch",
            DriftKind::GpuCount => "gpu-count",
            DriftKind::GpuModel => "gpu-model",
            DriftKind::Mig => "mig",
            DriftKind::Nvlink => "nvlink",
        }
    }

    fn code(self) -> Code {
        match self {
            DriftKind::Undeclared | DriftKind::Unprobed => Code::DriftNodeSet,
            DriftKind::Domain => Code::DriftDomain,
            DriftKind::Arch => Code::DriftArch,
            DriftKind::GpuCount | DriftKind::GpuModel => Code::DriftGpus,
            DriftKind::Mig => Code::DriftMig,
            DriftKind::Nvlink => Code::DriftNvlink,
        }
    }
}

/// One difference between declared and probed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Drift {
    /// The node.
    pub node: Name,
    /// The GPU index, for GPU-level drift.
    pub gpu: Option<u32>,
    /// What differs.
    pub kind: DriftKind,
    /// The declared value, in inventory syntax (`none` when absent).
    pub declared: String,
    /// The probed value.
    pub probed: String,
    /// The declaration to fix (detached for undeclared nodes).
    pub declared_span: Span,
    /// The probed line (detached for unprobed nodes).
    pub probed_span: Span,
}

/// Compares every probed node with its declaration. Nodes only one side has are reported
/// once each; the rest field by field.
pub fn compare(declared: &Model, probed: &Model) -> Vec<Drift> {
    let mut drifts = Vec::new();
    for probed_node in &probed.nodes {
        let Some(declared_node) = declared.node_by_name(probed_node.name.as_str()).map(|id| declared.node(id)) else {
            drifts.push(node_drift(
                probed_node,
                None,
                DriftKind::Undeclared,
                "none".to_owned(),
                "present".to_owned(),
                Span::DETACHED,
                probed_node.span,
            ));
            continue;
        };
        compare_node(declared, declared_node, probed, probed_node, &mut drifts);
    }
    for declared_node in declared.nodes.iter().filter(|node| probed.node_by_name(node.name.as_str()).is_none()) {
        drifts.push(node_drift(
            declared_node,
            None,
            DriftKind::Unprobed,
            "present".to_owned(),
            "no probe file".to_owned(),
            declared_node.span,
            Span::DETACHED,
        ));
    }
    drifts
}

fn node_drift(
    node: &Node,
    gpu: Option<u32>,
    kind: DriftKind,
    declared: String,
    probed: String,
    declared_span: Span,
    probed_span: Span,
) -> Drift {
    Drift { node: node.name.clone(), gpu, kind, declared, probed, declared_span, probed_span }
}

fn compare_node(declared_model: &Model, declared: &Node, probed_model: &Model, probed: &Node, drifts: &mut Vec<Drift>) {
    let mut push = |gpu: Option<u32>, kind: DriftKind, was: String, now: String, declared_span: Span, probed_span: Span| {
        if was != now {
            drifts.push(node_drift(declared, gpu, kind, was, now, declared_span, probed_span));
        }
    };
    let domain_of = |model: &Model, node: &Node| node.domain.map_or("none".to_owned(), |domain| model.domain(domain).name.to_string());
    push(None, DriftKind::Domain, domain_of(declared_model, declared), domain_of(probed_model, probed), declared.span, probed.span);
    push(None, DriftKind::Arch, declared.arch.as_str().to_owned(), probed.arch.as_str().to_owned(), declared.span, probed.span);
    push(None, DriftKind::GpuCount, declared.gpu_count().to_string(), probed.gpu_count().to_string(), declared.span, probed.span);
    for declared_gpu in &declared.gpus {
        let Some(probed_gpu) = probed.gpus.iter().find(|gpu| gpu.index == declared_gpu.index) else {
            continue;
        };
        let index = Some(declared_gpu.index);
        let (declared_span, probed_span) = (declared_gpu.span, probed_gpu.span);
        push(index, DriftKind::GpuModel, declared_gpu.model.to_string(), probed_gpu.model.to_string(), declared_span, probed_span);
        push(index, DriftKind::Mig, mig_text(declared_gpu), mig_text(probed_gpu), declared_span, probed_span);
        push(index, DriftKind::Nvlink, links_text(declared_gpu), links_text(probed_gpu), declared_span, probed_span);
    }
}

/// `disabled`, or `enabled 1g.18gb x3, 3g.71gb x1` (instances only when the file lists any:
/// a declared `mig="enabled"` without instances accepts any layout).
fn mig_text(gpu: &Gpu) -> String {
    match &gpu.mig {
        Mig::Disabled => "disabled".to_owned(),
        Mig::Enabled { instances } => {
            let mut parts: Vec<String> = instances.iter().map(|instance| format!("{} x{}", instance.profile, instance.count)).collect();
            parts.sort();
            if parts.is_empty() { "enabled".to_owned() } else { format!("enabled {}", parts.join(", ")) }
        }
    }
}

/// `peer 1: 6 links 300GB/s; peer 2: ...`, or `none`.
fn links_text(gpu: &Gpu) -> String {
    if gpu.links.is_empty() {
        return "none".to_owned();
    }
    gpu.links.iter().map(|link| format!("peer {}: {} links {}", link.peer, link.links, link.bandwidth)).collect::<Vec<_>>().join("; ")
}

/// The drifts as diagnostics: errors for differences in hardware, warnings for nodes that
/// only one side lists (a probe directory may cover part of the cluster).
pub fn diagnostics(drifts: &[Drift]) -> Diagnostics {
    let mut diagnostics = Diagnostics::new();
    for drift in drifts {
        let subject = match drift.gpu {
            Some(gpu) => format!("node `{}` GPU {gpu}", drift.node),
            None => format!("node `{}`", drift.node),
        };
        let diagnostic = match drift.kind {
            DriftKind::Undeclared => {
                Diagnostic::warning(drift.kind.code(), drift.probed_span, format!("{subject} was probed but is not declared"))
                    .label("probed node")
                    .help("add the node to the inventory (placid inventory merge writes one from probe files)")
            }
            DriftKind::Unprobed => {
                Diagnostic::warning(drift.kind.code(), drift.declared_span, format!("{subject} is declared but has no probe file"))
                    .label("declared node")
                    .help("run placid-probe on the node, or remove it from the inventory if it is gone")
            }
            kind => Diagnostic::error(
                kind.code(),
                drift.declared_span,
                format!("{subject}: {} is `{}` in the inventory but `{}` on the node", kind.as_str(), drift.declared, drift.probed),
            )
            .label("declared here")
            .with_secondary(drift.probed_span, "probed here")
            .help("update the inventory to what the node has, or fix the node"),
        };
        diagnostics.push(diagnostic);
    }
    diagnostics
}

/// The drifts as JSON: `[{node, gpu, field, declared, probed}]`.
pub fn json(drifts: &[Drift]) -> serde_json::Value {
    serde_json::Value::Array(
        drifts
            .iter()
            .map(|drift| {
                serde_json::json!({
                    "node": drift.node.as_str(), "gpu": drift.gpu, "field": drift.kind.as_str(),
                    "declared": drift.declared, "probed": drift.probed,
                })
            })
            .collect(),
    )
}
