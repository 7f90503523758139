//! The checking passes: rules that need the whole model and the inventory, run after
//! lowering. Each pass is a module named for what it checks; together they guarantee what
//! targets rely on (see docs/architecture.md), so targets never re-check.

mod budget;
mod capacity;
mod migrations;
mod plans;
mod preemption;
pub mod topology;

use placid_lang::diag::Diagnostics;
use placid_lang::model::Model;

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
    diagnostics.sort();
    diagnostics
}
