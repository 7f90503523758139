//! Models for the engine's tests and benchmarks: a bundled example read from
//! policy-examples/, and any inventory with any policy.

#![allow(dead_code)] // Each test target uses part of it.

use std::path::Path;

use placid_lang::model::Model;
use placid_lang::source::MemoryWorld;

/// The model of example `name` (every `.kdl` file but the broken variants).
pub fn example(name: &str) -> Model {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples").join(name);
    let mut world = MemoryWorld::new();
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).unwrap_or_else(|error| panic!("{}: {error}", dir.display())).flatten() {
            let path = entry.path();
            if path.is_dir() && entry.file_name() != "broken" {
                stack.push(path);
            } else if path.extension().is_some_and(|extension| extension == "kdl") {
                let relative = path.strip_prefix(&root).unwrap_or(&path).to_string_lossy().replace('\\', "/");
                world.insert(&relative, std::fs::read_to_string(&path).unwrap_or_default());
            }
        }
    }
    let compilation = placid_lang::load(&world);
    assert!(!compilation.diagnostics.has_errors(), "{name}: {:?}", compilation.diagnostics);
    compilation.model
}

/// The model of `inventory` and `policy`, which must lower without errors.
pub fn load(inventory: &str, policy: &str) -> Model {
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", "project \"p\" currency=\"usd\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
    world.insert("nodes.kdl", inventory);
    world.insert("policy.kdl", policy);
    let compilation = placid_lang::load(&world);
    assert!(!compilation.diagnostics.has_errors(), "{:?}", compilation.diagnostics);
    compilation.model
}
