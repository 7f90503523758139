//! Fuzzes the extender's request parser: any body kube-scheduler (or anyone who can reach the
//! port) sends is `ExtenderArgs` and Node objects, or refused, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placid_extender::wire::ExtenderArgs;
use placid_scoring::kube::KubeNode;

fuzz_target!(|data: &[u8]| {
    let Ok(args) = serde_json::from_slice::<ExtenderArgs<'_>>(data) else { return };
    let _ = args.node_count();
    for item in args.nodes.iter().flat_map(|nodes| &nodes.items) {
        let node: KubeNode = serde_json::from_str(item.get()).unwrap_or_default();
        let _ = node.metadata.name.len();
    }
});
