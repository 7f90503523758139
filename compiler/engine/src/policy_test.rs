//! Policy tests run through the engine: the starting state, the jobs in sequence, a look at
//! the chosen time, and each expectation compared with what happened. `placid test` reports
//! the results; the checker asks [`impossible`] which expectations no run can meet. An
//! admission expectation (`refused-by-admission`, `admitted`) is judged by the build's
//! Kubernetes admission policies, which the engine does not run: the caller evaluates them and
//! [`admission`] compares its verdicts with the expectations.

use std::collections::BTreeSet;

use placid_lang::model::{Admission, Expectation, Model, NodeId, Outcome, PolicyTest, PoolId, TestJob, Where};
use placid_lang::span::Span;

use crate::cluster::Cluster;
use crate::event::{EventKind, Placement};
use crate::job::{Job, JobId, Seconds};
use crate::place::Miss;
use crate::quota::Quotas;
use crate::rank::Ranker;
use crate::sim::{JobState, Simulation, verdict_in};

/// The run time of a test job that gives none.
pub const DEFAULT_RUN: Seconds = 3600;

/// What one test came to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TestResult {
    /// Every expectation held.
    Passed,
    /// These expectations did not hold.
    Failed(Vec<Mismatch>),
    /// A `running` job of the starting state does not fit where it is put.
    Unrunnable {
        /// The job's span.
        span: Span,
        /// Why.
        message: String,
    },
}

/// An expectation that did not hold.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mismatch {
    /// The expectation's span.
    pub span: Span,
    /// The job it is about, in words: `the job` in a test of one job, else its name or number.
    pub subject: String,
    /// What the test expects, in words (`placed in nvl-b, one NVLink domain`).
    pub expected: String,
    /// What happened, in the same words (`rejected (domain-too-small)`).
    pub actual: String,
}

/// The engine job of a test job.
pub fn job_of(test_job: &TestJob) -> Job {
    let mut job = Job::new(test_job.team.value, test_job.tier.value, test_job.gpus);
    job.class = test_job.class.as_ref().map(|class| class.value);
    job.pool = test_job.pool.as_ref().map(|pool| pool.value);
    job.submit = test_job.at.map_or(0, |at| at.seconds);
    job.run = test_job.run.map_or(DEFAULT_RUN, |run| run.seconds);
    job.tag = test_job.tag.as_ref().map(|tag| tag.value.to_string());
    if !test_job.nodes.is_empty() {
        job.pin = Some(test_job.nodes.iter().map(|node| node.value).collect());
    }
    job
}

/// When a test looks: its `at`, or when its last job arrives.
pub fn look_time(test: &PolicyTest) -> Seconds {
    test.at.map_or_else(
        || test.jobs.iter().filter(|job| !job.running).map(|job| job.at.map_or(0, |at| at.seconds)).max().unwrap_or(0),
        |at| at.seconds,
    )
}

