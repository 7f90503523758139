//! The cells of the inventory: the groups of interchangeable nodes that the pools' selectors,
//! the capacity kinds, the prices and the reservations induce, and how many GPUs of each cell a
//! tier's reservations hold. Pools overlap, cells do not, and a pool is the ordered list of
//! its cells. The Kubernetes target emits one ResourceFlavor per cell (Kueue counts quota per
//! flavor and treats flavors as separate capacity) and splits each cell's quota from these
//! reservations; the engine charges a job to the cell Kueue would admit it on, with these
//! figures (docs/semantics.md section 4 says how the cell is chosen and what still differs).
//!
//! Invariants: every node that some pool reaches ([`super::shares`]: a node of a fenced pool is
//! reached only through that pool) is in exactly one cell, and nodes no pool reaches are in
//! none; all nodes of a cell are reached by the same pools and share one capacity kind and one
//! GPU-hour price; cells are in cost order (cheapest first), and each pool lists its cells in
//! that order.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use super::shares::apportion;
use super::{CapacityKind, Model, NodeId, PoolId, TeamId, TierId};
use crate::units::Money;

/// One cell: nodes that are interchangeable for quota.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Cell {
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
    /// The GPUs of all member nodes.
    pub gpus: u64,
}

/// The partition of the inventory into cells.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
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

impl Model {
    /// The cells of this model's inventory.
    pub fn cells(&self) -> Cells {
        let fences = self.fences();
        let mut reaching: Vec<Vec<PoolId>> = vec![Vec::new(); self.nodes.len()];
        for index in 0..self.pools.len() {
            let pool = PoolId::from_index(index);
            for node in fences.reach(pool) {
                reaching[node.index()].push(pool);
            }
        }
        let mut groups: BTreeMap<Signature, Vec<NodeId>> = BTreeMap::new();
        for (index, pools) in reaching.into_iter().enumerate() {
            if pools.is_empty() {
                continue;
            }
            let node = &self.nodes[index];
            let signature = Signature { pools, capacity: node.capacity, price: node.cost_per_gpu_hour };
            groups.entry(signature).or_default().push(NodeId::from_index(index));
        }
        let mut ordered: Vec<(Signature, Vec<NodeId>)> = groups.into_iter().collect();
        ordered.sort_by(|(left, left_nodes), (right, right_nodes)| cost_order(left, right).then(left_nodes[0].cmp(&right_nodes[0])));

        let mut of_pool: Vec<Vec<usize>> = vec![Vec::new(); self.pools.len()];
        let mut of_node = vec![None; self.nodes.len()];
        let mut cells = Vec::with_capacity(ordered.len());
        for (index, (signature, nodes)) in ordered.into_iter().enumerate() {
            for pool in &signature.pools {
                of_pool[pool.index()].push(index);
            }
            for node in &nodes {
                of_node[node.index()] = Some(index);
            }
            let fenced = signature.pools.iter().copied().find(|pool| self.is_fenced(*pool));
            let gpus = nodes.iter().map(|node| u64::from(self.node(*node).gpu_count())).sum();
            cells.push(Cell { nodes, pools: signature.pools, fenced, capacity: signature.capacity, price: signature.price, gpus });
        }
        Cells { cells, of_node, of_pool }
    }
}

impl Cells {
    /// The cells of `pool`, in cost order.
    pub fn of_pool(&self, pool: PoolId) -> impl Iterator<Item = (usize, &Cell)> {
        self.of_pool[pool.index()].iter().map(|index| (*index, &self.cells[*index]))
    }

    /// `[tier][cell]`: the GPUs each tier's reservations hold in each cell. Each reservation
    /// fills its pool's cells cheapest first, in tier and then reservation order, never beyond
    /// what a cell holds: reserved capacity is paid around the clock, so the cheapest serves.
    /// What does not fit (the checker refuses reservations past their pool, E021 and E022) is
    /// held nowhere.
    pub fn reserved_gpus(&self, model: &Model) -> Vec<Vec<u64>> {
        let mut taken = vec![0u64; self.cells.len()];
        let mut gpus = vec![vec![0u64; self.cells.len()]; model.tiers.len()];
        for (tier_index, tier) in model.tiers.iter().enumerate() {
            for reservation in &tier.reservations {
                let mut wanted = u64::from(reservation.gpus);
                for (cell_index, cell) in self.of_pool(reservation.pool) {
                    let take = wanted.min(cell.gpus - taken[cell_index]);
                    taken[cell_index] += take;
                    gpus[tier_index][cell_index] += take;
                    wanted -= take;
                }
            }
        }
        gpus
    }
}

/// The GPU quotas of every cell: what the Kueue queues carry, and what one workload may be
/// admitted with there.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CellGpus {
    /// `[tier][cell]`: reserved ([`Cells::reserved_gpus`]).
    pub reserved: Vec<Vec<u64>>,
    /// `[team][cell]`: guaranteed: what the reservations leave of the cell, split between all
    /// teams by share with the largest remainder.
    pub teams: Vec<Vec<u64>>,
    /// `[cell]`: what the reservations leave, the teams' guarantees together.
    pub unreserved: Vec<u64>,
}

impl Cells {
    /// The GPU quotas of every cell.
    pub fn gpus(&self, model: &Model) -> CellGpus {
        let reserved = self.reserved_gpus(model);
        let shares: Vec<u64> = model.teams.iter().map(|team| u64::from(team.share.value)).collect();
        let mut teams = vec![vec![0u64; self.cells.len()]; model.teams.len()];
        let mut unreserved = Vec::with_capacity(self.cells.len());
        for (index, cell) in self.cells.iter().enumerate() {
            let left = cell.gpus.saturating_sub(reserved.iter().map(|tier| tier[index]).sum());
            for (team, part) in teams.iter_mut().zip(apportion(left, &shares)) {
                team[index] = part;
            }
            unreserved.push(left);
        }
        CellGpus { reserved, teams, unreserved }
    }
}

impl CellGpus {
    /// The most GPUs `team`'s queue may hold in cell `cell`: its guarantee, or what every team
    /// holds there when it has a backfill tier (it borrows the others' idle guarantees).
    pub fn team_limit(&self, model: &Model, team: TeamId, cell: usize) -> u64 {
        if model.team_backfills(model.team(team)) { self.unreserved[cell] } else { self.teams[team.index()][cell] }
    }

    /// The most GPUs one workload of `team` at `tier` can ever be admitted with in `pool`, on
    /// cells of `capacity` when it asks for one: Kueue admits a pod set on one flavor, so it
    /// is the largest of those cells' limits for it (a larger job the engine runs across
    /// cells, E157): the tier's reservation in the cell where
    /// the tier reserves in `pool`, else the team's limit there ([`Self::team_limit`]).
    pub fn most_for_one_workload(
        &self,
        model: &Model,
        cells: &Cells,
        team: TeamId,
        tier: TierId,
        pool: PoolId,
        capacity: Option<CapacityKind>,
    ) -> u64 {
        let reserves_here = model.tier(tier).reserves_in(pool);
        cells
            .of_pool(pool)
            .filter(|(_, cell)| capacity.is_none_or(|kind| cell.capacity == kind))
            .map(|(index, _)| if reserves_here { self.reserved[tier.index()][index] } else { self.team_limit(model, team, index) })
            .max()
            .unwrap_or(0)
    }
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
