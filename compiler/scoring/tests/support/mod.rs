//! What the extender tests and the scoring benchmarks share: the example project, compiled
//! through the driver as `placid` compiles it, with its `cost-aware` score loaded.

use std::path::PathBuf;

use placid_driver::build::{Selection, compile};
use placid_driver::world::FsWorld;
use placid_scoring::Loaded;

/// The cluster example's `cost-aware` plugin and checked model.
pub fn example() -> Loaded {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples/cluster");
    let world = FsWorld::new(&dir).unwrap_or_else(|error| panic!("cannot open the example: {error}"));
    let build = compile(&world, &Selection::default());
    assert!(!build.diagnostics.has_errors(), "{:?}", build.diagnostics);
    let model = build.model.into_checked().unwrap_or_else(|| panic!("the example does not check"));
    placid_scoring::load(model, Some("cost-aware")).unwrap_or_else(|error| panic!("cannot load the example: {error:?}"))
}