/// Runs `test` on `model`, ranking nodes with `ranker`.
pub fn run<R: Ranker>(model: &Model, test: &PolicyTest, ranker: R) -> TestResult {
    let mut simulation = Simulation::new(model, ranker);
    let mut ids = Vec::with_capacity(test.jobs.len());
    for test_job in &test.jobs {
        let job = job_of(test_job);
        if test_job.running {
            match simulation.start_now(job) {
                Ok(id) => ids.push(id),
                Err(miss) => {
                    let why = match miss {
                        Miss::Full => "its GPUs are not free there".to_owned(),
                        Miss::Never(reason) => format!("it can never run there ({})", reason.name()),
                    };
                    return TestResult::Unrunnable { span: test_job.span, message: format!("the running job does not fit: {why}") };
                }
            }
        } else {
            ids.push(simulation.submit(job));
        }
    }
    let mut placements: Vec<Option<Placement>> = vec![None; simulation.next_id().index()];
    let mut preempted: Vec<(JobId, JobId)> = Vec::new();
    // Starting jobs reported their start before the run; read it from their state.
    for id in &ids {
        if let Some(JobState::Running(placement)) = simulation.state(*id) {
            placements[id.index()] = Some(placement.clone());
        }
    }
    let mut record = |event: &crate::Event| match &event.kind {
        EventKind::Started(placement) => placements[event.job.index()] = Some(placement.clone()),
        EventKind::Preempted { by, .. } => preempted.push((*by, event.job)),
        _ => {}
    };
    simulation.run_until(look_time(test), &mut record);
    let mismatches: Vec<Mismatch> = test
        .expects
        .iter()
        // Admission expectations are [`admission`]'s: the engine has no admission policies.
        .filter(|expect| !expect.outcome.is_admission())
        .filter_map(|expect| {
            let id = ids[expect.job];
            let state = simulation.state(id)?;
            let placement = placements[id.index()].as_ref();
            let victims: BTreeSet<usize> =
                preempted.iter().filter(|(by, _)| *by == id).filter_map(|(_, victim)| ids.iter().position(|each| each == victim)).collect();
            let holds = match &expect.outcome {
                Outcome::Placed(at) => placement.is_some_and(|placement| placed_as(model, at, placement)),
                Outcome::Queued(reason) => {
                    matches!(state, JobState::Pending(hold) if reason.as_ref().is_none_or(|reason| *hold == Some(reason.value)))
                }
                Outcome::Rejected(reason) => matches!(state, JobState::Rejected(actual) if actual.name() == reason.value.as_str()),
                Outcome::Preempts(expected) => expected.iter().map(|victim| victim.value).collect::<BTreeSet<usize>>() == victims,
                // Not reached: filtered out above, they are [`admission`]'s.
                Outcome::RefusedByAdmission(_) | Outcome::Admitted => true,
            };
            (!holds).then(|| Mismatch {
                span: expect.span,
                subject: test.subject(expect.job),
                expected: test.expected(model, expect),
                actual: actual(model, test, expect, state, placement, &victims),
            })
        })
        .collect();
    if mismatches.is_empty() { TestResult::Passed } else { TestResult::Failed(mismatches) }
}

/// Whether `placement` is where `at` says.
fn placed_as(model: &Model, at: &Where, placement: &Placement) -> bool {
    let nodes: Vec<NodeId> = placement.node_ids().collect();
    at.pool.as_ref().is_none_or(|pool| pool.value == placement.pool)
        && (!at.same_domain || placement.domain.is_some())
        && at.domain.as_ref().is_none_or(|domain| placement.domain == Some(domain.value))
        && at.rack.as_ref().is_none_or(|rack| placement.rack == Some(rack.value))
        && at.chassis.as_ref().is_none_or(|chassis| nodes.iter().all(|node| model.node(*node).chassis.as_ref() == Some(&chassis.value)))
        && (at.nodes.is_empty() || at.nodes.iter().map(|node| node.value).collect::<BTreeSet<_>>() == nodes.iter().copied().collect())
}

/// The admission expectations of `test` that `verdicts` (what the build's admission policies
/// made of each job's workload, by job index; `None` where it was not evaluated) do not meet.
/// An expectation whose job has no verdict fails: a test that was not run must not pass.
pub fn admission(model: &Model, test: &PolicyTest, verdicts: &[Option<Admission>]) -> Vec<Mismatch> {
    test.expects
        .iter()
        .filter(|expect| expect.outcome.is_admission())
        .filter_map(|expect| {
            let verdict = verdicts.get(expect.job).and_then(Option::as_ref);
            let holds = match (&expect.outcome, verdict) {
                (Outcome::Admitted, Some(Admission::Admitted)) => true,
                (Outcome::RefusedByAdmission(message), Some(Admission::Refused(messages))) => {
                    message.as_ref().is_none_or(|message| messages.iter().any(|refusal| refusal.contains(message.value.as_str())))
                }
                _ => false,
            };
            let actual = match verdict {
                None => "not evaluated by admission".to_owned(),
                Some(Admission::Admitted) => "admitted".to_owned(),
                Some(Admission::Refused(messages)) => {
                    let quoted: Vec<String> = messages.iter().map(|message| format!("\"{message}\"")).collect();
                    format!("refused by admission: {}", quoted.join("; "))
                }
            };
            (!holds).then(|| Mismatch {
                span: expect.span,
                subject: test.subject(expect.job),
                expected: test.expected(model, expect),
                actual,
            })
        })
        .collect()
}

