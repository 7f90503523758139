//! A score's Wasm plugin as a ranker of the openb simulator: the same module bytes that rank
//! nodes in the extender choose the node of every pod (docs/semantics.md, "Reference
//! placements (openb)"). The simulator's placements know only the [`NodeScore`] trait; this
//! module plugs the Wasm host into it.

use crate::Pod;
use crate::place::{Free, NodeScore, ScoreFailed};
use placid_lang::expr::{JobParam, NodeFeature};

use placid_scoring::host::{HostError, Plugin, Worker};

/// A plugin's worker with the layout of its rows and parameters.
pub struct WasmScore {
    worker: Worker,
    features: Vec<NodeFeature>,
    params: Vec<JobParam>,
    prefers_min: bool,
    rows: Vec<f64>,
    block: Vec<f64>,
}

impl WasmScore {
    /// A ranker running `plugin`.
    pub fn new(plugin: &Plugin) -> Result<WasmScore, HostError> {
        let meta = plugin.meta();
        Ok(WasmScore {
            worker: plugin.worker()?,
            features: meta.node_features(),
            params: meta.job_params(),
            prefers_min: meta.prefers_min(),
            rows: Vec::new(),
            block: Vec::new(),
        })
    }
}

/// A node feature's value for a node of the trace: its free capacity, which is all an openb
/// node list says that a score can use; anything else is missing (NaN).
fn feature(feature: NodeFeature, node: Free) -> f64 {
    match feature {
        NodeFeature::FreeGpuMilli => node.gpu_milli as f64,
        NodeFeature::FreeCpuMilli => node.cpu_milli as f64,
        NodeFeature::FreeMemoryMib => node.memory_mib as f64,
        _ => f64::NAN,
    }
}

/// A job parameter's value for a pod of the trace; anything else is missing (NaN).
fn param(param: JobParam, pod: &Pod) -> f64 {
    match param {
        JobParam::Gpus => f64::from(pod.gpus),
        JobParam::GpuMilli => f64::from(pod.gpu_milli.0),
        JobParam::CpuMilli => pod.cpu_milli as f64,
        _ => f64::NAN,
    }
}

impl NodeScore for WasmScore {
    fn score(&mut self, pod: &Pod, nodes: &[Free], scores: &mut Vec<f64>) -> Result<(), ScoreFailed> {
        self.block.clear();
        self.block.extend(self.params.iter().map(|&entry| param(entry, pod)));
        self.rows.clear();
        for &node in nodes {
            self.rows.extend(self.features.iter().map(|&entry| feature(entry, node)));
        }
        let ranked = self.worker.score(&self.block, &self.rows).map_err(|error| ScoreFailed(error.message))?;
        scores.clear();
        // Higher is better for the simulator; a filtered node (-inf) is refused.
        scores.extend(ranked.scores.iter().zip(&ranked.failed).map(|(&score, &mask)| {
            if mask != 0 || !score.is_finite() {
                f64::NAN
            } else if self.prefers_min {
                -score
            } else {
                score
            }
        }));
        Ok(())
    }
}
