//! Totals that targets add up without re-checking: the host memory of the whole inventory
//! (Kueue's flavor quotas sum it per pool) and each GPU's NVLink bandwidth over its links
//! (the bandwidth a job can count on, `Node::nvlink_bandwidth`). Any subset of a total that
//! fits also fits, so one bound on the whole guarantees every per-pool sum.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::Model;

use super::total_within;

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    let memory = model.nodes.iter().filter_map(|node| node.memory.map(|bytes| (u128::from(bytes.0), node.span)));
    if let Err(span) = total_within(memory, u128::from(u64::MAX)) {
        diagnostics.push(
            Diagnostic::error(Code::ValueOverflow, span, "the host memory of the inventory adds up past 16 EiB")
                .label("this node's memory makes the total overflow")
                .help("check the node's `memory` for a wrong unit or extra digits"),
        );
    }
    for gpu in model.nodes.iter().flat_map(|node| &node.gpus) {
        let links = gpu.links.iter().map(|link| (u128::from(link.bandwidth.bits_per_second), link.span));
        if let Err(span) = total_within(links, u128::from(u64::MAX)) {
            diagnostics.push(
                Diagnostic::error(Code::ValueOverflow, span, format!("the NVLink bandwidth of GPU {} adds up past 18 Eb/s", gpu.index))
                    .label("this link makes the GPU's total overflow")
                    .help("check the link's `bandwidth` for a wrong unit or extra digits"),
            );
        }
    }
}
