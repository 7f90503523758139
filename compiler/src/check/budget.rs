//! Money: reserved capacity is paid for around the clock and must fit the daily budget of the
//! tier's cost center; team budgets must fit their cost center's. All sums are in integer
//! minor units, so they are exact.

use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{CostCenterId, Model, PoolId};
use placid_lang::units::Money;

/// The daily cost of reserving `gpus` GPUs of `pool`, priced at the pool's most expensive
/// node (a reservation may land on any of them), or `None` when no node has a price.
pub fn reservation_daily_cost(model: &Model, pool: PoolId, gpus: u32) -> Option<Money> {
    let price = model.pool(pool).nodes.iter().filter_map(|id| model.node(*id).cost_per_gpu_hour).max_by_key(|money| money.minor)?;
    Some(Money { currency: price.currency, minor: price.minor.saturating_mul(i64::from(gpus)).saturating_mul(24) })
}

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    let mut reserved: BTreeMap<CostCenterId, (i64, Vec<placid_lang::span::Span>)> = BTreeMap::new();
    for tier in &model.tiers {
        let Some(cost_center) = &tier.cost_center else {
            continue;
        };
        for reservation in &tier.reservations {
            if let Some(cost) = reservation_daily_cost(model, reservation.pool, reservation.gpus) {
                let entry = reserved.entry(cost_center.value).or_default();
                entry.0 = entry.0.saturating_add(cost.minor);
                entry.1.push(reservation.span);
            }
        }
    }
    for (id, (minor, spans)) in reserved {
        let cost_center = model.cost_center(id);
        let Some(budget) = &cost_center.daily_budget else {
            continue;
        };
        if minor > budget.value.minor {
            let cost = Money { currency: budget.value.currency, minor };
            let mut diagnostic = Diagnostic::error(
                Code::ReservationOverBudget,
                spans[0],
                format!(
                    "reserved capacity costs {cost} a day, above cost center `{}`'s daily budget of {}",
                    cost_center.name, budget.value
                ),
            )
            .label("reserved around the clock")
            .with_secondary(budget.span, "daily budget");
            for span in &spans[1..] {
                diagnostic = diagnostic.with_secondary(*span, "also reserved");
            }
            diagnostics.push(diagnostic.help("reserve fewer GPUs, use cheaper nodes, or raise the budget"));
        }
    }
    let mut team_budgets: BTreeMap<CostCenterId, Vec<(&str, Money, placid_lang::span::Span)>> = BTreeMap::new();
    for team in &model.teams {
        if let Some(budget) = &team.daily_budget {
            team_budgets.entry(team.cost_center.value).or_default().push((team.name.as_str(), budget.value, budget.span));
        }
    }
    for (id, budgets) in team_budgets {
        let cost_center = model.cost_center(id);
        let Some(limit) = &cost_center.daily_budget else {
            continue;
        };
        let total: i64 = budgets.iter().map(|(_, money, _)| money.minor).sum();
        if total > limit.value.minor {
            let sum = Money { currency: limit.value.currency, minor: total };
            let (_, _, last_span) = budgets[budgets.len() - 1];
            let parts: Vec<String> = budgets.iter().map(|(team, money, _)| format!("{team} {money}")).collect();
            diagnostics.push(
                Diagnostic::error(
                    Code::TeamBudgetsExceedCostCenter,
                    last_span,
                    format!("team budgets of cost center `{}` add up to {sum} a day, above its {}", cost_center.name, limit.value),
                )
                .label("over the cost center's budget")
                .with_secondary(limit.span, "cost center budget")
                .help(format!("teams: {}; lower them or raise the cost center's budget", parts.join(", "))),
            );
        }
    }
}
