//! Pools and reservations: every pool selects something, and reservations fit their pools,
//! alone and together.

use std::collections::BTreeMap;

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{Model, PoolId};

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    // A recovered pool (an error of its own) selects nothing known: no size to check.
    for pool in model.pools.iter().filter(|pool| !pool.recovered) {
        if pool.nodes.is_empty() {
            diagnostics.push(
                Diagnostic::error(Code::EmptyPool, pool.span, format!("pool `{}` selects no node of the inventory", pool.name))
                    .label("empty pool")
                    .help(format!(
                        "the inventory has {} nodes; check the selector's values against it (`placid graph` lists domains and racks)",
                        model.nodes.len()
                    )),
            );
        } else if pool.gpus == 0 {
            diagnostics.push(
                Diagnostic::warning(Code::EmptyPool, pool.span, format!("pool `{}` has nodes but no GPUs", pool.name))
                    .label("no GPUs")
                    .help("GPU jobs can never run here"),
            );
        }
    }
    let mut by_pool: BTreeMap<PoolId, Vec<(&str, u32, placid_lang::span::Span)>> = BTreeMap::new();
    for tier in &model.tiers {
        for reservation in &tier.reservations {
            let pool = model.pool(reservation.pool);
            if reservation.gpus > pool.gpus && !pool.nodes.is_empty() {
                diagnostics.push(
                    Diagnostic::error(
                        Code::ReservationExceedsPool,
                        reservation.span,
                        format!("tier `{}` reserves {} GPUs in pool `{}`, which has {}", tier.name, reservation.gpus, pool.name, pool.gpus),
                    )
                    .label(format!("{} GPUs short", reservation.gpus - pool.gpus))
                    .with_secondary(pool.span, "pool declared here")
                    .help(format!("reserve at most {} GPUs, or add nodes to the pool", pool.gpus)),
                );
            }
            by_pool.entry(reservation.pool).or_default().push((tier.name.as_str(), reservation.gpus, reservation.span));
        }
    }
    for (pool_id, reservations) in by_pool {
        let pool = model.pool(pool_id);
        if pool.recovered {
            continue;
        }
        // Each reservation fits a u32, their sum may not: add them in u64, where any number
        // of them fits, so the comparison sees the true total.
        let total: u64 = reservations.iter().map(|(_, gpus, _)| u64::from(*gpus)).sum();
        if reservations.len() > 1 && total > u64::from(pool.gpus) && reservations.iter().all(|(_, gpus, _)| *gpus <= pool.gpus) {
            let (_, _, last_span) = reservations[reservations.len() - 1];
            let parts: Vec<String> = reservations.iter().map(|(tier, gpus, _)| format!("{tier}: {gpus}")).collect();
            let mut diagnostic = Diagnostic::error(
                Code::ReservationsExceedPool,
                last_span,
                format!("reservations in pool `{}` add up to {total} GPUs, but it has {}", pool.name, pool.gpus),
            )
            .label(format!("{} GPUs over", total - u64::from(pool.gpus)))
            .help(format!("reservations: {}; lower them so they fit in {} GPUs together", parts.join(", "), pool.gpus));
            for (_, _, span) in &reservations[..reservations.len() - 1] {
                diagnostic = diagnostic.with_secondary(*span, "also reserved here");
            }
            diagnostics.push(diagnostic);
        }
    }
}
