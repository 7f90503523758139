//! What the engine reports: one typed event per thing that happens to a job.

use placid_lang::diag::Code;
use placid_lang::model::{DomainId, NodeId, PoolId, RackId};

use crate::job::{JobId, Seconds};

/// Why a job can never run: it is refused at submission, with a stable code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Reject {
    /// The team may not use the tier.
    TierNotAllowed,
    /// No node of the pool passes the job's filters (arch, platforms, NVLink, bandwidth,
    /// MIG, capacity kind, pinned nodes), even empty.
    NoFeasibleNode,
    /// Feasible nodes exist, but no unit of the class's locality holds the gang, even empty.
    DomainTooSmall,
    /// The job's locality is `any`, and the feasible nodes of the pool together have fewer
    /// GPUs than it asks for.
    PoolTooSmall,
    /// More GPUs than the team can ever hold in the pool, borrowing included.
    ExceedsQuota,
    /// The job alone costs more than its team's or cost center's daily budget.
    ExceedsBudget,
}

impl Reject {
    /// Every reason, in the order a job gets further (the furthest reason over all pools is
    /// reported for a job without a pool).
    pub const ALL: &'static [Reject] = &[
        Reject::TierNotAllowed,
        Reject::NoFeasibleNode,
        Reject::DomainTooSmall,
        Reject::PoolTooSmall,
        Reject::ExceedsQuota,
        Reject::ExceedsBudget,
    ];

    /// The diagnostic code the reason is named by in tests and reports.
    pub fn code(self) -> Code {
        match self {
            Reject::TierNotAllowed => Code::TierNotAllowed,
            Reject::NoFeasibleNode => Code::NoFeasibleNode,
            Reject::DomainTooSmall => Code::DomainTooSmall,
            Reject::PoolTooSmall => Code::StageExceedsPool,
            Reject::ExceedsQuota => Code::ExceedsQuota,
            Reject::ExceedsBudget => Code::ExceedsBudget,
        }
    }

    /// The reason's stable name (`tier-not-allowed`): its code's name.
    pub fn name(self) -> &'static str {
        self.code().name()
    }

    /// The reason named `name`, if any.
    pub fn parse(name: &str) -> Option<Reject> {
        Reject::ALL.iter().copied().find(|reason| reason.name() == name)
    }
}

/// Why a job that can run waits: the language's `expect "queued" reason=...`, so a test and
/// the engine name holds with one type.
pub use placid_lang::model::QueueReason as Hold;

/// Where a job runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Placement {
    /// The pool it was admitted through.
    pub pool: PoolId,
    /// Its share of each node, in node order.
    pub nodes: Vec<NodeShare>,
    /// The NVLink domain, when every node is in the same one.
    pub domain: Option<DomainId>,
    /// The rack, when every node is in the same one.
    pub rack: Option<RackId>,
}

impl Placement {
    /// The nodes, in order.
    pub fn node_ids(&self) -> impl Iterator<Item = NodeId> + '_ {
        self.nodes.iter().map(|share| share.node)
    }
}

/// A job's share of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeShare {
    /// The node.
    pub node: NodeId,
    /// Indices of the GPUs it uses.
    pub gpus: Vec<u32>,
    /// Milli of each of those GPUs (1,000 for whole GPUs).
    pub milli: u32,
    /// Whether the GPUs are MIG instances (one instance of each listed GPU).
    pub mig: bool,
}

/// Something that happened to a job at a time.
#[derive(Clone, Debug, PartialEq)]
pub struct Event {
    /// When.
    pub time: Seconds,
    /// The job.
    pub job: JobId,
    /// What.
    pub kind: EventKind,
}

/// What happened.
#[derive(Clone, Debug, PartialEq)]
pub enum EventKind {
    /// It entered the queue.
    Submitted,
    /// It started.
    Started(Placement),
    /// It ran to its end (or its limit).
    Finished,
    /// It was signalled to make room for `by`; it stops at `stops`, losing the work since its
    /// last checkpoint.
    Preempted {
        /// The job it makes room for.
        by: JobId,
        /// When it stops (the signal plus the tier's preemption window).
        stops: Seconds,
        /// GPU-seconds of work lost: GPUs x time since its last checkpoint at the stop.
        lost_gpu_seconds: u64,
    },
    /// It stopped after a preemption and went back to the queue.
    Requeued,
    /// It stopped after a preemption and was cancelled.
    Cancelled,
    /// It can never run.
    Rejected(Reject),
    /// It waits, for this reason (reported when the reason changes).
    Held(Hold),
    /// It finished a stage with a `promote`, as one of the promoted trials.
    Promoted,
}

#[cfg(test)]
mod tests {
    use placid_lang::diag::Code;

    use super::Reject;

    #[test]
    fn every_rejection_is_named_by_its_own_code_and_parses_back() {
        let codes: Vec<Code> = Reject::ALL.iter().map(|reason| reason.code()).collect();
        assert_eq!(
            codes,
            [
                Code::TierNotAllowed,
                Code::NoFeasibleNode,
                Code::DomainTooSmall,
                Code::StageExceedsPool,
                Code::ExceedsQuota,
                Code::ExceedsBudget
            ]
        );
        for reason in Reject::ALL {
            assert_eq!(Reject::parse(reason.name()), Some(*reason));
        }
        assert_eq!(Reject::parse("no-feasible-node"), Some(Reject::NoFeasibleNode));
        assert_eq!(Reject::parse("nope"), None);
    }
}
