//! Risk flags: policy changes that take capacity, money or safety from someone's jobs even
//! when everything still compiles: a tier reserving fewer GPUs, a lower (or new) daily budget,
//! checkpoints further apart. Each names whose jobs it puts at risk, so that `--simulate` can
//! set the measured effect beside it (preemption changes and quota reductions are flagged by
//! the semantic diff itself, with their subjects).

use std::collections::BTreeMap;

use placid_lang::model::{Model, Tier};
use placid_lang::units::Money;

use crate::model_diff::{Danger, DangerKind, Subject};

/// The risky changes from `base` to `head`, for elements present on both sides (a removed
/// element is a deletion, flagged on its own).
pub fn risks(base: &Model, head: &Model) -> Vec<Danger> {
    let mut risks = Vec::new();
    for before in &base.tiers {
        let Some(after) = head.tiers.iter().find(|tier| tier.name == before.name) else { continue };
        let subject = || Subject::Tier(before.name.to_string());
        let (reserved_before, reserved_after) = (reserved(base, before), reserved(head, after));
        for (pool, gpus) in &reserved_before {
            let left = reserved_after.get(pool).copied().unwrap_or(0);
            if left < *gpus {
                let message = format!("tier {} reserves fewer GPUs in pool {pool}: {gpus} → {left}", before.name);
                risks.push(Danger::of(DangerKind::ReservationCut, subject(), message));
            }
        }
        let budget = |tier: &Tier| tier.daily_budget.as_ref().map(|budget| budget.value);
        if let Some(message) = budget_cut(budget(before), budget(after)) {
            risks.push(Danger::of(DangerKind::BudgetCut, subject(), format!("tier {} daily budget {message}", before.name)));
        }
        let every = |tier: &Tier| tier.checkpoint.map(|checkpoint| checkpoint.every);
        match (every(before), every(after)) {
            (Some(was), Some(now)) if now.seconds > was.seconds => risks.push(Danger::of(
                DangerKind::CheckpointSparser,
                subject(),
                format!("tier {} checkpoints every {was} → every {now}", before.name),
            )),
            (Some(was), None) => risks.push(Danger::of(
                DangerKind::CheckpointSparser,
                subject(),
                format!("tier {} checkpoints every {was} → never", before.name),
            )),
            _ => {}
        }
    }
    for before in &base.teams {
        let Some(after) = head.teams.iter().find(|team| team.name == before.name) else { continue };
        let budget = |team: &placid_lang::model::Team| team.daily_budget.as_ref().map(|budget| budget.value);
        if let Some(message) = budget_cut(budget(before), budget(after)) {
            let subject = Subject::Team(before.name.to_string());
            risks.push(Danger::of(DangerKind::BudgetCut, subject, format!("team {} daily budget {message}", before.name)));
        }
    }
    for before in &base.cost_centers {
        let Some(after) = head.cost_centers.iter().find(|center| center.name == before.name) else { continue };
        let budget = |center: &placid_lang::model::CostCenter| center.daily_budget.as_ref().map(|budget| budget.value);
        if let Some(message) = budget_cut(budget(before), budget(after)) {
            risks.push(Danger::of(DangerKind::BudgetCut, Subject::All, format!("cost center {} daily budget {message}", before.name)));
        }
    }
    risks
}

/// GPUs a tier reserves, by pool name (names, not ids, are what both sides share).
fn reserved(model: &Model, tier: &Tier) -> BTreeMap<String, u32> {
    let mut by_pool = BTreeMap::new();
    for reservation in &tier.reservations {
        *by_pool.entry(model.pool(reservation.pool).name.to_string()).or_default() += reservation.gpus;
    }
    by_pool
}

/// `(usd)4000.00 → (usd)2000.00` when a budget is lower, or set where there was none; a budget
/// in another currency is a change the semantic diff shows, not one this can order.
fn budget_cut(before: Option<Money>, after: Option<Money>) -> Option<String> {
    match (before, after) {
        (Some(was), Some(now)) if was.currency == now.currency && now.minor < was.minor => Some(format!("{was} → {now}")),
        (None, Some(now)) => Some(format!("none → {now}")),
        _ => None,
    }
}
