//! The cells of the inventory: the groups of nodes that the pools' selectors, the capacity
//! kinds, the prices and the reservations induce. Kueue counts quota per ResourceFlavor and
//! treats flavors as separate capacity, so placid emits one flavor per cell, never one per
//! pool: pools overlap, cells do not, and a pool is the ordered list of its cells.
//!
//! Invariants: every node that some pool reaches (`model/shares.rs`: a node of a fenced pool
//! is reached only through that pool) is in exactly one cell, and nodes no pool reaches are in
//! none; all nodes of a cell are reached by the same pools and share one capacity kind and
//! one GPU-hour price; cells are in cost order (cheapest first), and each pool lists its cells
//! in that order, which is the flavor order of every ClusterQueue.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic};
use placid_lang::model::{CapacityKind, Model, NodeId, PoolId};
use placid_lang::units::Money;

use super::PoolLayout;
use super::resources::{Resources, node_resources};
use crate::k8s::names::ObjectName;

/// One cell: a ResourceFlavor.
#[derive(Clone, Debug)]
pub struct Cell {
    /// The flavor name, also the value of the cell label on its nodes.
    pub name: ObjectName,
    /// Member nodes, in inventory order.
    pub nodes: Vec<NodeId>,
    /// The pools that reach the cell, in declaration order.
    pub pools: Vec<PoolId>,
    /// The fenced pool that holds the cell, when a tier reserves GPUs there.
    pub fenced: Option<PoolId>,
    /// How the capacity is bought.
    pub capacity: CapacityKind,
    /// The price of one GPU-hour, when the inventory gives one.
    pub price: Option<Money>,
    /// CPU, memory and GPUs of all member nodes.
    pub resources: Resources,
}

/// The partition of the inventory into cells.
#[derive(Clone, Debug, Default)]
pub struct Cells {
    /// In cost order.
    pub cells: Vec<Cell>,
    /// By [`NodeId`]: the index of the node's cell, `None` when no pool reaches the node.
    pub of_node: Vec<Option<usize>>,
    /// By [`PoolId`]: the indices of the pool's cells, in cost order.
    pub of_pool: Vec<Vec<usize>>,
}

/// What makes two nodes interchangeable for quota: the pools that reach them, their capacity
/// kind and their price.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Signature {
    pools: Vec<PoolId>,
    capacity: CapacityKind,
    price: Option<Money>,
}

impl Cells {
    /// Partitions `model`'s nodes; `pools` gives the pools' flavor names, from which cells
    /// are named. Fails when a cell name cannot be a Kubernetes name or two cells would share
    /// one.
    pub fn new(model: &Model, pools: &[PoolLayout]) -> Result<Cells, Diagnostic> {
        let fences = model.fences();
        let mut reaching: Vec<Vec<PoolId>> = vec![Vec::new(); model.nodes.len()];
        for index in 0..model.pools.len() {
            let pool = PoolId::from_index(index);
            for node in &model.pool(pool).nodes {
                if fences.reaches(pool, *node) {
                    reaching[node.index()].push(pool);
                }
            }
        }
        let mut groups: BTreeMap<Signature, Vec<NodeId>> = BTreeMap::new();
        for (index, pools) in reaching.into_iter().enumerate() {
            if pools.is_empty() {
                continue;
            }
            let node = &model.nodes[index];
            let signature = Signature { pools, capacity: node.capacity, price: node.cost_per_gpu_hour };
            groups.entry(signature).or_default().push(NodeId::from_index(index));
        }
        let mut unnamed: Vec<(Signature, Vec<NodeId>)> = groups.into_iter().collect();
        unnamed.sort_by(|(left, left_nodes), (right, right_nodes)| cost_order(left, right).then(left_nodes[0].cmp(&right_nodes[0])));

        let mut of_pool: Vec<Vec<usize>> = vec![Vec::new(); model.pools.len()];
        for (cell, (signature, _)) in unnamed.iter().enumerate() {
            for pool in &signature.pools {
                of_pool[pool.index()].push(cell);
            }
        }
        let names = names(model, pools, &unnamed, &of_pool)?;
        let mut cells = Vec::with_capacity(unnamed.len());
        let mut of_node = vec![None; model.nodes.len()];
        for (index, ((signature, nodes), name)) in unnamed.into_iter().zip(names).enumerate() {
            let resources = nodes.iter().fold(Resources::default(), |sum, node| sum.plus(node_resources(model, *node)));
            for node in &nodes {
                of_node[node.index()] = Some(index);
            }
            let fenced = signature.pools.iter().copied().find(|pool| model.is_fenced(*pool));
            cells.push(Cell {
                name,
                nodes,
                pools: signature.pools,
                fenced,
                capacity: signature.capacity,
                price: signature.price,
                resources,
            });
        }
        Ok(Cells { cells, of_node, of_pool })
    }

    /// The cells of `pool`, in cost order.
    pub fn of_pool(&self, pool: PoolId) -> impl Iterator<Item = (usize, &Cell)> {
        self.of_pool[pool.index()].iter().map(|index| (*index, &self.cells[*index]))
    }
}

/// Names each cell after its narrowest pool (fewest nodes, then declaration order), which
/// reads as what the cell is: `nvl-b`. When that pool spans several cells the capacity kind is
/// added (`x86-on-demand`), and when that still leaves two alike, their position in cost order
/// (`x86-on-demand-2`). A name that is still taken, or too long, is refused at the pool.
fn names(
    model: &Model,
    pools: &[PoolLayout],
    cells: &[(Signature, Vec<NodeId>)],
    of_pool: &[Vec<usize>],
) -> Result<Vec<ObjectName>, Diagnostic> {
    let candidates: Vec<(PoolId, String)> = cells
        .iter()
        .map(|(signature, _)| {
            // Every cell is reached by at least one pool (nodes no pool reaches are in none).
            let narrowest = signature
                .pools
                .iter()
                .copied()
                .min_by_key(|pool| (model.pool(*pool).nodes.len(), pool.index()))
                .unwrap_or_else(|| PoolId::from_index(0));
            let base = pools[narrowest.index()].flavor.as_str();
            let name =
                if of_pool[narrowest.index()].len() > 1 { format!("{base}-{}", signature.capacity.as_str()) } else { base.to_owned() };
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

/// Cheapest GPU-hour first; a cell without a price after every priced one (its cost is
/// unknown, so it is not preferred). Equal prices go to the capacity kind: reserved capacity
/// is paid around the clock, spot capacity may be reclaimed, so reserved, on-demand, spot.
/// The caller breaks what is left by the cell's first node in inventory order.
fn cost_order(left: &Signature, right: &Signature) -> Ordering {
    let price = |signature: &Signature| signature.price.map_or((1, 0), |money| (0, money.minor));
    let kind = |signature: &Signature| CapacityKind::ALL.iter().position(|kind| *kind == signature.capacity);
    price(left).cmp(&price(right)).then(kind(left).cmp(&kind(right)))
}
