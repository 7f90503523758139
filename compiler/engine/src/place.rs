//! Placement: which nodes of a pool can host a job (its filters), and where its gang goes at
//! the class's locality, all or nothing. The order of candidates is the tie-break of
//! docs/semantics.md: NVLink first for classes that prefer it, then the ranker's score
//! (higher first), then the cheapest node, then the fewest free GPUs left on the node, then
//! node order.

use std::collections::HashMap;

use placid_lang::model::{CapacityKind, Class, Locality, Model, NodeId, NvlinkNeed, PoolId};

use crate::cluster::Cluster;
use crate::event::{NodeShare, Placement, Reject};
use crate::job::{Job, WHOLE_GPU_MILLI};
use crate::rank::{Candidate, Ranker};

/// What a job needs of a node, resolved once from its class.
#[derive(Clone, Copy, Debug)]
pub struct Needs<'m> {
    /// The class, if any.
    pub class: Option<&'m Class>,
    /// The unit the gang must stay inside.
    pub locality: Locality,
    /// The MIG profile, when the job runs on MIG instances.
    pub mig: Option<&'m str>,
}

impl<'m> Needs<'m> {
    /// The needs of `job`.
    pub fn of(model: &'m Model, job: &Job) -> Needs<'m> {
        let class = job.class.map(|class| model.class(class));
        Needs {
            class,
            locality: class.map_or(Locality::Any, |class| class.locality),
            mig: class.and_then(|class| class.mig.as_ref()).map(|mig| mig.value.as_str()),
        }
    }

    fn prefers_nvlink(&self) -> bool {
        self.class.is_some_and(Class::prefers_nvlink)
    }
}

/// Whether `node` passes `job`'s filters, whatever is running: architecture and image
/// platforms, NVLink need, bandwidth, lanes and domain bisection, MIG profile, capacity kind, pinned nodes,
/// and enough GPUs, CPU and memory for one GPU's share.
pub fn passes(model: &Model, job: &Job, needs: &Needs<'_>, node_id: NodeId) -> bool {
    let node = model.node(node_id);
    if job.pin.as_ref().is_some_and(|pin| !pin.contains(&node_id)) {
        return false;
    }
    if job.capacity.is_some_and(|kind: CapacityKind| kind != node.capacity) {
        return false;
    }
    if let Some(class) = needs.class {
        if !class.platforms.is_empty() && !class.platforms.contains(&node.arch) {
            return false;
        }
        if class.nvlink == NvlinkNeed::Required && !node.has_nvlink() {
            return false;
        }
        if class.min_bandwidth.is_some_and(|min| node.nvlink_bandwidth() < min) {
            return false;
        }
        if class.lanes.as_ref().is_some_and(|lanes| node.nvlink_lanes().is_none_or(|has| has < lanes.value)) {
            return false;
        }
        // The checker allows `min-bisection` only at nvlink-domain locality (E167), where the
        // whole gang shares the node's domain.
        if let Some(bisection) = &class.min_bisection
            && needs.locality == Locality::NvlinkDomain
            && node.domain.is_none_or(|domain| model.domain_bisection(domain) < bisection.value)
        {
            return false;
        }
    }
    let has_gpu = match needs.mig {
        Some(profile) => node.gpus.iter().any(|gpu| mig_count(gpu, profile) > 0),
        None => node.gpus.iter().any(|gpu| gpu.mig == placid_lang::model::Mig::Disabled),
    };
    let memory = node.memory.map_or(u64::MAX, |bytes| bytes.0 / (1024 * 1024));
    has_gpu && job.cpu_milli_per_gpu <= u64::from(node.cpu.harts) * 1000 && job.memory_mib_per_gpu <= memory
}

fn mig_count(gpu: &placid_lang::model::Gpu, profile: &str) -> u32 {
    match &gpu.mig {
        placid_lang::model::Mig::Enabled { instances } => {
            instances.iter().filter(|each| each.profile.as_str() == profile).map(|each| each.count).sum()
        }
        placid_lang::model::Mig::Disabled => 0,
    }
}

/// How many of the job's GPUs (or instances) `node` can host in the free capacity `cluster`.
fn capacity(cluster: &Cluster, job: &Job, needs: &Needs<'_>, node: NodeId) -> u32 {
    let free = cluster.free(node);
    let gpus = match needs.mig {
        Some(profile) => free.mig.iter().flat_map(|gpu| gpu.iter()).filter(|(name, _)| name.as_str() == profile).map(|(_, n)| *n).sum(),
        None if job.is_sharing() => u32::from(free.gpu_milli.iter().any(|milli| *milli >= job.gpu_milli)),
        None => free.whole,
    };
    let by_cpu = free.cpu_milli.checked_div(job.cpu_milli_per_gpu).unwrap_or(u64::MAX);
    let by_memory = free.memory_mib.checked_div(job.memory_mib_per_gpu).unwrap_or(u64::MAX);
    u64::from(gpus).min(by_cpu).min(by_memory) as u32
}

/// Whether a node's capacity for `job` is its free whole GPUs alone, and the job goes to one
/// node with no NVLink preference: then the node order of step 3 is the free-GPU buckets'.
fn by_whole_gpus_alone(job: &Job, needs: &Needs<'_>) -> bool {
    needs.locality == Locality::Node
        && needs.mig.is_none()
        && !job.is_sharing()
        && job.gpus > 0
        && job.cpu_milli_per_gpu == 0
        && job.memory_mib_per_gpu == 0
        && !needs.prefers_nvlink()
}

/// Why a job cannot be placed on a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// It never fits the pool, even empty.
    Never(Reject),
    /// It does not fit the free capacity now.
    Full,
}

