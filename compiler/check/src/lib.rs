//! The checking passes: rules that need the whole model and the inventory, run after
//! lowering. Each pass is a module named for what it checks; together they guarantee what
//! targets rely on (see docs/architecture.md), so targets never re-check. [`drift`] compares
//! the declared inventory with a probed one.
//!
//! Invariant: pure. No IO, no printing; the model in, diagnostics out.

mod budget;
mod capacity;
pub mod drift;
mod migrations;
mod plans;
mod preemption;
#[cfg(test)]
mod tests;
pub mod topology;
mod totals;

use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;
use placid_lang::span::Span;

/// Runs every pass over `model` and returns all diagnostics, sorted.
pub fn check(model: &Model) -> Diagnostics {
    let mut diagnostics = Diagnostics::new();
    let topology = topology::Topology::new(model);
    capacity::check(model, &mut diagnostics);
    preemption::check(model, &mut diagnostics);
    budget::check(model, &mut diagnostics);
    topology::check(model, &topology, &mut diagnostics);
    plans::check(model, &mut diagnostics);
    migrations::check(model, &mut diagnostics);
    totals::check(model, &mut diagnostics);
    diagnostics.sort();
    diagnostics
}

/// The exact total of non-negative `values`, or the span of the value that takes it past
/// `limit` (reported as E037 by the caller, which knows what the total is). Every value a
/// policy can hold is far below `u128::MAX`, so the running total is exact until it passes
/// `limit`, where the sum stops.
fn total_within(values: impl IntoIterator<Item = (u128, Span)>, limit: u128) -> Result<u128, Span> {
    let mut total: u128 = 0;
    for (value, span) in values {
        total = total.saturating_add(value);
        if total > limit {
            return Err(span);
        }
    }
    Ok(total)
}
