//! Typed indices into the vectors of [`super::Model`]. An id is only ever made by the lowering
//! that builds the model, so indexing with it cannot go out of bounds.

macro_rules! ids {
    ($($(#[$doc:meta])* $name:ident;)*) => {
        $(
            $(#[$doc])*
            #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
            pub struct $name(u32);

            impl $name {
                /// The id of the element at `index`.
                pub fn from_index(index: usize) -> $name {
                    $name(u32::try_from(index).unwrap_or(u32::MAX))
                }
                /// The index of the element.
                pub fn index(self) -> usize {
                    self.0 as usize
                }
            }
        )*
    };
}

ids! {
    /// A node of the inventory.
    NodeId;
    /// An NVLink domain.
    DomainId;
    /// A rack.
    RackId;
    /// A pool.
    PoolId;
    /// A tier.
    TierId;
    /// A cost center.
    CostCenterId;
    /// A team.
    TeamId;
    /// A job class.
    ClassId;
    /// A scoring rule.
    ScoreId;
    /// A plan.
    PlanId;
    /// A metric.
    MetricId;
    /// A migration.
    MigrationId;
    /// An alert.
    AlertId;
    /// A policy test.
    TestId;
}