/// What decides which nodes of a pool pass a job's filters ([`passes`]), for jobs not pinned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct FilterKey {
    pool: PoolId,
    /// The nodes searched: the pool's reach, or one of its cells (the engine charges quota
    /// per cell and places a job within its cell). A cell lies within the reach of every pool
    /// that reaches one of its nodes, so its first node and its size tell it from the reach.
    first: Option<NodeId>,
    size: usize,
    class: Option<placid_lang::model::ClassId>,
    capacity: Option<CapacityKind>,
    cpu: u64,
    memory: u64,
}

/// The nodes of a pool that pass one [`FilterKey`]'s filters, as a list and by node index.
struct Feasible {
    nodes: Vec<NodeId>,
    member: Vec<bool>,
    /// Whether all of them have one placement price, so price orders none before another.
    one_price: bool,
    /// The lowest GPU-hour price among them, in minor units (0 when none has a price).
    cheapest: i64,
}

/// Reusable buffers of [`place`], so a run does not allocate per attempt, and what it learnt
/// of the model: which nodes pass which filters, and which have NVLink. A scratch serves one
/// model, whose pools always reach the same nodes.
#[derive(Default)]
pub struct Scratch {
    candidates: Vec<Candidate>,
    scores: Vec<Option<f64>>,
    order: Vec<(usize, u32)>,
    /// Each candidate's unit, by candidate index.
    units: Vec<Option<u32>>,
    /// Capacity per unit during one gang search; all zero between searches.
    totals: Vec<u32>,
    /// Keyed hashing as std's (a key holds a job's CPU and memory), at aHash's lower cost.
    feasible: HashMap<FilterKey, Feasible, ahash::RandomState>,
    /// Whether each node has NVLink, by node index.
    nvlink: Vec<bool>,
    /// Each unit's place in [`Model::units_cheapest_first`], by unit index, for chassis,
    /// NVLink domains and racks; empty until first asked.
    unit_ranks: Vec<Vec<u32>>,
}

impl Scratch {
    /// Fills [`Scratch::unit_ranks`] once: each unit's place in the order gangs try them
    /// ([`Model::units_cheapest_first`]), by unit index, for chassis, domains and racks.
    fn unit_ranks(&mut self, model: &Model, cluster: &Cluster) {
        if !self.unit_ranks.is_empty() {
            return;
        }
        for locality in [Locality::Chassis, Locality::NvlinkDomain, Locality::Rack] {
            // The unit of each node, by its name (unique within one kind).
            let key = |node: NodeId| -> Option<&placid_lang::name::Name> {
                let node = model.node(node);
                match locality {
                    Locality::NvlinkDomain => node.domain.map(|domain| &model.domain(domain).name),
                    Locality::Rack => node.rack.map(|rack| &model.racks[rack.index()].name),
                    _ => node.chassis.as_ref(),
                }
            };
            let order: std::collections::HashMap<&placid_lang::name::Name, u32> =
                model.units_cheapest_first(key).into_iter().zip(0..).collect();
            let mut rank = vec![u32::MAX; cluster.unit_count()];
            for node in (0..model.nodes.len()).map(NodeId::from_index) {
                if let (Some(unit), Some(name)) = (cluster.unit(locality, node), key(node)) {
                    rank[unit as usize] = order.get(name).copied().unwrap_or(u32::MAX);
                }
            }
            self.unit_ranks.push(rank);
        }
    }

