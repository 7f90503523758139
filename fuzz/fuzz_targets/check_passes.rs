//! Fuzzes the whole front end a policy goes through before any target runs: parsing,
//! lowering and every checker pass (capacity, preemption, budgets, topology, plans,
//! migrations). The `check` target stops after lowering; this one reaches the passes that do
//! arithmetic over user numbers. Nothing may panic, whatever the bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use placid_lang::source::MemoryWorld;

/// An inventory with two NVLink domains, prices and MIG, so pools, reservations, budgets and
/// plans written by the fuzzer have something real to be checked against.
const INVENTORY: &str = r#"
node "a1" arch="riscv64" rack="r1" chassis="c1" nvlink-domain="d1" capacity="reserved" {
    cpu harts=64
    memory "512GiB"
    cost gpu-hour=(usd)3.10
    gpu 0 model="H200" memory="141GiB" { nvlink peer=1 links=18 gbps=900 }
    gpu 1 model="H200" memory="141GiB" mig="enabled"
}
node "b1" arch="x86_64" rack="r2" capacity="spot" {
    cpu harts=32
    cost gpu-hour=(usd)1.20
    gpu 0 model="L40S"
}
"#;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", "project \"fuzz\"\ninclude \"p/*.kdl\"\ninventory \"i/*.kdl\"\ntarget \"slurm\" version=\"22.05\" cluster=\"c\"\n");
    world.insert("p/policy.kdl", text.into_owned());
    world.insert("i/nodes.kdl", INVENTORY.to_owned());
    let compilation = placid_lang::load(&world);
    let _ = placid_check::check(compilation.model, compilation.diagnostics);
});
