//! Non-preemptible tiers stay unpreemptable by construction: schedulers preempt by priority,
//! so a `never` tier must outrank every preemptible tier, and it must not run on spot
//! capacity, which the provider can reclaim whatever the scheduler says.

use placid_lang::diag::{Code, Diagnostic, Diagnostics};
use placid_lang::model::{CapacityKind, Model};

pub(super) fn check(model: &Model, diagnostics: &mut Diagnostics) {
    for tier in model.tiers.iter().filter(|tier| !tier.is_preemptible()) {
        for other in model.tiers.iter().filter(|other| other.is_preemptible()) {
            if other.priority.value >= tier.priority.value {
                diagnostics.push(
                    Diagnostic::error(
                        Code::PreemptibleNeverTier,
                        tier.priority.span,
                        format!(
                            "tier `{}` is never preempted, but preemptible tier `{}` has priority {} >= {}",
                            tier.name, other.name, other.priority.value, tier.priority.value
                        ),
                    )
                    .label("not the highest priority")
                    .with_secondary(other.priority.span, "higher or equal priority here")
                    .help(format!(
                        "give `{}` a priority above {}; Kueue and Slurm preempt lower priorities first",
                        tier.name, other.priority.value
                    )),
                );
            }
        }
        for reservation in &tier.reservations {
            let pool = model.pool(reservation.pool);
            let spot = pool.nodes.iter().filter(|id| model.node(**id).capacity == CapacityKind::Spot).count();
            if spot > 0 {
                diagnostics.push(
                    Diagnostic::error(
                        Code::PreemptibleNeverTier,
                        reservation.span,
                        format!(
                            "tier `{}` is never preempted, but reserves GPUs in pool `{}`, which has {spot} spot node(s)",
                            tier.name, pool.name
                        ),
                    )
                    .label("spot capacity can be reclaimed")
                    .with_secondary(pool.span, "pool declared here")
                    .help("reserve non-preemptible capacity in pools of reserved or on-demand nodes"),
                );
            }
        }
    }
}
