//! What the fuzz targets share: the cluster example's model, with a `telemetry` block, loaded
//! once, for the readers of files checked against a policy (traces, histories, recorded
//! series).

use std::sync::OnceLock;

use placid_lang::checked::Checked;
use placid_lang::model::Model;
use placid_lang::source::MemoryWorld;

/// The `telemetry` block the recorded-series reader needs.
const TELEMETRY: &str = "telemetry half-life=\"1m\" max-age=\"5m\" ttl=\"15s\" {\n    node-query \"n\"\n    domain-query \"d\"\n    throttle domain-nvlink-above=0.85 for=\"2m\" comm=\"high\"\n}\n";

/// The cluster example (policy-examples/cluster) with [`TELEMETRY`], lowered once.
pub fn cluster() -> &'static Model {
    static MODEL: OnceLock<Model> = OnceLock::new();
    MODEL.get_or_init(|| {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../policy-examples/cluster");
        let mut world = MemoryWorld::new();
        for dir in [".", "policy", "inventory"] {
            for entry in std::fs::read_dir(root.join(dir)).into_iter().flatten().flatten() {
                let path = entry.path();
                if path.extension().is_some_and(|extension| extension == "kdl") {
                    let name = format!("{dir}/{}", entry.file_name().to_string_lossy()).trim_start_matches("./").to_owned();
                    world.insert(&name, std::fs::read_to_string(&path).unwrap_or_default());
                }
            }
        }
        world.insert("policy/telemetry.kdl", TELEMETRY.to_owned());
        placid_lang::load(&world).model
    })
}

/// [`cluster`], checked once: the Kueue history maps Workloads through the Kubernetes
/// target's names, which only a checked model has.
pub fn checked_cluster() -> &'static Checked {
    static CHECKED: OnceLock<Checked> = OnceLock::new();
    CHECKED.get_or_init(|| {
        let (verdict, diagnostics) = placid_check::check(cluster().clone(), placid_lang::diag::Diagnostics::new());
        verdict.into_checked().unwrap_or_else(|| panic!("the cluster example does not check: {diagnostics:?}"))
    })
}
