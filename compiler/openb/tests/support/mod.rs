//! What the openb tests and benchmarks share: the cluster example with the openb best-fit
//! score added (the models come from the scoring crate's test support) and the openb default
//! trace from ../shared.

// Each test binary and benchmark that includes this module uses part of it.
#![allow(dead_code)]

use placid_lang::source::{RelPath, Sources};
use placid_openb::Trace;
use placid_openb::read::{self, TraceFile};
use placid_scoring::Loaded;

#[path = "../../../scoring/tests/support/mod.rs"]
mod models;
pub use models::*;

/// The cluster example with policy-examples/openb/best-fit.kdl added, its `openb-best-fit`
/// score loaded.
pub fn openb_best_fit() -> Loaded {
    let score = std::fs::read_to_string(repo().join("policy-examples/openb/best-fit.kdl")).expect("the example score");
    example_with(&[("policy/openb-best-fit.kdl", &score)], "openb-best-fit")
}

/// The openb default trace from ../shared/traces, or `None` when it is absent (an error
/// under CI=true).
pub fn openb_default_trace() -> Option<Trace> {
    let dir = repo().join("../shared/traces/openb");
    let (Ok(nodes), Ok(pods)) =
        (std::fs::read(dir.join("openb_node_list_gpu_node.csv")), std::fs::read(dir.join("openb_pod_list_default.csv")))
    else {
        assert!(std::env::var("CI").as_deref() != Ok("true"), "CI=true but the openb trace is missing at {}", dir.display());
        return None;
    };
    let path = |name: &str| RelPath::new(name).expect("a relative name");
    let (trace, diagnostics) = read::read(
        &mut Sources::new(),
        TraceFile { path: path("nodes.csv"), bytes: &nodes },
        TraceFile { path: path("pods.csv"), bytes: &pods },
    );
    assert!(diagnostics.is_empty(), "{diagnostics:?}");
    trace
}