    /// The nodes of `reach` (pool `pool`'s) that pass `job`'s filters, worked out once per key.
    fn feasible(&mut self, model: &Model, reach: &[NodeId], job: &Job, needs: &Needs<'_>, pool: PoolId) -> &Feasible {
        let key = FilterKey {
            pool,
            first: reach.first().copied(),
            size: reach.len(),
            class: job.class,
            capacity: job.capacity,
            cpu: job.cpu_milli_per_gpu,
            memory: job.memory_mib_per_gpu,
        };
        self.feasible.entry(key).or_insert_with(|| {
            let nodes: Vec<NodeId> = reach.iter().copied().filter(|node| passes(model, job, needs, *node)).collect();
            let mut member = vec![false; model.nodes.len()];
            for node in &nodes {
                member[node.index()] = true;
            }
            let one_price = nodes.windows(2).all(|pair| model.node(pair[0]).placement_price() == model.node(pair[1]).placement_price());
            let cheapest = lowest_price(model, nodes.iter().copied());
            Feasible { nodes, member, one_price, cheapest }
        })
    }
}

/// The lowest GPU-hour price a job is charged on `nodes`, in minor units: an unpriced node
/// costs nothing ([`placid_lang::model::Node::placement_price`], as placement and the charge
/// count it), so with one among them no budget can refuse the job.
fn lowest_price(model: &Model, nodes: impl Iterator<Item = NodeId>) -> i64 {
    nodes.map(|node| model.node(node).placement_price()).min().unwrap_or(0)
}

/// The lowest GPU-hour price among the nodes of `reach` (pool `pool`'s) that pass `job`'s
/// filters: what the cheapest placement the job can ever get costs per GPU-hour. A budget
/// is asked about this price, not the pool's cheapest, which a job whose filters leave out
/// the cheap nodes never gets (it would be held for its budget every day, forever).
pub fn cheapest_price(model: &Model, reach: &[NodeId], job: &Job, pool: PoolId, scratch: &mut Scratch) -> i64 {
    let needs = Needs::of(model, job);
    if job.pin.is_some() {
        return lowest_price(model, reach.iter().copied().filter(|node| passes(model, job, &needs, *node)));
    }
    scratch.feasible(model, reach, job, &needs, pool).cheapest
}

