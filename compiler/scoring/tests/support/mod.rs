//! The example projects the scoring tests and benchmarks run, compiled through the driver as
//! `placid` compiles them: the cluster example with its `cost-aware` score loaded, any example
//! checked, and the cluster example with extra policy files. The extender's and the openb
//! simulator's tests include this file too (`#[path]`), so the three crates test the same
//! models.

// Each test binary and benchmark that includes this module uses part of it.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use placid_driver::build::{Selection, compile};
use placid_driver::world::FsWorld;
use placid_lang::checked::Checked;
use placid_lang::model::Model;
use placid_lang::name::Name;
use placid_lang::source::MemoryWorld;
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

/// The workspace root.
pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
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

/// The example model with its nodes repeated to `count` (names `n00000`...).
pub fn scaled(model: &Model, count: usize) -> Model {
    let mut scaled = model.clone();
    scaled.nodes = (0..count)
        .map(|index| {
            let mut node = model.nodes[index % model.nodes.len()].clone();
            node.name = Name::new(&format!("n{index:05}")).unwrap_or_else(|reason| panic!("{reason}"));
            node
        })
        .collect();
    scaled
}
