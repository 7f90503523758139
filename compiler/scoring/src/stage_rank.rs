//! The stage scores' plugins as the engine's [`Ranker`]: `placid test`, `placid simulate` and
//! the what-if diff rank a staged job's feasible nodes through the module bytes the extender
//! serves, so a score moves placement the same way everywhere (docs/semantics.md, "Ranking").
//! A job without a score falls to the engine's tie-break alone.
//!
//! Invariants: a node's row is its inventory row with the dynamic columns (free GPUs, GPU
//! milli, CPU and memory) overwritten by the engine's figures at that moment; the job's
//! parameters come from its shape and class through [`param`] alone. A plugin that fails a
//! batch (a trap, its fuel or time limit) ranks that batch neutrally and is counted, so a run
//! never stops half-way and the caller can say how often it happened.

use placid_engine::telemetry::Recorded;
use placid_engine::{Candidate, Job, Ranker, Seconds};
use placid_lang::checked::Checked;
use placid_lang::expr::{Category, JobParam, NodeFeature};
use placid_lang::model::{Model, NvlinkNeed, ScoreId};

use crate::host::Worker;
use crate::job::category_value;
use crate::rank::is_unranked;
use crate::{Codes, LoadError};

/// One score's worker and the layout of its rows and parameters.
struct Slot {
    worker: Worker,
    features: Vec<NodeFeature>,
    params: Vec<JobParam>,
    prefers_min: bool,
    /// Every node's inventory row, in model order.
    inventory: Vec<f64>,
    codes: Codes,
    rows: Vec<f64>,
    block: Vec<f64>,
}

/// The plugins of the scores the model's plan stages use, ranking the engine's candidates.
pub struct StageScores<'m> {
    model: &'m Model,
    /// By score index; `None` for a score no stage uses.
    slots: Vec<Option<Slot>>,
    failures: u64,
    /// Recorded utilisation, and the simulated time the next batches are ranked at.
    telemetry: Option<&'m Recorded>,
    now: Seconds,
}

impl<'m> StageScores<'m> {
    /// Emits and loads the plugin of every score a plan stage uses.
    pub fn new(model: &'m Checked) -> Result<StageScores<'m>, LoadError> {
        let mut slots: Vec<Option<Slot>> = (0..model.scores.len()).map(|_| None).collect();
        let used = model.plans.iter().flat_map(|plan| &plan.stages).filter_map(|stage| stage.score.as_ref().map(|score| score.value));
        for score in used {
            let slot = &mut slots[score.index()];
            if slot.is_none() {
                *slot = Some(Slot::load(model, score)?);
            }
        }
        Ok(StageScores { model, slots, failures: 0, telemetry: None, now: 0 })
    }

    /// Takes `node.nvlink_utilization` and `domain.nvlink_utilization` from `recorded` at the
    /// simulated time, instead of the static figure.
    pub fn with_telemetry(&mut self, recorded: &'m Recorded) {
        self.telemetry = Some(recorded);
    }

    /// How many batches a plugin failed (and were ranked neutrally instead).
    pub fn failures(&self) -> u64 {
        self.failures
    }
}

impl Slot {
    fn load(model: &Checked, score: ScoreId) -> Result<Slot, LoadError> {
        let declared = model.score(score);
        let (_, plugin) = crate::compile(model, declared)?;
        let mut codes = Codes::default();
        let inventory = crate::inventory_rows(model, &plugin, &mut codes);
        let meta = plugin.meta();
        Ok(Slot {
            worker: plugin.worker().map_err(|error| crate::refused_at(declared, error))?,
            features: meta.node_features(),
            params: meta.job_params(),
            prefers_min: meta.prefers_min(),
            inventory,
            codes,
            rows: Vec::new(),
            block: Vec::new(),
        })
    }
}

/// Gives each unranked node (filters passed, score NaN: a feature is missing) the score the
/// extender gives it: the middle of the batch's ranked scores (its neutral priority 5 of
/// 0..=10), or just below them when they are all equal (where the extender gives them 10).
fn place_unranked(raw: &[f64], masks: &[u32], scores: &mut [Option<f64>]) {
    let ranked = scores.iter().flatten().copied();
    let (low, high) = ranked.fold((f64::INFINITY, f64::NEG_INFINITY), |(low, high), score| (low.min(score), high.max(score)));
    let neutral = if !low.is_finite() {
        0.0
    } else if high > low {
        low + (high - low) / 2.0
    } else {
        low - 1.0
    };
    for ((score, &raw), &mask) in scores.iter_mut().zip(raw).zip(masks) {
        if is_unranked(raw, mask) {
            *score = Some(neutral);
        }
    }
}

/// A job parameter's value for an engine job: what its shape and class say; NaN where the
/// engine does not know (the GPU memory it needs, where its other pods run), which the score
/// treats as the extender does a pod without that annotation. The job's
/// parameters are those of one of its pods: a gang larger than the biggest candidate node
/// asks each node for that node's size, as its pods do (docs/semantics.md, "Ranking").
fn param(model: &Model, param: JobParam, job: &Job, per_pod: u32, codes: &mut Codes) -> f64 {
    let class = job.class.map(|class| model.class(class));
    match param {
        JobParam::Gpus => f64::from(per_pod),
        JobParam::GpuMilli => f64::from(job.gpu_milli),
        JobParam::CpuMilli => job.cpu_milli_per_gpu.saturating_mul(u64::from(per_pod)) as f64,
        // A class that states no bandwidth asks for none.
        JobParam::CommGbps => class.and_then(|class| class.min_bandwidth).map_or(0.0, |bandwidth| bandwidth.gigabytes_per_second()),
        JobParam::Comm => class.and_then(|class| category_value(Category::Comm, class.comm.as_str(), codes)).unwrap_or(f64::NAN),
        JobParam::NvlinkRequired => f64::from(u8::from(class.is_some_and(|class| class.nvlink == NvlinkNeed::Required))),
        JobParam::Arch => match class.map(|class| class.platforms.as_slice()) {
            Some([only]) => category_value(Category::Arch, only.as_str(), codes).unwrap_or(f64::NAN),
            _ => f64::NAN,
        },
        _ => f64::NAN,
    }
}

/// The engine's figure for a dynamic feature of `candidate` at `now`; `None` for a static one
/// (the telemetry features without a recorded series among them).
fn dynamic(model: &Model, telemetry: Option<&Recorded>, now: Seconds, feature: NodeFeature, candidate: &Candidate) -> Option<f64> {
    match feature {
        NodeFeature::NvlinkUtilization => telemetry.map(|recorded| recorded.node(candidate.node, now)),
        NodeFeature::DomainNvlinkUtilization => {
            telemetry.zip(model.node(candidate.node).domain).map(|(recorded, domain)| recorded.domain(domain, now))
        }
        NodeFeature::GpusFree => Some(f64::from(candidate.free_gpus)),
        NodeFeature::FreeGpuMilli => Some(candidate.free_gpu_milli as f64),
        NodeFeature::FreeCpuMilli => Some(candidate.free_cpu_milli as f64),
        // The engine's "unknown" memory is unlimited; the plugin reads it as missing.
        NodeFeature::FreeMemoryMib => Some(if candidate.free_memory_mib == u64::MAX { f64::NAN } else { candidate.free_memory_mib as f64 }),
        _ => None,
    }
}

impl StageScores<'_> {
    /// Fills the parameter block and the rows of `candidates` for `job`'s score, and returns
    /// them with the slot; `None` when the job has no score. The rows the plugin sees, for a
    /// caller that wants to evaluate them another way (the native evaluator, in the tests).
    pub fn batch(&mut self, job: &Job, candidates: &[Candidate]) -> Option<(&[f64], &[f64])> {
        let slot = self.fill(job, candidates)?;
        Some((&slot.block, &slot.rows))
    }