/// Places `job` through `pool` on the free capacity of `cluster`, skipping nodes
/// `blocked` says no to (the head's reservation, for a backfill). Whole-cluster emptiness
/// decides [`Miss::Never`]: call it with an empty cluster for the static question.
#[allow(clippy::too_many_arguments)]
pub fn place(
    model: &Model,
    reach: &[NodeId],
    cluster: &Cluster,
    job: &Job,
    pool: PoolId,
    ranker: &mut dyn Ranker,
    scratch: &mut Scratch,
    blocked: &dyn Fn(NodeId) -> bool,
) -> Result<Placement, Miss> {
    let needs = Needs::of(model, job);
    if scratch.nvlink.len() != model.nodes.len() {
        scratch.nvlink = model.nodes.iter().map(|node| node.has_nvlink()).collect();
    }
    if job.pin.is_none()
        && by_whole_gpus_alone(job, &needs)
        && ranker.is_neutral(job)
        && scratch.feasible(model, reach, job, &needs, pool).one_price
    {
        let feasible = scratch.feasible(model, reach, job, &needs, pool);
        if feasible.nodes.is_empty() {
            return Err(Miss::Never(Reject::NoFeasibleNode));
        }
        // The order of step 3 is then the fewest free GPUs left, then node order: the first
        // feasible node of the smallest bucket that holds the job.
        let best = (job.gpus..=cluster.most_whole())
            .flat_map(|whole| cluster.with_whole(whole))
            .find(|node| feasible.member[node.index()] && !blocked(*node));
        let Some(node) = best else { return Err(Miss::Full) };
        let shares = vec![share(cluster, job, &needs, node, job.gpus)];
        let (domain, rack) = (model.node(node).domain, model.node(node).rack);
        return Ok(Placement { pool, nodes: shares, domain, rack });
    }
    let mut candidates = std::mem::take(&mut scratch.candidates);
    candidates.clear();
    let mut offer = |node: NodeId| {
        if !blocked(node) && capacity(cluster, job, &needs, node) > 0 {
            candidates.push(cluster.candidate(node));
        }
    };
    if job.pin.is_some() {
        let mut any_passes = false;
        for node in reach.iter().copied().filter(|node| passes(model, job, &needs, *node)) {
            any_passes = true;
            offer(node);
        }
        if !any_passes {
            return Err(Miss::Never(Reject::NoFeasibleNode));
        }
    } else {
        let feasible = scratch.feasible(model, reach, job, &needs, pool);
        if feasible.nodes.is_empty() {
            return Err(Miss::Never(Reject::NoFeasibleNode));
        }
        // No unit has room for a gang of whole GPUs this large: nothing to search.
        let whole_gang = needs.mig.is_none() && !job.is_sharing();
        if whole_gang && cluster.most_whole_in(needs.locality) < u64::from(job.gpus) {
            return Err(Miss::Full);
        }
        // Only nodes with a free GPU can host a GPU job: on a busy cluster those are few.
        let with_free = cluster.with_free_gpus();
        if job.gpus > 0 && with_free.len() < feasible.nodes.len() {
            with_free.iter().copied().filter(|node| feasible.member[node.index()]).for_each(&mut offer);
        } else {
            feasible.nodes.iter().copied().for_each(&mut offer);
        }
    }
    scratch.candidates = candidates;
    if scratch.candidates.is_empty() {
        return Err(Miss::Full);
    }
    ranker.rank(job, &scratch.candidates, &mut scratch.scores);
    if needs.locality != Locality::Node {
        scratch.unit_ranks(model, cluster);
    }
    scratch.order.clear();
    for (index, candidate) in scratch.candidates.iter().enumerate() {
        if scratch.scores.get(index).copied().flatten().is_some() {
            scratch.order.push((index, capacity(cluster, job, &needs, candidate.node)));
        }
    }
    let (candidates, scores, nvlink) = (&scratch.candidates, &scratch.scores, &scratch.nvlink);
    let prefer = needs.prefers_nvlink();
    let price = |node: NodeId| model.node(node).placement_price();
    // First the class's NVLink preference, then the score: for nodes and for units alike.
    let preferred = |left: usize, right: usize| {
        let key = |index: usize| prefer && nvlink[candidates[index].node.index()];
        key(right).cmp(&key(left)).then_with(|| {
            let (a, b) = (scores[left].unwrap_or(f64::MIN), scores[right].unwrap_or(f64::MIN));
            b.total_cmp(&a)
        })
    };
    let compare = |(left, left_cap): &(usize, u32), (right, right_cap): &(usize, u32)| {
        preferred(*left, *right)
            .then_with(|| price(candidates[*left].node).cmp(&price(candidates[*right].node)))
            .then_with(|| left_cap.cmp(right_cap))
            .then_with(|| candidates[*left].node.cmp(&candidates[*right].node))
    };
    let mut shares = Vec::new();
    if needs.locality == Locality::Node {
        // One node: the best-ranked node that holds the whole job, found in one scan.
        let best = scratch.order.iter().filter(|(_, cap)| *cap >= job.gpus).min_by(|left, right| compare(left, right));
        let Some((index, _)) = best else { return Err(Miss::Full) };
        shares.push(share(cluster, job, &needs, candidates[*index].node, job.gpus));
    } else {
        // The gang goes to the best unit that can hold it all: by its best node's NVLink
        // preference and score, then in the order units are tried, cheapest first
        // (`Model::units_cheapest_first`, the order Slurm tries the class constraint's
        // features in); only that unit's nodes need sorting.
        scratch.units.clear();
        scratch.units.extend(candidates.iter().map(|candidate| cluster.unit(needs.locality, candidate.node)));
        scratch.totals.resize(cluster.unit_count(), 0);
        let (units, totals) = (&scratch.units, &mut scratch.totals);
        let ranks: &[u32] = match needs.locality {
            Locality::Chassis => &scratch.unit_ranks[0],
            Locality::NvlinkDomain => &scratch.unit_ranks[1],
            Locality::Rack => &scratch.unit_ranks[2],
            Locality::Node | Locality::Any => &[],
        };
        for (index, cap) in &scratch.order {
            if let Some(unit) = units[*index] {
                totals[unit as usize] += *cap;
            }
        }
        let holds = |index: usize| units[index].filter(|unit| totals[*unit as usize] >= job.gpus);
        let rank = |index: usize| units[index].and_then(|unit| ranks.get(unit as usize).copied()).unwrap_or(u32::MAX);
        let unit_order =
            |(left, _): &(usize, u32), (right, _): &(usize, u32)| preferred(*left, *right).then_with(|| rank(*left).cmp(&rank(*right)));
        let best = scratch
            .order
            .iter()
            .filter(|(index, _)| holds(*index).is_some())
            .min_by(|left, right| unit_order(left, right).then_with(|| compare(left, right)));
        let chosen = best.and_then(|(index, _)| holds(*index));
        for unit in units.iter().flatten() {
            totals[*unit as usize] = 0;
        }
        let Some(chosen) = chosen else { return Err(Miss::Full) };
        scratch.order.retain(|(index, _)| units[*index] == Some(chosen));
        scratch.order.sort_by(compare);
        let mut left = job.gpus;
        for (index, cap) in &scratch.order {
            if left == 0 {
                break;
            }
            let node = candidates[*index].node;
            let take = (*cap).min(left);
            left -= take;
            shares.push(share(cluster, job, &needs, node, take));
        }
    }
    shares.sort_by_key(|share| share.node);
    let domain = common(shares.iter().map(|share| model.node(share.node).domain));
    let rack = common(shares.iter().map(|share| model.node(share.node).rack));
    Ok(Placement { pool, nodes: shares, domain, rack })
}

