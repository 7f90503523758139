//! Placement: which nodes of a pool can host a job (its filters), and where its gang goes at
//! the class's locality, all or nothing. The order of candidates is the tie-break of
//! docs/semantics.md: NVLink first for classes that prefer it, then the ranker's score
//! (higher first), then the fewest free GPUs left on the node, then node order.

use std::collections::BTreeMap;

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
        self.class.is_some_and(|class| class.nvlink == NvlinkNeed::Preferred)
    }
}

/// Whether `node` passes `job`'s filters, whatever is running: architecture and image
/// platforms, NVLink need, bandwidth and lanes, MIG profile, capacity kind, pinned nodes,
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
        if let Some(lanes) = class.lanes
            && !node.gpus.iter().all(|gpu| !gpu.links.is_empty() && gpu.links.iter().all(|link| link.links >= lanes))
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

/// The unit of `locality` a node is in, as a comparable key; `None` when the node is in no
/// such unit (no NVLink domain, say), which hosts no multi-node gang.
fn unit(model: &Model, locality: Locality, node_id: NodeId) -> Option<UnitKey> {
    let node = model.node(node_id);
    match locality {
        Locality::Node => Some(UnitKey::Node(node_id)),
        Locality::Chassis => node.chassis.as_ref().map(|chassis| UnitKey::Chassis(chassis.as_str().to_owned())),
        Locality::NvlinkDomain => node.domain.map(UnitKey::Domain),
        Locality::Rack => node.rack.map(UnitKey::Rack),
        Locality::Any => Some(UnitKey::Any),
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum UnitKey {
    Node(NodeId),
    Chassis(String),
    Domain(placid_lang::model::DomainId),
    Rack(placid_lang::model::RackId),
    Any,
}

/// How many of the job's GPUs (or instances) `node` can host in the free capacity `cluster`.
fn capacity(cluster: &Cluster, job: &Job, needs: &Needs<'_>, node: NodeId) -> u32 {
    let free = &cluster.nodes[node.index()];
    let gpus = match needs.mig {
        Some(profile) => free.mig.iter().flat_map(|gpu| gpu.iter()).filter(|(name, _)| name.as_str() == profile).map(|(_, n)| *n).sum(),
        None if job.is_sharing() => u32::from(free.gpu_milli.iter().any(|milli| *milli >= job.gpu_milli)),
        None => free.whole,
    };
    let by_cpu = free.cpu_milli.checked_div(job.cpu_milli_per_gpu).unwrap_or(u64::MAX);
    let by_memory = free.memory_mib.checked_div(job.memory_mib_per_gpu).unwrap_or(u64::MAX);
    u64::from(gpus).min(by_cpu).min(by_memory) as u32
}

/// Why a job cannot be placed on a cluster.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Miss {
    /// It never fits the pool, even empty.
    Never(Reject),
    /// It does not fit the free capacity now.
    Full,
}

/// Reusable buffers of [`place`], so a run does not allocate per attempt.
#[derive(Default)]
pub struct Scratch {
    candidates: Vec<Candidate>,
    scores: Vec<Option<f64>>,
    order: Vec<(usize, u32)>,
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
    scratch.candidates.clear();
    let mut any_passes = false;
    for node in reach {
        if !passes(model, job, &needs, *node) {
            continue;
        }
        any_passes = true;
        if !blocked(*node) && capacity(cluster, job, &needs, *node) > 0 {
            scratch.candidates.push(cluster.candidate(*node));
        }
    }
    if !any_passes {
        return Err(Miss::Never(Reject::NoFeasibleNode));
    }
    if scratch.candidates.is_empty() {
        return Err(Miss::Full);
    }
    ranker.rank(job, &scratch.candidates, &mut scratch.scores);
    scratch.order.clear();
    for (index, candidate) in scratch.candidates.iter().enumerate() {
        if scratch.scores.get(index).copied().flatten().is_some() {
            scratch.order.push((index, capacity(cluster, job, &needs, candidate.node)));
        }
    }
    let (candidates, scores) = (&scratch.candidates, &scratch.scores);
    let prefer = needs.prefers_nvlink();
    let compare = |(left, left_cap): &(usize, u32), (right, right_cap): &(usize, u32)| {
        let key = |index: usize| model.node(candidates[index].node).has_nvlink() && prefer;
        key(*right)
            .cmp(&key(*left))
            .then_with(|| {
                let (a, b) = (scores[*left].unwrap_or(f64::MIN), scores[*right].unwrap_or(f64::MIN));
                b.total_cmp(&a)
            })
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
        scratch.order.sort_by(compare);
        // The gang goes to the unit of the best-ranked node whose unit can hold it all.
        let mut units: BTreeMap<UnitKey, u32> = BTreeMap::new();
        for (index, cap) in &scratch.order {
            if let Some(key) = unit(model, needs.locality, candidates[*index].node) {
                *units.entry(key).or_default() += *cap;
            }
        }
        let chosen = scratch
            .order
            .iter()
            .filter_map(|(index, _)| unit(model, needs.locality, candidates[*index].node))
            .find(|key| units.get(key).is_some_and(|cap| *cap >= job.gpus));
        let Some(chosen) = chosen else { return Err(Miss::Full) };
        let mut left = job.gpus;
        for (index, cap) in &scratch.order {
            if left == 0 {
                break;
            }
            let node = candidates[*index].node;
            if unit(model, needs.locality, node).as_ref() != Some(&chosen) {
                continue;
            }
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
    let free = &cluster.nodes[node.index()];
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
pub fn never(model: &Model, reach: &[NodeId], empty: &Cluster, job: &Job, pool: PoolId) -> Option<Reject> {
    let mut scratch = Scratch::default();
    match place(model, reach, empty, job, pool, &mut crate::rank::Neutral, &mut scratch, &|_| false) {
        Ok(_) => None,
        Err(Miss::Never(reason)) => Some(reason),
        Err(Miss::Full) if Needs::of(model, job).locality == Locality::Any => Some(Reject::PoolTooSmall),
        Err(Miss::Full) => Some(Reject::DomainTooSmall),
    }
}
