//! Money as Slurm billing units. Slurm has no currency: a job's `billing` TRES is the sum of
//! its partition's `TRESBillingWeights`, accrued per minute, and budgets are association
//! `GrpTRESMins=billing=`. placid's unit: a GPU weight is the GPU-hour price in minor currency
//! units (cents), so one billing-minute is 1/60 of a minor unit and a daily budget of `b`
//! minor units is `b * 60` billing-minutes. Everything stays an exact integer.
//!
//! Weights sit on untyped `GRES/gpu`: a typed weight (`GRES/gpu:h200`) counts zero at
//! submit-time limit checks for jobs asking `--gres=gpu:N`, so budgets would never hold.

use placid_lang::model::{Model, Pool};
use placid_lang::units::Money;

/// The billing weight of one GPU in `pool`: the highest GPU-hour price among its nodes, so a
/// budget is never under-charged when a partition mixes prices (Slurm prices per partition,
/// not per node).
pub fn gpu_weight(model: &Model, pool: &Pool) -> u64 {
    pool.nodes.iter().filter_map(|id| model.node(*id).cost_per_gpu_hour).map(minor_units).max().unwrap_or(0)
}

/// A daily budget in billing-minutes. Amounts are at most [`Money::MAX_MINOR`], which leaves
/// room for the factor 60; a saturated value would be Slurm's INFINITE, no limit at all.
pub fn budget_minutes(budget: Money) -> u64 {
    minor_units(budget) * 60
}

/// Whether any team or cost center has a daily budget.
pub fn has_budgets(model: &Model) -> bool {
    model.teams.iter().any(|team| team.daily_budget.is_some()) || model.cost_centers.iter().any(|center| center.daily_budget.is_some())
}

fn minor_units(money: Money) -> u64 {
    u64::try_from(money.minor).unwrap_or(0)
}
