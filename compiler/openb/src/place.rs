//! The cluster of the reproduction and the placement of one pod: the feasibility rules, the
//! choice of a node (uniform, or the best of a [`NodeScore`] after the artifact's min-max
//! normalisation, ties at random) and the choice of GPUs on it.

use rand::RngExt;

use crate::{Milli, Pod, Trace};

/// The free capacity of one node, which is all a score sees.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Free {
    /// Milli-vCPU.
    pub cpu_milli: u64,
    /// MiB.
    pub memory_mib: u64,
    /// GPU milli summed over the node's GPUs.
    pub gpu_milli: u64,
}

/// Why a score could not rank the nodes (a Wasm trap, a module that does not load).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ScoreFailed(pub String);

/// Ranks feasible nodes for a pod: a score per node, higher is better, and NaN for a node
/// the score refuses (a policy score's filter). The simulator takes the highest, ties (equal
/// scores) at random, so that every score is judged the same way.
pub trait NodeScore {
    /// Writes one score per entry of `nodes` into `scores` (cleared first).
    fn score(&mut self, pod: &Pod, nodes: &[Free], scores: &mut Vec<f64>) -> Result<(), ScoreFailed>;
}

/// The artifact's best-fit score: the weighted leftover after placing, inverted to 0..100.
#[derive(Clone, Copy, Debug, Default)]
pub struct BestFit;

impl BestFit {
    /// The CPU the largest node has, in milli-vCPU, which scales the leftover CPU to 0..1.
    pub const MAX_CPU_MILLI: f64 = 128_000.0;
    /// The GPU milli of the largest node (8 GPUs), which scales the leftover GPU to 0..1.
    pub const MAX_GPU_MILLI: f64 = 8_000.0;

    /// `int((1 − s)·100)` with `s = 0.5·leftover CPU/128000 + 0.5·leftover GPU/8000`, computed in
    /// f64 in this order and truncated toward zero, as the artifact does.
    pub fn of(pod: &Pod, node: Free) -> i64 {
        let cpu = node.cpu_milli.saturating_sub(pod.cpu_milli) as f64;
        let gpu = node.gpu_milli.saturating_sub(pod.gpu_request()) as f64;
        let share = cpu / Self::MAX_CPU_MILLI * 0.5 + gpu / Self::MAX_GPU_MILLI * 0.5;
        ((1.0 - share) * 100.0) as i64
    }
}

impl NodeScore for BestFit {
    fn score(&mut self, pod: &Pod, nodes: &[Free], scores: &mut Vec<f64>) -> Result<(), ScoreFailed> {
        scores.clear();
        scores.extend(nodes.iter().map(|&node| BestFit::of(pod, node) as f64));
        Ok(())
    }
}

/// How a node and a sharing pod's GPU are chosen.
pub enum Placement<'a> {
    /// A uniform feasible node; a uniform fitting GPU.
    Random,
    /// The best node by the score; the fitting GPU with the least free milli.
    Scored(&'a mut dyn NodeScore),
}

/// One node's state: what is free, and where its GPUs lie in [`Cluster::gpu_free`].
#[derive(Clone, Debug)]
struct NodeState {
    free: Free,
    model: u8,
    first_gpu: usize,
    gpus: usize,
    /// GPUs with all 1000 milli free.
    whole_free: u32,
    /// The most milli free on one GPU.
    most_free: u32,
}

/// The cluster as pods fill it. Nothing is ever freed: pods never finish.
#[derive(Clone, Debug)]
pub struct Cluster {
    nodes: Vec<NodeState>,
    /// The free milli of every GPU, node after node.
    gpu_free: Vec<u32>,
    total_gpu_milli: u64,
    allocated_gpu_milli: u64,
}

/// Buffers reused from pod to pod, so a run allocates once.
#[derive(Default)]
pub struct Scratch {
    feasible: Vec<usize>,
    free: Vec<Free>,
    scores: Vec<f64>,
}

impl Cluster {
    /// The empty cluster of a trace's node list.
    pub fn new(trace: &Trace) -> Cluster {
        let mut gpu_free = Vec::new();
        let nodes = trace
            .nodes
            .iter()
            .map(|node| {
                let first_gpu = gpu_free.len();
                gpu_free.extend(std::iter::repeat_n(Milli::GPU, node.gpus as usize));
                NodeState {
                    free: Free {
                        cpu_milli: node.cpu_milli,
                        memory_mib: node.memory_mib,
                        gpu_milli: u64::from(node.gpus) * u64::from(Milli::GPU),
                    },
                    model: node.model,
                    first_gpu,
                    gpus: node.gpus as usize,
                    whole_free: node.gpus,
                    most_free: if node.gpus > 0 { Milli::GPU } else { 0 },
                }
            })
            .collect();
        Cluster { nodes, gpu_free, total_gpu_milli: trace.total_gpu_milli(), allocated_gpu_milli: 0 }
    }

    /// The cluster's GPU milli in all.
    pub fn total_gpu_milli(&self) -> u64 {
        self.total_gpu_milli
    }

    /// The GPU milli allocated so far.
    pub fn allocated_gpu_milli(&self) -> u64 {
        self.allocated_gpu_milli
    }

