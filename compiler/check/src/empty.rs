//! The engine's empty cluster: the quotas and the idle nodes of the model, which answer
//! whether a plan stage can ever run (its hardware, its quota) and what it would cost. Built
//! once per check and lent to every pass that asks the engine (`plans`, `admission`,
//! `target_gaps`), so the checker's verdicts are the engine's.

use placid_engine::cluster::Cluster;
use placid_engine::quota::Quotas;
use placid_lang::model::Model;

/// The engine's empty cluster of a model.
pub(super) struct Empty {
    pub(super) quotas: Quotas,
    pub(super) cluster: Cluster,
}

impl Empty {
    pub(super) fn new(model: &Model) -> Empty {
        Empty { quotas: Quotas::new(model), cluster: Cluster::new(model) }
    }
}
