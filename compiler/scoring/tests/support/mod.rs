//! What the scoring tests and benchmarks share: the example project, compiled through the
//! driver as `placid` compiles it, with its `cost-aware` score loaded; the same project with
//! the openb best-fit score added; and the openb default trace.

// Each test binary and benchmark that includes this module uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use placid_check::Checked;
use placid_driver::build::{Selection, compile};
use placid_driver::world::FsWorld;
use placid_engine::openb::Trace;
use placid_engine::openb::read::{self, TraceFile};
use placid_lang::source::{MemoryWorld, RelPath, Sources};
use placid_scoring::Loaded;

/// The cluster example's `cost-aware` plugin and checked model.
pub fn example() -> Loaded {
    placid_scoring::load(checked_example("cluster"), Some("cost-aware"))
        .unwrap_or_else(|error| panic!("cannot load the example: {error:?}"))
}

/// The checked model of example `name` of policy-examples/.
pub fn checked_example(name: &str) -> Checked {
    let dir = repo().join("policy-examples").join(name);
    let world = FsWorld::new(&dir).unwrap_or_else(|error| panic!("cannot open the example: {error}"));
    let build = compile(&world, &Selection::default());
    assert!(!build.diagnostics.has_errors(), "{:?}", build.diagnostics);
    build.model.into_checked().unwrap_or_else(|| panic!("the example {name} does not check"))
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The cluster example with policy-examples/openb/best-fit.kdl added, its `openb-best-fit`
/// score loaded.
pub fn openb_best_fit() -> Loaded {
    let score = std::fs::read_to_string(repo().join("policy-examples/openb/best-fit.kdl")).expect("the example score");
    example_with(&[("policy/openb-best-fit.kdl", &score)], "openb-best-fit")
}

/// The cluster example with the policy files `extra` (path, text) added, score `score`
/// loaded.
pub fn example_with(extra: &[(&str, &str)], score: &str) -> Loaded {
    let example = repo().join("policy-examples/cluster");
    let mut world = MemoryWorld::new();
    let mut add = |dir: &Path, prefix: &str| {
        for entry in std::fs::read_dir(dir).expect("read the example").filter_map(Result::ok) {
            let path = entry.path();
            if path.extension().is_some_and(|ext| ext == "kdl") {
                let name = path.file_name().expect("a file name").to_string_lossy();
                world.insert(&format!("{prefix}{name}"), std::fs::read_to_string(&path).expect("read"));
            }
        }
    };
    add(&example, "");
    add(&example.join("policy"), "policy/");
    add(&example.join("inventory"), "inventory/");
    for (path, text) in extra {
        world.insert(path, *text);
    }
    let build = compile(&world, &Selection::default());
    assert!(!build.diagnostics.has_errors(), "{:?}", build.diagnostics);
    let model = build.model.into_checked().expect("the project checks");
    placid_scoring::load(model, Some(score)).unwrap_or_else(|error| panic!("cannot load the score: {error:?}"))
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
