//! Quotas: how much of each cell (ResourceFlavor, [`super::cells`]) each ClusterQueue is
//! guaranteed, and how much a team may borrow there.
//!
//! Invariants: for every cell and resource, the nominal quotas of all ClusterQueues add up to
//! at most the cell's capacity (exactly its capacity where some team may use it), because
//! cells do not overlap and each is split once. Reservations come off the top, filling the
//! reserved pool's cells cheapest first; the rest is split by share with the largest remainder
//! method ([`apportion`]) between all teams, so no GPU is invented or lost to rounding. The
//! GPUs of both are the language's rule (`Cells::gpus`); CPU and memory are split here alike.
//! The reserved part of a cell is the reserving tier's queue alone, which only teams allowed
//! the tier reach; the unreserved rest of a fenced cell is shared by every team (docs/semantics.md,
//! section 3: `vision` is guaranteed 2 of `nvl-a`'s 4). A team with a backfill tier may borrow
//! what the other teams hold in the cell (the model's rule, `CellGpus::team_limit`), the others
//! borrow nothing. The engine charges its jobs per cell with these same GPU figures, on the
//! cell this queue's flavor order would admit them on (docs/semantics.md, section 4).

use placid_lang::model::cells::CellGpus;
use placid_lang::model::shares::apportion;
use placid_lang::model::{Model, TeamId};

use super::cells::Cells;
use super::resources::Resources;

/// The quotas of every queue, by cell, computed once for the whole model (no per-team sums).
#[derive(Clone, Debug)]
pub struct Quotas {
    /// `[team][cell]`: the team's nominal quota.
    pub teams: Vec<Vec<Resources>>,
    /// `[tier][cell]`: reserved quota (zero where the tier reserves nothing).
    pub tiers: Vec<Vec<Resources>>,
    /// `[cell]`: the teams' nominal quotas together, what a backfilling team borrows from.
    pub team_totals: Vec<Resources>,
    /// The language's GPU quotas per cell, whose [`CellGpus::team_limit`] says what a team may
    /// borrow.
    gpus: CellGpus,
}

impl Quotas {
    /// Computes the quotas of `model` over `cells`.
    pub fn new(model: &Model, cells: &Cells) -> Quotas {
        let gpus = cells.partition.gpus(model);
        let tiers = reservations(cells, &gpus.reserved);
        let shares: Vec<u64> = model.teams.iter().map(|team| u64::from(team.share.value)).collect();
        let mut teams = vec![vec![Resources::default(); cells.cells.len()]; model.teams.len()];
        let mut team_totals = vec![Resources::default(); cells.cells.len()];
        for (cell_index, cell) in cells.cells.iter().enumerate() {
            let reserved = tiers.iter().fold(Resources::default(), |sum, tier| sum.plus(tier[cell_index]));
            let left = cell.resources.minus(reserved);
            let cpu = apportion(left.cpu, &shares);
            let memory = apportion(left.memory_mib, &shares);
            for (team_index, team) in teams.iter_mut().enumerate() {
                let nominal = Resources { cpu: cpu[team_index], memory_mib: memory[team_index], gpus: gpus.teams[team_index][cell_index] };
                team[cell_index] = nominal;
                team_totals[cell_index] = team_totals[cell_index].plus(nominal);
            }
        }
        Quotas { teams, tiers, team_totals, gpus }
    }

    /// What team `team` may borrow in `cell` beyond its nominal quota `own`: nothing unless it
    /// has a backfill tier; then GPUs up to its limit there ([`CellGpus::team_limit`]), and
    /// the CPU and memory the other teams hold.
    pub fn borrowable(&self, model: &Model, team: TeamId, cell: usize, own: Resources) -> Resources {
        if !model.team_backfills(model.team(team)) {
            return Resources::default();
        }
        let gpus = self.gpus.team_limit(model, team, cell).saturating_sub(own.gpus);
        Resources { gpus, ..self.team_totals[cell].minus(own) }
    }
}

/// `[tier][cell]`: the cells' `reserved` GPUs ([`placid_lang::model::cells::Cells::gpus`]), with
/// the CPU and memory that sit beside them.
fn reservations(cells: &Cells, reserved: &[Vec<u64>]) -> Vec<Vec<Resources>> {
    reserved.iter().map(|tier| tier.iter().zip(&cells.cells).map(|(gpus, cell)| cell.resources.share_for_gpus(*gpus)).collect()).collect()
}
