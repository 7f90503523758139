//! The checking passes: rules that need the whole model and the inventory, run after
//! lowering. Each pass is a module named for what it checks; together they guarantee what
//! targets rely on (see docs/architecture.md). [`check`] runs them and returns a [`Verdict`]:
//! a model with no error becomes [`Checked`], the only model the target emitters accept, so
//! "targets never re-check" is a type. [`drift`] compares the declared inventory with a
//! probed one.
//!
//! Invariant: pure. No IO, no printing; the model in, diagnostics out.

mod admission;
mod backfill;
mod budget;
mod capacity;
pub mod drift;
mod empty;
mod lanes;
mod launch;
mod migrations;
mod plans;
mod preemption;
mod routing;
mod scores;
mod target_gaps;
#[cfg(test)]
mod testing;
#[cfg(test)]
mod tests;
mod tier_budget;
pub mod topology;
mod totals;

use placid_lang::checked::{Checked, Verdict};
use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;
use placid_lang::span::Span;

/// Runs every pass over `model`, which lowering produced with the diagnostics `lowered`.
/// Returns the verdict and all diagnostics, lowering's and the passes', sorted. The passes run
/// even after lowering errors, so one build reports every problem; but a model that lowered
/// with errors is partial, so only a model without any error is [`Checked`].
pub fn check(model: Model, lowered: Diagnostics) -> (Verdict, Diagnostics) {
    let mut diagnostics = lowered;
    // A partial model may lack teams, so "no team may use the tier" would be an echo.
    let lowered_clean = !diagnostics.has_errors();
    let topology = topology::Topology::new(&model);
    let empty = empty::Empty::new(&model);
    capacity::check(&model, &mut diagnostics);
    preemption::check(&model, &mut diagnostics);
    budget::check(&model, &mut diagnostics);
    tier_budget::check(&model, &mut diagnostics);
    backfill::check(&model, &mut diagnostics);
    topology::check(&model, &topology, &mut diagnostics);
    let unmet_classes = lanes::check(&model, &mut diagnostics);
    let unfit_stages = launch::check(&model, &mut diagnostics);
    plans::check(&model, &empty, &unmet_classes, &unfit_stages, &mut diagnostics);
    migrations::check(&model, &mut diagnostics);
    totals::check(&model, &mut diagnostics);
    admission::check(&model, &empty, &unmet_classes, &mut diagnostics);
    scores::check(&model, &mut diagnostics);
    if lowered_clean {
        routing::check(&model, &mut diagnostics);
        // What a target cannot carry out is news once the project lowers; before, the errors
        // come first.
        target_gaps::check(&model, &empty, &mut diagnostics);
    }
    diagnostics.sort();
    let verdict = if diagnostics.has_errors() { Verdict::Rejected(model) } else { Verdict::Checked(Checked::from_checker(model)) };
    (verdict, diagnostics)
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
