//! Policy tests (`test` blocks): a starting state, submitted jobs, a time to look and the
//! expected outcomes, which `placid test` runs through the engine. Named `policy_test` so it
//! is not mistaken for the crate's own unit tests.

use std::collections::BTreeSet;

use crate::model::{ClassId, DomainId, Model, NodeId, PoolId, RackId, TeamId, TierId};
use crate::name::Name;
use crate::span::{Span, Spanned};
use crate::units::Duration;

/// A job of a policy test: one already running in the starting state, or one submitted.
#[derive(Clone, Debug, PartialEq)]
pub struct TestJob {
    /// Where it is declared.
    pub span: Span,
    /// The name expectations refer to it by (`job "big" ...`), if any.
    pub name: Option<Spanned<Name>>,
    /// Whether it is running when the test starts (`running`), rather than submitted (`job`).
    pub running: bool,
    /// Submitting team.
    pub team: Spanned<TeamId>,
    /// Tier.
    pub tier: Spanned<TierId>,
    /// Class.
    pub class: Option<Spanned<ClassId>>,
    /// GPUs.
    pub gpus: u32,
    /// Pool the job asks for, if any.
    pub pool: Option<Spanned<PoolId>>,
    /// The nodes it must run on (`nodes "a" "b"`); empty means anywhere in its pool.
    pub nodes: Vec<Spanned<NodeId>>,
    /// When a submitted job arrives, from the start of the test (`at=`; 0 by default).
    pub at: Option<Duration>,
    /// How long it runs (`run=`; an hour by default).
    pub run: Option<Duration>,
    /// The tag it is submitted with (`tag=`): a `route` of the tag sets its tier and class.
    pub tag: Option<Spanned<Name>>,
}

/// Why a job is expected to wait (`expect "queued" reason=...`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum QueueReason {
    /// Its team's or cost center's budget has no room today.
    Budget,
    /// Its team's quota in the pool (or its tier's reservation) is used up.
    Quota,
    /// No placement fits the free capacity, and nothing it may preempt frees one.
    Capacity,
    /// It would fit, but a job ahead of it holds the reservation, or its tier may not start
    /// out of order.
    Priority,
}

impl QueueReason {
    /// Every reason.
    pub const ALL: &'static [QueueReason] = &[QueueReason::Budget, QueueReason::Quota, QueueReason::Capacity, QueueReason::Priority];

    /// The keyword in tests and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            QueueReason::Budget => "budget",
            QueueReason::Quota => "quota",
            QueueReason::Capacity => "capacity",
            QueueReason::Priority => "priority",
        }
    }
}

/// Where a placed job is expected to be; every given condition must hold.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Where {
    /// The pool it lands in.
    pub pool: Option<Spanned<PoolId>>,
    /// Whether all its GPUs must be in one NVLink domain.
    pub same_domain: bool,
    /// The NVLink domain all its nodes are in.
    pub domain: Option<Spanned<DomainId>>,
    /// The rack all its nodes are in.
    pub rack: Option<Spanned<RackId>>,
    /// The chassis all its nodes are in.
    pub chassis: Option<Spanned<Name>>,
    /// Exactly these nodes (`nodes "a" "b"`); empty means any.
    pub nodes: Vec<Spanned<NodeId>>,
}

/// What a policy test expects of one of its jobs.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// The job runs, as described.
    Placed(Where),
    /// The job waits, for this reason if one is given.
    Queued(Option<Spanned<QueueReason>>),
    /// The job is rejected with this reason, a diagnostic code name (`tier-not-allowed`).
    Rejected(Spanned<Name>),
    /// The job preempts exactly these jobs of the test (indices into its jobs).
    Preempts(Vec<Spanned<usize>>),
    /// The build's Kubernetes admission policies refuse the job's workload, with a message
    /// containing this text if one is given (`message=`).
    RefusedByAdmission(Option<Spanned<String>>),
    /// The build's Kubernetes admission policies admit the job's workload.
    Admitted,
}