/// The one value all items share, if any.
fn common<T: PartialEq + Copy>(mut items: impl Iterator<Item = Option<T>>) -> Option<T> {
    let first = items.next().flatten()?;
    items.all(|item| item == Some(first)).then_some(first)
}

/// The GPUs `take` of the job's GPUs use on `node`: the lowest-index whole GPUs; for a
/// sharing job the fitting GPU with the least free milli; for MIG the lowest-index GPUs with
/// a free instance, one instance per GPU before a second.
fn share(cluster: &Cluster, job: &Job, needs: &Needs<'_>, node: NodeId, take: u32) -> NodeShare {
    let free = cluster.free(node);
    let take = take as usize;
    match needs.mig {
        Some(profile) => {
            let mut gpus = Vec::with_capacity(take);
            let mut left: Vec<u32> =
                free.mig.iter().map(|gpu| gpu.iter().filter(|(name, _)| name.as_str() == profile).map(|(_, n)| *n).sum()).collect();
            while gpus.len() < take {
                let before = gpus.len();
                for (index, count) in left.iter_mut().enumerate() {
                    if *count > 0 && gpus.len() < take {
                        *count -= 1;
                        gpus.push(index as u32);
                    }
                }
                if gpus.len() == before {
                    break;
                }
            }
            NodeShare { node, gpus, milli: 0, mig: true }
        }
        None if job.is_sharing() => {
            let gpu = free
                .gpu_milli
                .iter()
                .enumerate()
                .filter(|(_, milli)| **milli >= job.gpu_milli)
                .min_by_key(|(index, milli)| (**milli, *index))
                .map_or(0, |(index, _)| index as u32);
            NodeShare { node, gpus: vec![gpu], milli: job.gpu_milli, mig: false }
        }
        None => {
            let gpus = free
                .gpu_milli
                .iter()
                .enumerate()
                .filter(|(_, milli)| **milli == WHOLE_GPU_MILLI)
                .map(|(index, _)| index as u32)
                .take(take)
                .collect();
            NodeShare { node, gpus, milli: WHOLE_GPU_MILLI, mig: false }
        }
    }
}

/// Whether `job` can ever be placed through `pool`: on an empty cluster, with the built-in
/// ranker's order. A gang no unit holds even empty is [`Reject::DomainTooSmall`].
pub fn never(model: &Model, reach: &[NodeId], empty: &Cluster, job: &Job, pool: PoolId, scratch: &mut Scratch) -> Option<Reject> {
    match place(model, reach, empty, job, pool, &mut crate::rank::Neutral, scratch, &|_| false) {
        Ok(_) => None,
        Err(Miss::Never(reason)) => Some(reason),
        Err(Miss::Full) if Needs::of(model, job).locality == Locality::Any => Some(Reject::PoolTooSmall),
        Err(Miss::Full) => Some(Reject::DomainTooSmall),
    }
}
