//! `cargo bench -p placid-lang --bench inventory`: reading a 4,096-node inventory (about
//! 4 MB in KDL) in its three ways: KDL through the plain reader (what placid does for
//! machine-written files), KDL through the `kdl` crate's parser (the baseline it replaces, and
//! still the path of anything hand-formatted), and the same nodes in JSON. The goal: KDL
//! within 3× of JSON.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use placid_lang::lower::{InventoryFormat, read_inventory_file};
use placid_lang::source::MemoryWorld;
use placid_lang::span::FileId;

const NODES: usize = 4_096;

/// The cluster example's NVLink inventory, its nodes renamed until there are [`NODES`].
fn kdl_inventory() -> String {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../policy-examples/cluster/inventory/nvl-a.kdl");
    let template = std::fs::read_to_string(path).expect("the cluster example's inventory");
    let per_copy = template.matches("\nnode ").count() + usize::from(template.starts_with("node "));
    (0..NODES / per_copy).map(|copy| template.replace("node \"rv-a-", &format!("node \"c{copy}-rv-a-"))).collect()
}

/// The same nodes in the JSON form, as `placid inventory` prints them.
fn json_inventory(kdl: &str) -> String {
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", "project \"bench\" currency=\"usd\"\ninventory \"nodes.kdl\"\n");
    world.insert("nodes.kdl", kdl);
    let model = placid_lang::load(&world).model;
    assert_eq!(model.nodes.len(), NODES, "the generated inventory must load whole");
    serde_json::to_string(&placid_lang::print::inventory_json(&model)).expect("JSON")
}

fn inventory(c: &mut Criterion) {
    let kdl = kdl_inventory();
    let json = json_inventory(&kdl);
    let file = FileId(0);
    let mut group = c.benchmark_group(format!("inventory of {NODES} nodes ({} KiB KDL, {} KiB JSON)", kdl.len() >> 10, json.len() >> 10));
    group.sample_size(10);
    group.bench_function("kdl, plain reader", |b| {
        b.iter(|| {
            let (entries, diagnostics) = read_inventory_file(file, black_box(&kdl), InventoryFormat::Kdl);
            assert!(entries.len() == NODES && !diagnostics.has_errors());
        })
    });
    group.bench_function("kdl, the kdl crate's parser", |b| b.iter(|| black_box(placid_lang::syntax::parse(file, black_box(&kdl)))));
    group.bench_function("json", |b| {
        b.iter(|| {
            let (entries, diagnostics) = read_inventory_file(file, black_box(&json), InventoryFormat::Json);
            assert!(entries.len() == NODES && !diagnostics.has_errors());
        })
    });
    group.finish();
}

criterion_group!(benches, inventory);
criterion_main!(benches);