impl PolicyTest {
    /// Job `index` as a report names it among others: `` `name` ``, or `job #n` counting the
    /// test's jobs from 1 in declaration order.
    pub fn job_name(&self, index: usize) -> String {
        self.jobs[index].name.as_ref().map_or_else(|| format!("job #{}", index + 1), |name| format!("`{}`", name.value))
    }

    /// Job `index` as the subject of a sentence: `the job` when it is the test's only one,
    /// `` job `name` `` or `job #n` among several.
    pub fn subject(&self, index: usize) -> String {
        match &self.jobs[index].name {
            _ if self.jobs.len() == 1 => "the job".to_owned(),
            Some(name) => format!("job `{}`", name.value),
            None => format!("job #{}", index + 1),
        }
    }

    /// The expectation `expect` in words, as `placid test` and the semantic diff say it.
    pub fn expected(&self, model: &Model, expect: &Expectation) -> String {
        match &expect.outcome {
            Outcome::Placed(at) => {
                let mut parts = vec!["placed".to_owned()];
                if let Some(pool) = &at.pool {
                    parts.push(format!("in pool {}", model.pool(pool.value).name));
                }
                if at.same_domain {
                    parts.push("in one NVLink domain".to_owned());
                }
                if let Some(domain) = &at.domain {
                    parts.push(format!("in domain {}", model.domain(domain.value).name));
                }
                if let Some(rack) = &at.rack {
                    parts.push(format!("in rack {}", model.rack(rack.value).name));
                }
                if let Some(chassis) = &at.chassis {
                    parts.push(format!("in chassis {}", chassis.value));
                }
                if !at.nodes.is_empty() {
                    let names: BTreeSet<&str> = at.nodes.iter().map(|node| model.node(node.value).name.as_str()).collect();
                    parts.push(format!("on {}", names.into_iter().collect::<Vec<_>>().join(" ")));
                }
                parts.join(" ")
            }
            Outcome::Queued(reason) => {
                reason.as_ref().map_or_else(|| "queued".to_owned(), |reason| format!("queued ({})", reason.value.as_str()))
            }
            Outcome::Rejected(reason) => format!("rejected ({})", reason.value),
            Outcome::Preempts(victims) => {
                let names: Vec<String> = victims.iter().map(|victim| self.job_name(victim.value)).collect();
                format!("preempts {}", names.join(" "))
            }
            Outcome::RefusedByAdmission(message) => message.as_ref().map_or_else(
                || "refused by admission".to_owned(),
                |message| format!("refused by admission with a message containing \"{}\"", message.value),
            ),
            Outcome::Admitted => "admitted".to_owned(),
        }
    }
}

impl Outcome {
    /// Whether the build's Kubernetes admission policies judge it, rather than the engine.
    pub fn is_admission(&self) -> bool {
        matches!(self, Outcome::RefusedByAdmission(_) | Outcome::Admitted)
    }
}

/// What the build's Kubernetes admission policies make of a test job's workload. `placid
/// test` renders the workload from the build's templates and runs the policies (the driver,
/// which may read the targets), then the engine compares it with the expectations.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Admission {
    /// Admitted.
    Admitted,
    /// Refused with these messages, one per failed validation.
    Refused(Vec<String>),
}

/// One `expect` of a policy test.
#[derive(Clone, Debug, PartialEq)]
pub struct Expectation {
    /// Where it is declared.
    pub span: Span,
    /// The job it is about (an index into the test's jobs): `job=`, or the last `job`.
    pub job: usize,
    /// What is expected.
    pub outcome: Outcome,
}

/// A policy test: a starting state, jobs submitted in sequence, a time to look, and what the
/// team expects then, like `opa test`. `placid test` runs it through the engine.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyTest {
    /// The test's name.
    pub name: Name,
    /// Where it is declared.
    pub span: Span,
    /// The jobs: `running` ones (the starting state) and submitted ones, in declaration order.
    pub jobs: Vec<TestJob>,
    /// When to look, from the start of the test (`at`); by default when the last job arrives.
    pub at: Option<Duration>,
    /// The expectations, at least one.
    pub expects: Vec<Expectation>,
}