    /// The indices of the nodes `pod` fits now, into `feasible`. The pod's kind of GPU request
    /// is decided once, outside the scan over the nodes, which is the simulator's hot loop.
    fn feasible(&self, pod: &Pod, feasible: &mut Vec<usize>) {
        let host = |node: &NodeState| node.free.cpu_milli >= pod.cpu_milli && node.free.memory_mib >= pod.memory_mib;
        let nodes = self.nodes.iter().enumerate();
        feasible.clear();
        if pod.gpus == 0 {
            feasible.extend(nodes.filter(|(_, node)| host(node)).map(|(index, _)| index));
        } else if pod.shares_gpu() {
            let milli = pod.gpu_milli.0;
            feasible.extend(
                nodes.filter(|(_, node)| node.most_free >= milli && host(node) && pod.spec.allows(node.model)).map(|(index, _)| index),
            );
        } else {
            feasible.extend(
                nodes.filter(|(_, node)| node.whole_free >= pod.gpus && host(node) && pod.spec.allows(node.model)).map(|(index, _)| index),
            );
        }
    }

    /// Places `pod`, or returns `Ok(None)` when no node fits or the score refuses every one
    /// that does (the pod fails for good). Returns the node's index.
    pub fn place(
        &mut self,
        pod: &Pod,
        placement: &mut Placement<'_>,
        rng: &mut impl rand::Rng,
        scratch: &mut Scratch,
    ) -> Result<Option<usize>, ScoreFailed> {
        self.feasible(pod, &mut scratch.feasible);
        if scratch.feasible.is_empty() {
            return Ok(None);
        }
        let chosen = match placement {
            Placement::Random => scratch.feasible[rng.random_range(0..scratch.feasible.len())],
            Placement::Scored(score) => {
                scratch.free.clear();
                scratch.free.extend(scratch.feasible.iter().map(|&index| self.nodes[index].free));
                score.score(pod, &scratch.free, &mut scratch.scores)?;
                if scratch.scores.len() != scratch.feasible.len() {
                    return Err(ScoreFailed(format!("the score ranked {} nodes of {}", scratch.scores.len(), scratch.feasible.len())));
                }
                // The artifact min-max normalises the scores to 0..100 with integer division
                // before taking the highest. With one score that keeps exactly the raw
                // highest at 100 (any lower one is at most 99), so the highest raw scores are
                // the same candidates, found without a division per node.
                match best(&scratch.scores, rng) {
                    Some(index) => scratch.feasible[index],
                    None => return Ok(None),
                }
            }
        };
        let random_gpu = matches!(placement, Placement::Random);
        self.take(chosen, pod, random_gpu, rng);
        Ok(Some(chosen))
    }

    /// Takes the pod's resources on node `index`, which fits it.
    fn take(&mut self, index: usize, pod: &Pod, random_gpu: bool, rng: &mut impl rand::Rng) {
        let node = &mut self.nodes[index];
        let gpus = &mut self.gpu_free[node.first_gpu..node.first_gpu + node.gpus];
        node.free.cpu_milli -= pod.cpu_milli;
        node.free.memory_mib -= pod.memory_mib;
        if pod.shares_gpu() {
            let fitting = gpus.iter().filter(|&&free| free >= pod.gpu_milli.0);
            let gpu = if random_gpu {
                let pick = rng.random_range(0..fitting.count());
                gpus.iter().enumerate().filter(|&(_, &free)| free >= pod.gpu_milli.0).nth(pick).map(|(gpu, _)| gpu)
            } else {
                // The first of the fitting GPUs with the least free milli.
                gpus.iter()
                    .enumerate()
                    .filter(|&(_, &free)| free >= pod.gpu_milli.0)
                    .min_by_key(|&(gpu, &free)| (free, gpu))
                    .map(|(gpu, _)| gpu)
            };
            if let Some(gpu) = gpu {
                gpus[gpu] -= pod.gpu_milli.0;
            }
        } else {
            // Whole GPUs: the lowest-index free ones.
            for free in gpus.iter_mut().filter(|free| **free == Milli::GPU).take(pod.gpus as usize) {
                *free = 0;
            }
        }
        node.free.gpu_milli -= pod.gpu_request();
        node.whole_free = gpus.iter().filter(|&&free| free == Milli::GPU).count() as u32;
        node.most_free = gpus.iter().copied().max().unwrap_or(0);
        self.allocated_gpu_milli += pod.gpu_request();
    }
}

/// The index of the highest score, uniform among ties; `None` when the score refuses every
/// node (all NaN).
fn best(scores: &[f64], rng: &mut impl rand::Rng) -> Option<usize> {
    let high = scores.iter().copied().filter(|score| !score.is_nan()).reduce(f64::max)?;
    let ties = scores.iter().filter(|&&score| score == high).count();
    let pick = if ties > 1 { rng.random_range(0..ties) } else { 0 };
    scores.iter().enumerate().filter(|&(_, &score)| score == high).nth(pick).map(|(index, _)| index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn best_fit_prefers_the_fuller_node() {
        let pod = Pod { name: "p".into(), cpu_milli: 8000, memory_mib: 1, gpus: 1, gpu_milli: Milli(1000), spec: crate::GpuSpec::ANY };
        let empty = Free { cpu_milli: 128_000, memory_mib: 1 << 20, gpu_milli: 8000 };
        let full = Free { cpu_milli: 8000, memory_mib: 1 << 20, gpu_milli: 1000 };
        assert_eq!(BestFit::of(&pod, full), 100);
        assert_eq!(BestFit::of(&pod, empty), 9); // (1 − (0.5·120/128 + 0.5·7/8))·100 = 9.375
    }
}
