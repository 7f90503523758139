//! Which nodes each phase of a migration uses: the one decision the Slurm scripts and the
//! runbook both read.
//!
//! Target nodes are taken in name order until they hold the phase's share of the workload
//! (rounded up, at least one node), so a later phase's nodes always include an earlier
//! phase's: applying a phase only adds nodes and reverting it only removes them.

use placid_lang::model::{Migration, Model, NodeId, Phase, PhaseKind};

/// Slurm's default node weight; nodes get it back when the first phase is reverted.
pub const DEFAULT_WEIGHT: u32 = 1;

/// The weight source nodes keep during the migration. Slurm allocates the lowest weight
/// first, so target nodes weighted above it only take overflow and below it take work first.
pub const SOURCE_WEIGHT: u32 = 50;

/// A migration with its workload and per-phase node sets.
pub struct MigrationPlan<'model> {
    /// The migration.
    pub migration: &'model Migration,
    /// GPUs of work that move at full ramp (see `Model::migration_workload_gpus`).
    pub workload_gpus: u32,
    /// Nodes of the source pool, sorted.
    pub source_nodes: Vec<NodeId>,
    /// The phases in order.
    pub phases: Vec<PhasePlan<'model>>,
}

/// One phase and the nodes it uses.
pub struct PhasePlan<'model> {
    /// The phase.
    pub phase: &'model Phase,
    /// Directory-safe label, `03-ramp-10pct`.
    pub label: String,
    /// GPUs of work on the target pool in this phase.
    pub gpus: u32,
    /// Target nodes that serve the source partition's work in this phase.
    pub joined: Vec<NodeId>,
    /// Target nodes held by a reservation for the phase's window (shadow and canary).
    pub reserved: Vec<NodeId>,
    /// Slurm weight of the joined nodes: `100 - share%`, so work shifts as the share grows.
    pub weight: u32,
}

impl PhasePlan<'_> {
    /// Whether the source nodes leave the source partition (blue-green: all work moves).
    pub fn replaces_source(&self) -> bool {
        self.phase.kind == PhaseKind::BlueGreen
    }
}

impl<'model> MigrationPlan<'model> {
    /// Plans `migration` over `model`.
    pub fn new(model: &'model Model, migration: &'model Migration) -> MigrationPlan<'model> {
        let workload_gpus = model.migration_workload_gpus(migration);
        let target_nodes = &model.pool(migration.to.value).nodes;
        let nodes_for = |basis_points: u32| -> Vec<NodeId> {
            let needed = (u64::from(workload_gpus) * u64::from(basis_points)).div_ceil(10_000).max(1);
            let mut taken = Vec::new();
            let mut gpus = 0u64;
            for node in target_nodes {
                if gpus >= needed {
                    break;
                }
                gpus += u64::from(model.node(*node).gpu_count());
                taken.push(*node);
            }
            taken
        };
        let first_share = migration.phases.iter().map(Phase::basis_points).find(|share| *share > 0).unwrap_or(10_000);
        let phases = migration
            .phases
            .iter()
            .enumerate()
            .map(|(index, phase)| {
                let share = phase.basis_points();
                let joined = if phase.kind == PhaseKind::Shadow { Vec::new() } else { nodes_for(share) };
                let reserved = match phase.kind {
                    PhaseKind::Shadow => nodes_for(first_share),
                    PhaseKind::Canary => joined.clone(),
                    PhaseKind::Ramp | PhaseKind::BlueGreen => Vec::new(),
                };
                PhasePlan {
                    phase,
                    label: label(index, phase),
                    gpus: u32::try_from((u64::from(workload_gpus) * u64::from(share)).div_ceil(10_000)).unwrap_or(u32::MAX),
                    joined,
                    reserved,
                    weight: 100 - share / 100,
                }
            })
            .collect();
        MigrationPlan { migration, workload_gpus, source_nodes: model.pool(migration.from.value).nodes.clone(), phases }
    }
}

fn label(index: usize, phase: &Phase) -> String {
    let number = index + 1;
    match phase.weight {
        Some(weight) if weight.basis_points % 100 == 0 => format!("{number:02}-{}-{}pct", phase.kind.as_str(), weight.basis_points / 100),
        Some(weight) => format!("{number:02}-{}-{}bp", phase.kind.as_str(), weight.basis_points),
        None => format!("{number:02}-{}", phase.kind.as_str()),
    }
}
