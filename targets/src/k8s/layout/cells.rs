//! The cells of the inventory ([`placid_lang::model::cells`], the language's partition) as
//! ResourceFlavors: Kueue counts quota per flavor and treats flavors as separate capacity, so
//! placid emits one flavor per cell, never one per pool. This module names the cells and sums
//! what quotas cover; which nodes a cell holds, and in which order a pool lists its cells (the
//! flavor order of every ClusterQueue), is the language's.
//!
//! Invariants: names are Kubernetes names and distinct, or the build fails at the pool that
//! would give a cell its name.

use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic};
use placid_lang::model::cells::Cell as Group;
use placid_lang::model::{Model, NodeId, PoolId};

use super::PoolLayout;
use super::resources::{Resources, node_resources};
use crate::k8s::names::ObjectName;

/// One cell ([`placid_lang::model::cells`]) as a ResourceFlavor.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The flavor name, also the value of the cell label on its nodes.
    pub name: ObjectName,
    /// CPU, memory and GPUs of all member nodes.
    pub resources: Resources,
    /// Its nodes, pools, fence, capacity kind and price.
    pub group: Group,
}

/// The partition of the inventory into cells, named.
#[derive(Clone, Debug, Default)]
pub struct Cells {
    /// In cost order.
    pub cells: Vec<Cell>,
    /// The partition itself ([`Model::cells`]), which says which cell holds a node and which
    /// cells a pool reaches.
    pub partition: placid_lang::model::cells::Cells,
}

impl Cells {
    /// Partitions `model`'s nodes; `pools` gives the pools' flavor names, from which cells
    /// are named. Fails when a cell name cannot be a Kubernetes name or two cells would share
    /// one.
    pub fn new(model: &Model, pools: &[PoolLayout]) -> Result<Cells, Diagnostic> {
        let partition = model.cells();
        let names = names(model, pools, &partition)?;
        let cells = partition
            .cells
            .iter()
            .zip(names)
            .map(|(group, name)| {
                let resources = group.nodes.iter().fold(Resources::default(), |sum, node| sum.plus(node_resources(model, *node)));
                Cell { name, resources, group: group.clone() }
            })
            .collect();
        Ok(Cells { cells, partition })
    }

    /// The cells of `pool`, in cost order.
    pub fn of_pool(&self, pool: PoolId) -> impl Iterator<Item = (usize, &Cell)> {
        self.partition.of_pool[pool.index()].iter().map(|index| (*index, &self.cells[*index]))
    }

    /// The index of the cell that holds `node`, `None` when no pool reaches it.
    pub fn of_node(&self, node: NodeId) -> Option<usize> {
        self.partition.of_node[node.index()]
    }
}

/// Names each cell after its narrowest pool (fewest nodes, then declaration order), which
/// reads as what the cell is: `nvl-b`. When that pool spans several cells the capacity kind is
/// added (`x86-on-demand`), and when that still leaves two alike, their position in cost order
/// (`x86-on-demand-2`). A name that is still taken, or too long, is refused at the pool.
fn names(model: &Model, pools: &[PoolLayout], partition: &placid_lang::model::cells::Cells) -> Result<Vec<ObjectName>, Diagnostic> {
    let candidates: Vec<(PoolId, String)> = partition
        .cells
        .iter()
        .map(|group| {
            // Every cell is reached by at least one pool (nodes no pool reaches are in none).
            let narrowest = group
                .pools
                .iter()
                .copied()
                .min_by_key(|pool| (model.pool(*pool).nodes.len(), pool.index()))
                .unwrap_or_else(|| PoolId::from_index(0));
            let base = pools[narrowest.index()].flavor.as_str();
            let name = if partition.of_pool[narrowest.index()].len() > 1 {
                format!("{base}-{}", group.capacity.as_str())
            } else {
                base.to_owned()
            };
            (narrowest, name)
        })
        .collect();
    let mut alike: BTreeMap<&str, usize> = BTreeMap::new();
    for (_, name) in &candidates {
        *alike.entry(name.as_str()).or_default() += 1;
    }
    let mut numbered: BTreeMap<&str, usize> = BTreeMap::new();
    let mut taken: BTreeMap<String, PoolId> = BTreeMap::new();
    let mut names = Vec::with_capacity(candidates.len());
    for (pool, name) in &candidates {
        let text = if alike[name.as_str()] > 1 {
            let position = numbered.entry(name.as_str()).or_default();
            *position += 1;
            format!("{name}-{position}")
        } else {
            name.clone()
        };
        let span = model.pool(*pool).span;
        if let Some(other) = taken.insert(text.clone(), *pool) {
            return Err(Diagnostic::error(
                Code::KubernetesNameCollision,
                span,
                format!(
                    "node groups of pools `{}` and `{}` would both become ResourceFlavor `{text}`",
                    model.pool(other).name,
                    model.pool(*pool).name
                ),
            )
            .label("its nodes would get the name of another group")
            .help("rename the pool: placid names each group of interchangeable nodes after its narrowest pool"));
        }
        names.push(ObjectName::fixed(&text, span)?);
    }
    Ok(names)
}