/// What happened to the expectation's job, in the words of [`expected`].
fn actual(
    model: &Model,
    test: &PolicyTest,
    expect: &Expectation,
    state: &JobState,
    placement: Option<&Placement>,
    victims: &BTreeSet<usize>,
) -> String {
    if matches!(expect.outcome, Outcome::Preempts(_)) {
        return if victims.is_empty() {
            format!("preempts nothing ({})", state_words(model, state, placement))
        } else {
            format!("preempts {}", victims.iter().map(|victim| test.job_name(*victim)).collect::<Vec<_>>().join(" "))
        };
    }
    state_words(model, state, placement)
}

fn state_words(model: &Model, state: &JobState, placement: Option<&Placement>) -> String {
    let placed = |placement: &Placement| {
        let mut parts = vec![format!("placed in pool {}", model.pool(placement.pool).name)];
        if let Some(domain) = placement.domain {
            parts.push(format!("in domain {}", model.domain(domain).name));
        }
        if let Some(rack) = placement.rack {
            parts.push(format!("in rack {}", model.rack(rack).name));
        }
        let names: BTreeSet<&str> = placement.node_ids().map(|node| model.node(node).name.as_str()).collect();
        parts.push(format!("on {}", names.into_iter().collect::<Vec<_>>().join(" ")));
        parts.join(" ")
    };
    match state {
        JobState::Running(placement) | JobState::Draining(placement) => placed(placement),
        JobState::Finished => placement.map_or_else(|| "finished".to_owned(), |placement| format!("{}, finished", placed(placement))),
        JobState::Pending(Some(hold)) => format!("queued ({})", hold.as_str()),
        JobState::Pending(None) | JobState::Future | JobState::Waiting => "queued".to_owned(),
        JobState::Cancelled => "cancelled".to_owned(),
        JobState::Rejected(reason) => format!("rejected ({})", reason.name()),
    }
}

