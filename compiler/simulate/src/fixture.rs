//! The small policy the unit tests replay.

use placid_lang::model::Model;
use placid_lang::source::MemoryWorld;

/// A two-team policy on one 8-GPU node.
pub fn model() -> Model {
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", "project \"p\" currency=\"usd\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
    let gpus: String = (0..8).map(|index| format!("    gpu {index} model=\"H200\"\n")).collect();
    world.insert("nodes.kdl", format!("node \"n1\" arch=\"x86_64\" {{\n    cost gpu-hour=(usd)2\n{gpus}}}\n"));
    world.insert(
        "policy.kdl",
        "pool \"all\" { select arch=\"x86_64\" }\n\
         tier \"P1\" { priority 500; preemption \"never\"; }\n\
         cost-center \"cc\" { budget daily=(usd)100 }\n\
         team \"vision\" { share 50; cost-center \"cc\"; tiers \"P1\"; }\n\
         team \"nlp\" { share 50; cost-center \"cc\"; tiers \"P1\"; }\n",
    );
    let compilation = placid_lang::load(&world);
    assert!(!compilation.diagnostics.has_errors(), "{:?}", compilation.diagnostics);
    compilation.model
}
