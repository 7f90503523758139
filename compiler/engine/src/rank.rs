//! How feasible nodes are ranked for a job. The Wasm plugin of a stage's `score` ranks them in
//! `placid test`, `placid simulate` and the extender alike; its host implements [`Ranker`]
//! outside this crate, which links no Wasm runtime.

use placid_lang::model::NodeId;

use crate::job::Job;

/// A feasible node offered to a ranker, with its free capacity at that moment.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Candidate {
    /// The node.
    pub node: NodeId,
    /// Completely free GPUs.
    pub free_gpus: u32,
    /// Free GPU milli over all GPUs.
    pub free_gpu_milli: u64,
    /// Free CPU, in milli-CPUs.
    pub free_cpu_milli: u64,
    /// Free host memory, in MiB.
    pub free_memory_mib: u64,
}

/// Scores candidate nodes for a job.
pub trait Ranker {
    /// Writes one score per candidate into `scores` (cleared first, same order): higher is
    /// better (a ranker of a `prefer "min"` score negates it), `None` filters the node out.
    /// Scores that compare equal fall to the engine's tie-break (docs/semantics.md).
    fn rank(&mut self, job: &Job, candidates: &[Candidate], scores: &mut Vec<Option<f64>>);

    /// Whether every candidate would score 0 for `job`, so the engine may place it by the
    /// tie-break alone, through its indexes, without building candidates to rank.
    fn is_neutral(&self, _job: &Job) -> bool {
        false
    }

    /// The simulated time of the pass about to run, for rankers whose features change with
    /// it (recorded telemetry); the others ignore it.
    fn at(&mut self, _now: crate::job::Seconds) {}

    /// Whether its scores may change with the time alone ([`Self::at`]): then no scheduling
    /// pass may carry on the verdicts of the last one.
    fn varies_with_time(&self) -> bool {
        false
    }
}

/// The built-in ranker: every node scores 0, so the tie-break alone decides (NVLink first for
/// classes that prefer it, then the fewest free GPUs left, then node order). Deterministic.
#[derive(Clone, Copy, Debug, Default)]
pub struct Neutral;

impl Ranker for Neutral {
    fn rank(&mut self, _job: &Job, candidates: &[Candidate], scores: &mut Vec<Option<f64>>) {
        scores.clear();
        scores.resize(candidates.len(), Some(0.0));
    }

    fn is_neutral(&self, _job: &Job) -> bool {
        true
    }
}

impl<R: Ranker + ?Sized> Ranker for &mut R {
    fn rank(&mut self, job: &Job, candidates: &[Candidate], scores: &mut Vec<Option<f64>>) {
        (**self).rank(job, candidates, scores);
    }

    fn is_neutral(&self, job: &Job) -> bool {
        (**self).is_neutral(job)
    }

    fn at(&mut self, now: crate::job::Seconds) {
        (**self).at(now);
    }

    fn varies_with_time(&self) -> bool {
        (**self).varies_with_time()
    }
}