/// The expectations of `test` that no run can meet, with why: a job expected placed where it
/// can never run (its filters, its locality unit, its quota or budget in that pool), or in a
/// pool other than the one it asks for.
pub fn impossible(model: &Model, test: &PolicyTest) -> Vec<(Span, String)> {
    let quotas = Quotas::new(model);
    let empty = Cluster::new(model);
    let mut found = Vec::new();
    for expect in &test.expects {
        let Outcome::Placed(at) = &expect.outcome else { continue };
        let test_job = &test.jobs[expect.job];
        let mut job = job_of(test_job);
        // Judged at the tier and class the job runs at, as the simulation submits it.
        crate::routing::apply(model, &mut job);
        if !model.team(job.team).tiers.iter().any(|tier| tier.value == job.tier) {
            found.push((
                expect.span,
                format!(
                    "the job can never be placed: team `{}` may not use tier `{}`",
                    model.team(job.team).name,
                    model.tier(job.tier).name
                ),
            ));
            continue;
        }
        let pools: Vec<PoolId> = match (job.pool, &at.pool) {
            (Some(asked), Some(expected)) if asked != expected.value => {
                found.push((
                    expected.span,
                    format!(
                        "the job asks for pool `{}`, so it is never placed in `{}`",
                        model.pool(asked).name,
                        model.pool(expected.value).name
                    ),
                ));
                continue;
            }
            (Some(pool), _) => vec![pool],
            (None, Some(expected)) => vec![expected.value],
            (None, None) => (0..model.pools.len()).map(PoolId::from_index).collect(),
        };
        let reasons: Vec<_> = pools.iter().map(|pool| verdict_in(model, &quotas, &empty, &job, *pool)).collect();
        if reasons.iter().all(Result::is_err) {
            let reason = reasons.into_iter().filter_map(Result::err).max().map_or("no-feasible-node", |reason| reason.name());
            let span = at.pool.as_ref().map_or(expect.span, |pool| pool.span);
            found.push((span, format!("the job can never be placed there ({reason})")));
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use placid_lang::model::{Admission, Expectation, Model, Outcome, PolicyTest, TeamId, TestJob, TierId};
    use placid_lang::name::Name;
    use placid_lang::span::{Span, Spanned};

    fn test_of(outcomes: Vec<Outcome>) -> PolicyTest {
        let job = TestJob {
            span: Span::DETACHED,
            name: None,
            running: false,
            team: Spanned::new(TeamId::from_index(0), Span::DETACHED),
            tier: Spanned::new(TierId::from_index(0), Span::DETACHED),
            class: None,
            gpus: 1,
            pool: None,
            nodes: Vec::new(),
            at: None,
            run: None,
            tag: None,
        };
        let expects = outcomes.into_iter().map(|outcome| Expectation { span: Span::DETACHED, job: 0, outcome }).collect();
        PolicyTest {
            name: Name::new("t").unwrap_or_else(|error| panic!("{error}")),
            span: Span::DETACHED,
            jobs: vec![job],
            at: None,
            expects,
        }
    }

    fn refused(message: Option<&str>) -> Outcome {
        Outcome::RefusedByAdmission(message.map(|message| Spanned::new(message.to_owned(), Span::DETACHED)))
    }

    #[test]
    fn admission_expectations_are_held_to_the_verdicts() {
        let model = Model::default();
        let forbidden = Some(Admission::Refused(vec!["team a may not use tier t".to_owned()]));
        let mismatches = |outcome: Outcome, verdict: &Option<Admission>| {
            super::admission(&model, &test_of(vec![outcome]), std::slice::from_ref(verdict))
                .into_iter()
                .map(|mismatch| (mismatch.expected, mismatch.actual))
                .collect::<Vec<_>>()
        };
        assert_eq!(mismatches(refused(None), &forbidden), []);
        assert_eq!(mismatches(refused(Some("may not use tier")), &forbidden), []);
        assert_eq!(mismatches(Outcome::Admitted, &Some(Admission::Admitted)), []);
        assert_eq!(
            mismatches(refused(Some("grace period")), &forbidden),
            [(
                "refused by admission with a message containing \"grace period\"".to_owned(),
                "refused by admission: \"team a may not use tier t\"".to_owned()
            )]
        );
        assert_eq!(
            mismatches(Outcome::Admitted, &forbidden),
            [("admitted".to_owned(), "refused by admission: \"team a may not use tier t\"".to_owned())]
        );
        assert_eq!(mismatches(refused(None), &Some(Admission::Admitted)), [("refused by admission".to_owned(), "admitted".to_owned())]);
        // Not evaluated is never a pass.
        assert_eq!(mismatches(Outcome::Admitted, &None), [("admitted".to_owned(), "not evaluated by admission".to_owned())]);
    }

    #[test]
    fn a_failure_names_its_job_among_several() {
        let mut test = test_of(vec![Outcome::Admitted]);
        assert_eq!(test.subject(0), "the job");
        let first = test.jobs[0].clone();
        test.jobs.push(TestJob {
            name: Some(Spanned::new(Name::new("sweep").unwrap_or_else(|error| panic!("{error}")), Span::DETACHED)),
            ..first
        });
        assert_eq!((test.subject(0), test.subject(1)), ("job #1".to_owned(), "job `sweep`".to_owned()));
        let verdicts = [None, Some(Admission::Refused(vec!["no".to_owned()]))];
        test.expects[0].job = 1;
        let mismatch = super::admission(&Model::default(), &test, &verdicts);
        assert_eq!(mismatch.iter().map(|mismatch| mismatch.subject.as_str()).collect::<Vec<_>>(), ["job `sweep`"]);
    }
}
