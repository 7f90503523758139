//! The cells of an inventory and the GPUs a tier's reservations hold in each: the language's
//! rule, which the Kubernetes quotas split (`targets/src/k8s/layout/quota.rs`).

use placid_lang::model::{CapacityKind, Model, PoolId};
use placid_lang::source::MemoryWorld;

/// Nodes `a`..`d` of 4 GPUs: `a` and `b` at $2 a GPU-hour, `c` at $1, `d` spot at $1; racks
/// `r1` (`a`, `c`) and `r2` (`b`, `d`).
const NODES: &str = "\
node \"a\" arch=\"x86_64\" rack=\"r1\" { cost gpu-hour=(usd)2; gpu 0 model=\"H200\"; gpu 1 model=\"H200\"; gpu 2 model=\"H200\"; gpu 3 model=\"H200\" }
node \"b\" arch=\"x86_64\" rack=\"r2\" { cost gpu-hour=(usd)2; gpu 0 model=\"H200\"; gpu 1 model=\"H200\"; gpu 2 model=\"H200\"; gpu 3 model=\"H200\" }
node \"c\" arch=\"x86_64\" rack=\"r1\" { cost gpu-hour=(usd)1; gpu 0 model=\"H200\"; gpu 1 model=\"H200\"; gpu 2 model=\"H200\"; gpu 3 model=\"H200\" }
node \"d\" arch=\"x86_64\" rack=\"r2\" capacity=\"spot\" { cost gpu-hour=(usd)1; gpu 0 model=\"H200\"; gpu 1 model=\"H200\"; gpu 2 model=\"H200\"; gpu 3 model=\"H200\" }
";

fn load(policy: &str) -> Model {
    let mut world = MemoryWorld::new();
    world.insert("placid.kdl", "project \"p\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n");
    world.insert("nodes.kdl", NODES);
    world.insert("policy.kdl", policy);
    let compilation = placid_lang::load(&world);
    let errors: Vec<_> =
        compilation.diagnostics.iter().filter(|diagnostic| diagnostic.severity == placid_lang::diag::Severity::Error).collect();
    assert!(errors.is_empty(), "{errors:?}");
    compilation.model
}

/// Each cell as its node names.
fn members(model: &Model) -> Vec<Vec<String>> {
    model.cells().cells.iter().map(|cell| cell.nodes.iter().map(|node| model.node(*node).name.to_string()).collect()).collect()
}

#[test]
fn nodes_reached_by_the_same_pools_at_one_price_and_kind_share_a_cell_cheapest_first() {
    let model = load("pool \"all\" { select arch=\"x86_64\" }\npool \"r1\" { select rack=\"r1\" }\n");
    // `c` ($1, on-demand) before `d` ($1, spot) before `a` and `b` ($2); `a` is in `r1` too.
    assert_eq!(members(&model), [vec!["c"], vec!["d"], vec!["a"], vec!["b"]]);
    let cells = model.cells();
    assert_eq!(cells.cells[1].capacity, CapacityKind::Spot);
    let r1: Vec<usize> = cells.of_pool(PoolId::from_index(1)).map(|(index, _)| index).collect();
    assert_eq!(r1, [0, 2], "a pool lists its cells in cost order");
    assert!(cells.of_node.iter().all(Option::is_some), "every node some pool reaches is in a cell");
}

#[test]
fn a_fenced_pool_holds_its_nodes_alone_and_reservations_fill_its_cheapest_cells_first() {
    let model = load(
        "pool \"all\" { select arch=\"x86_64\" }\npool \"r1\" { select rack=\"r1\" }\n\
         tier \"P0\" { priority 100; preemption \"never\"; reserve pool=\"r1\" gpus=6 }\n",
    );
    let cells = model.cells();
    // `r1` is fenced: `all` does not reach `a` and `c`, so they are cells of `r1` alone.
    let r1 = PoolId::from_index(1);
    let fenced: Vec<usize> = cells.of_pool(r1).map(|(index, _)| index).collect();
    assert!(fenced.iter().all(|index| cells.cells[*index].pools == [r1] && cells.cells[*index].fenced == Some(r1)));
    // Six GPUs: the four of `c` ($1) first, then two of `a` ($2).
    let reserved = cells.reserved_gpus(&model);
    let by_node: Vec<(String, u64)> =
        fenced.iter().map(|index| (model.node(cells.cells[*index].nodes[0]).name.to_string(), reserved[0][*index])).collect();
    assert_eq!(by_node, [("c".to_owned(), 4), ("a".to_owned(), 2)]);
    assert_eq!(reserved[0].iter().sum::<u64>(), 6);
}
