//! Tier budgets: a tier's `budget daily=` caps what all its jobs spend in a day, whichever
//! team runs them. Both rules are warnings, because the policy stays enforceable either way:
//! a budget below the tier's reserved capacity leaves paid-for GPUs idle once it is spent
//! (E160), and one above everything the tier's teams may spend together never holds a job
//! back (E161), a setting that does nothing. Sums are exact integers in minor units.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Model, Tier};
use placid_lang::units::Money;

use super::budget::{gpu_hour_price, minor};

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    for (index, tier) in model.tiers.iter().enumerate() {
        let Some(budget) = &tier.daily_budget else {
            continue;
        };
        let limit = minor(budget.value);
        let currency = budget.value.currency;
        if let Some(cost) = reserved_daily_cost(model, tier)
            && cost > limit
        {
            let cost = Money { currency, minor: i64::try_from(cost).unwrap_or(i64::MAX) };
            diagnostics.push(
                Diagnostic::warning(
                    Code::TierBudgetBelowReservation,
                    budget.span,
                    format!("tier `{}`'s reserved GPUs cost {cost} a day, above its daily budget of {}", tier.name, budget.value),
                )
                .label("spent before the day is over")
                .with_secondary(tier.reservations[0].span, "reserved around the clock")
                .help("the reserved GPUs stand idle once the budget is spent: raise the budget or reserve fewer GPUs"),
            );
        }
        let teams: Vec<_> = model.teams.iter().filter(|team| team.tiers.iter().any(|allowed| allowed.value.index() == index)).collect();
        let budgets: Option<Vec<u128>> = teams.iter().map(|team| team.daily_budget.as_ref().map(|money| minor(money.value))).collect();
        if let Some(budgets) = budgets
            && !teams.is_empty()
        {
            let total: u128 = budgets.iter().sum();
            if total < limit {
                let sum = Money { currency, minor: i64::try_from(total).unwrap_or(i64::MAX) };
                let names: Vec<&str> = teams.iter().map(|team| team.name.as_str()).collect();
                diagnostics.push(
                    Diagnostic::warning(
                        Code::TierBudgetNeverBinds,
                        budget.span,
                        format!(
                            "tier `{}`'s daily budget of {} is above the {sum} its teams ({}) may spend together",
                            tier.name,
                            budget.value,
                            names.join(", ")
                        ),
                    )
                    .label("never reached")
                    .help(format!("lower it to at most {sum}, the spend it should cap, or drop it")),
                );
            }
        }
    }
}

/// What the tier's reservations cost a day at each pool's dearest node, when any is priced.
/// Reservations are bounded by the pools' GPUs and prices by `Money::MAX_MINOR`, so the sum of
/// a handful of products is far inside `u128`.
fn reserved_daily_cost(model: &Model, tier: &Tier) -> Option<u128> {
    let costs: Vec<u128> = tier
        .reservations
        .iter()
        .filter_map(|reservation| gpu_hour_price(model, reservation.pool).map(|price| minor(price) * u128::from(reservation.gpus) * 24))
        .collect();
    (!costs.is_empty()).then(|| costs.iter().sum())
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;

    use crate::testing::check_project;

    /// Every code `check` reports for a cluster of two 8-GPU nodes at $2 per GPU-hour, a tier
    /// reserving `reserved` GPUs with a budget of `tier_budget`, and two teams of `team_budget`
    /// each (none when empty).
    fn codes(reserved: u32, tier_budget: &str, team_budget: &str) -> Vec<Code> {
        let gpus: String = (0..8).map(|index| format!("    gpu {index} model=\"H200\"\n")).collect();
        let nodes: String =
            ["a", "b"].iter().map(|name| format!("node \"{name}\" arch=\"x86_64\" {{\n    cost gpu-hour=(usd)2\n{gpus}}}\n")).collect();
        let team_budget = if team_budget.is_empty() { String::new() } else { format!("    budget daily=(usd){team_budget}\n") };
        let teams: String = ["t1", "t2"]
            .iter()
            .map(|name| format!("team \"{name}\" {{\n    share 1\n    cost-center \"cc\"\n    tiers \"p0\"\n{team_budget}}}\n"))
            .collect();
        let policy = format!(
            "pool \"all\" {{ select arch=\"x86_64\" }}\ncost-center \"cc\"\ntier \"p0\" {{\n    priority 1\n    preemption \"never\"\n    reserve pool=\"all\" gpus={reserved}\n    budget daily=(usd){tier_budget}\n}}\n{teams}"
        );
        let (_, diagnostics) = check_project("", &nodes, &policy);
        diagnostics.iter().map(|diagnostic| diagnostic.code).collect()
    }

    #[test]
    fn a_tier_budget_below_its_reserved_capacity_warns() {
        // 4 GPUs x $2 x 24 h = $192 a day.
        assert_eq!(codes(4, "191", ""), [Code::TierBudgetBelowReservation]);
        assert_eq!(codes(4, "192", ""), []);
    }

    #[test]
    fn a_tier_budget_above_all_its_teams_budgets_warns() {
        assert_eq!(codes(1, "201", "100"), [Code::TierBudgetNeverBinds]);
        assert_eq!(codes(1, "200", "100"), []);
        // A team without a budget can spend any amount, so the tier budget binds.
        assert_eq!(codes(1, "1000", ""), []);
    }
}
