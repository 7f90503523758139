//! Money: reserved capacity is paid for around the clock and must fit the daily budget of the
//! tier's cost center; team budgets must fit their cost center's. All sums are in integer
//! minor units, so they are exact, and bounded: a total past `i64` is reported (E037) at the
//! value that made it overflow, never wrapped into a small total that passes.

use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{CostCenterId, Model, PoolId};
use placid_lang::span::Span;
use placid_lang::units::Money;

use super::total_within;

/// The price of one GPU-hour in `pool`: its most expensive node's (a reservation may land on
/// any of them), or `None` when no node has a price.
pub(super) fn gpu_hour_price(model: &Model, pool: PoolId) -> Option<Money> {
    model.pool(pool).nodes.iter().filter_map(|id| model.node(*id).cost_per_gpu_hour).max_by_key(|money| money.minor)
}

/// An amount as the non-negative integer sums are formed in (lowering refuses negative
/// amounts, in KDL and JSON alike).
pub(super) fn minor(money: Money) -> u128 {
    u128::from(money.minor.unsigned_abs())
}

/// A total of money that does not fit the integer placid counts money in.
fn overflow(span: Span, what: String, label: &str) -> Diagnostic {
    Diagnostic::error(Code::ValueOverflow, span, what)
        .label(label.to_owned())
        .help("the amounts are far beyond any real budget; check them for extra digits")
}

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    // Per cost center: the daily cost of each reservation (GPUs x price x 24, exact in u128)
    // and where it is declared.
    let mut reserved: BTreeMap<CostCenterId, Vec<(u128, Span)>> = BTreeMap::new();
    for tier in &model.tiers {
        let Some(cost_center) = &tier.cost_center else {
            continue;
        };
        for reservation in &tier.reservations {
            if let Some(price) = gpu_hour_price(model, reservation.pool) {
                let cost = minor(price) * u128::from(reservation.gpus) * 24;
                reserved.entry(cost_center.value).or_default().push((cost, reservation.span));
            }
        }
    }
    for (id, costs) in reserved {
        let cost_center = model.cost_center(id);
        let Some(budget) = &cost_center.daily_budget else {
            continue;
        };
        let spans: Vec<Span> = costs.iter().map(|(_, span)| *span).collect();
        let minor = match total_within(costs, i64::MAX as u128) {
            Ok(total) => total as i64,
            Err(span) => {
                let what = format!("the reservations of cost center `{}` cost more a day than placid can count", cost_center.name);
                diagnostics.push(overflow(span, what, "this reservation makes the daily cost overflow"));
                continue;
            }
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
    let mut team_budgets: BTreeMap<CostCenterId, Vec<(&str, Money, Span)>> = BTreeMap::new();
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
        let total = match total_within(budgets.iter().map(|(_, money, span)| (minor(*money), *span)), i64::MAX as u128) {
            Ok(total) => total as i64,
            Err(span) => {
                let what = format!("the team budgets of cost center `{}` add up past what placid can count", cost_center.name);
                diagnostics.push(overflow(span, what, "this budget makes the total overflow"));
                continue;
            }
        };
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