    fn fill(&mut self, job: &Job, candidates: &[Candidate]) -> Option<&mut Slot> {
        let (model, telemetry, now) = (self.model, self.telemetry, self.now);
        let slot = job.score.and_then(|score| self.slots.get_mut(score.index())).and_then(Option::as_mut)?;
        let largest = candidates.iter().map(|candidate| model.node(candidate.node).gpu_count()).max().unwrap_or(0);
        let per_pod = job.gpus.min(largest.max(1));
        slot.block.clear();
        for &entry in &slot.params {
            let value = param(model, entry, job, per_pod, &mut slot.codes);
            slot.block.push(value);
        }
        let stride = slot.features.len();
        slot.rows.clear();
        for candidate in candidates {
            let start = candidate.node.index() * stride;
            let row = &slot.inventory[start..start + stride];
            slot.rows.extend(
                slot.features.iter().zip(row).map(|(&feature, &value)| dynamic(model, telemetry, now, feature, candidate).unwrap_or(value)),
            );
        }
        Some(slot)
    }
}

impl Ranker for StageScores<'_> {
    fn is_neutral(&self, job: &Job) -> bool {
        job.score.and_then(|score| self.slots.get(score.index())).is_none_or(Option::is_none)
    }

    fn at(&mut self, now: Seconds) {
        self.now = now;
    }

    fn varies_with_time(&self) -> bool {
        self.telemetry.is_some()
    }

    fn rank(&mut self, job: &Job, candidates: &[Candidate], scores: &mut Vec<Option<f64>>) {
        scores.clear();
        let Some(slot) = self.fill(job, candidates) else {
            scores.resize(candidates.len(), Some(0.0));
            return;
        };
        match slot.worker.score(&slot.block, &slot.rows) {
            Ok(ranked) => {
                let prefers_min = slot.prefers_min;
                // Higher is better for the engine; a filtered or infinite score refuses the node.
                scores.extend(
                    ranked
                        .scores
                        .iter()
                        .zip(&ranked.failed)
                        .map(|(&score, &mask)| (mask == 0 && score.is_finite()).then_some(if prefers_min { -score } else { score })),
                );
                place_unranked(&ranked.scores, &ranked.failed, scores);
            }
            Err(_) => {
                self.failures += 1;
                scores.resize(candidates.len(), Some(0.0));
            }
        }
    }
}
