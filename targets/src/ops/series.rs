//! The policy's static series: what the inventory and the policy declare, as recording
//! rules over constant vectors (`vector(12000)` with labels), so Prometheus holds them beside
//! the telemetry without another exporter, they are versioned with the rules that join on
//! them, and promtool tests them like any rule.

use std::collections::HashMap;

use placid_lang::labels;
use placid_lang::model::{Model, Node};
use placid_lang::units::{Currency, Money};

use super::rule::Rule;

/// NVLink bandwidth of a domain's GPUs (both directions, bytes per second), `{nvlink_domain}`.
pub const NVLINK_CAPACITY: &str = "placid_nvlink_capacity_bytes";
/// GPUs of a domain, `{nvlink_domain}`.
pub const DOMAIN_GPUS: &str = "placid_domain_gpus";
/// GPUs a tier reserves in a pool, `{tier, pool}`.
pub const RESERVED_GPUS: &str = "placid_reserved_gpus";
/// A team's fair share, `{team, cost_center}`.
pub const TEAM_SHARE: &str = "placid_team_share";
/// 1 per team, `{team, cost_center, namespace}`: the join from a team to its cost center.
pub const TEAM_INFO: &str = "placid_team_info";
/// A team's daily budget, `{team, cost_center, currency}`.
pub const TEAM_BUDGET: &str = "placid_team_budget_daily";
/// A cost center's daily budget, `{cost_center, currency}`.
pub const BUDGET: &str = "placid_budget_daily";
/// A node's price of one GPU-hour, `{node, currency}`.
pub const PRICE: &str = "placid_gpu_hour_price";
/// What a GPU-hour on an NVLink node costs above the cheapest GPU-hour without NVLink in the
/// same currency, `{node, currency}`: the part of the price a job pays for NVLink.
pub const NVLINK_PREMIUM: &str = "placid_nvlink_premium_per_gpu_hour";
/// A tier's checkpoint interval in seconds, `{tier}`, for tiers that checkpoint.
pub const CHECKPOINT_SECONDS: &str = "placid_tier_checkpoint_seconds";
/// A node's price of one TB (10^12 bytes) sent out, `{node, currency}`.
pub const EGRESS_PRICE: &str = "placid_egress_price_per_tb";

/// Every static series name, for the check that rules read only what exists.
pub const ALL: &[&str] = &[
    NVLINK_CAPACITY,
    DOMAIN_GPUS,
    RESERVED_GPUS,
    TEAM_SHARE,
    TEAM_INFO,
    TEAM_BUDGET,
    BUDGET,
    PRICE,
    NVLINK_PREMIUM,
    EGRESS_PRICE,
    CHECKPOINT_SECONDS,
];

/// A node's NVLink bandwidth in bytes per second, the sum of its GPUs' links.
pub fn node_nvlink_bytes(node: &Node) -> u128 {
    node.gpus.iter().flat_map(|gpu| &gpu.links).map(|link| u128::from(link.bandwidth.bits_per_second) / 8).sum()
}

fn has_nvlink(node: &Node) -> bool {
    node.gpus.iter().any(|gpu| !gpu.links.is_empty())
}

fn constant(value: f64) -> String {
    format!("vector({value})")
}

fn money(name: &str, amount: Money) -> Rule {
    Rule::record(name, constant(amount.major())).label("currency", amount.currency.code())
}

/// The static series of `model`, in a stable order.
pub fn rules(model: &Model) -> Vec<Rule> {
    let mut rules = Vec::new();
    for domain in &model.domains {
        let bytes: u128 = domain.nodes.iter().map(|node| node_nvlink_bytes(model.node(*node))).sum();
        rules.push(Rule::record(NVLINK_CAPACITY, constant(bytes as f64)).label("nvlink_domain", domain.name.as_str()));
        rules.push(Rule::record(DOMAIN_GPUS, constant(f64::from(domain.gpus))).label("nvlink_domain", domain.name.as_str()));
    }
    for tier in &model.tiers {
        if let Some(every) = tier.checkpoint_seconds() {
            rules.push(Rule::record(CHECKPOINT_SECONDS, constant(every as f64)).label("tier", labels::value(&tier.name)));
        }
        for reservation in &tier.reservations {
            rules.push(
                Rule::record(RESERVED_GPUS, constant(f64::from(reservation.gpus)))
                    .label("tier", labels::value(&tier.name))
                    .label("pool", model.pools[reservation.pool.index()].name.as_str()),
            );
        }
    }
    for center in &model.cost_centers {
        if let Some(budget) = &center.daily_budget {
            rules.push(money(BUDGET, budget.value).label("cost_center", center.name.as_str()));
        }
    }
    for team in &model.teams {
        let center = model.cost_centers[team.cost_center.value.index()].name.as_str();
        rules.push(
            Rule::record(TEAM_SHARE, constant(f64::from(team.share.value)))
                .label("team", labels::value(&team.name))
                .label("cost_center", center),
        );
        rules.push(
            Rule::record(TEAM_INFO, constant(1.0))
                .label("team", labels::value(&team.name))
                .label("cost_center", center)
                .label("namespace", team.namespace.as_str()),
        );
        if let Some(budget) = &team.daily_budget {
            rules.push(money(TEAM_BUDGET, budget.value).label("team", labels::value(&team.name)).label("cost_center", center));
        }
    }
    // The cheapest GPU-hour without NVLink in each currency, found once: per node, it made
    // this function quadratic (25 s for a 56,000-node inventory).
    let mut cheapest_without: HashMap<Currency, i64> = HashMap::new();
    for price in model.nodes.iter().filter(|node| !has_nvlink(node)).filter_map(|node| node.cost_per_gpu_hour) {
        let cheapest = cheapest_without.entry(price.currency).or_insert(price.minor);
        *cheapest = (*cheapest).min(price.minor);
    }
    for node in &model.nodes {
        if let Some(price) = node.cost_per_egress_tb {
            rules.push(money(EGRESS_PRICE, price).label("node", node.name.as_str()));
        }
        let Some(price) = node.cost_per_gpu_hour else { continue };
        rules.push(money(PRICE, price).label("node", node.name.as_str()));
        if let (true, Some(&cheapest)) = (has_nvlink(node), cheapest_without.get(&price.currency)) {
            let premium = Money { currency: price.currency, minor: price.minor.saturating_sub(cheapest).max(0) };
            rules.push(money(NVLINK_PREMIUM, premium).label("node", node.name.as_str()));
        }
    }
    rules
}
