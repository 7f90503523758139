//! What became of each job of a replay, so that no job vanishes from a report: the jobs that
//! did not finish are counted per state, reason, tier and team and named, and `--jobs FILE`
//! writes every job's outcome (docs/simulate.md, "Every job's outcome").

use std::collections::BTreeMap;
use std::fmt::Write as _;

use placid_engine::{Hold, Reject};
use placid_lang::model::{Model, NodeId};
use placid_lang::units::Money;
use serde::Serialize;

use crate::trace::TraceJob;

/// How many jobs of one group of unfinished work a report names (every job is in `--jobs`).
pub const NAMED: usize = 10;

/// How a job's replay ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum End {
    /// It ran to its end (or its limit).
    Finished,
    /// It was refused at submission.
    Rejected(Reject),
    /// It was cancelled.
    Cancelled(Cancel),
    /// It was still waiting or running when the replay ended.
    Unfinished(Pending),
}

/// Why a job was cancelled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cancel {
    /// It stopped after a preemption and its tier does not requeue.
    Preempted,
    /// A job it runs after can never finish.
    After,
}

/// What an unfinished job was doing when the replay ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pending {
    /// Running.
    Running,
    /// Queued, held for this reason.
    Held(Hold),
    /// Queued, with no hold reported.
    Queued,
    /// Never submitted: a job it runs after had not ended.
    After,
    /// Never submitted: the replay stopped at its bound on work first.
    NotReplayed,
}

impl End {
    /// The state's name: `finished`, `rejected`, `cancelled` or `unfinished`.
    pub fn state(self) -> &'static str {
        match self {
            End::Finished => "finished",
            End::Rejected(_) => "rejected",
            End::Cancelled(_) => "cancelled",
            End::Unfinished(_) => "unfinished",
        }
    }

    /// Why, for any state but `finished`: a rejection's code name, a hold's keyword.
    pub fn reason(self) -> Option<&'static str> {
        match self {
            End::Finished => None,
            End::Rejected(reason) => Some(reason.name()),
            End::Cancelled(Cancel::Preempted) => Some("preempted"),
            End::Cancelled(Cancel::After) => Some("after-cannot-finish"),
            End::Unfinished(Pending::Running) => Some("running"),
            End::Unfinished(Pending::Held(hold)) => Some(hold.as_str()),
            End::Unfinished(Pending::Queued) => Some("queued"),
            End::Unfinished(Pending::After) => Some("waiting-for-after"),
            End::Unfinished(Pending::NotReplayed) => Some("not-replayed"),
        }
    }

    /// The state and its reason for people: `rejected (exceeds-budget)`, `finished`.
    pub fn describe(self) -> String {
        match self.reason() {
            Some(reason) => format!("{} ({reason})", self.state()),
            None => self.state().to_owned(),
        }
    }
}

/// One job's outcome.
#[derive(Clone, Debug, PartialEq)]
pub struct JobOutcome {
    /// Its name in the trace.
    pub name: String,
    /// How it ended.
    pub end: End,
    /// When it first started, in seconds from the start of the trace.
    pub start: Option<u64>,
    /// When it finished, was rejected or was cancelled.
    pub ended: Option<u64>,
    /// The nodes of its last run, in placement order.
    pub nodes: Vec<NodeId>,
    /// How often it was preempted.
    pub preemptions: u32,
    /// What its runs cost, in minor units of the project's currency.
    pub cost_minor: i64,
}

impl JobOutcome {
    /// A job not yet submitted: its outcome until the events say more.
    pub fn new(name: String) -> JobOutcome {
        JobOutcome {
            name,
            end: End::Unfinished(Pending::After),
            start: None,
            ended: None,
            nodes: Vec::new(),
            preemptions: 0,
            cost_minor: 0,
        }
    }
}

/// The jobs of one state, reason, tier and team that did not finish: counted, and the first
/// [`NAMED`] of them named in trace order.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Tally {
    /// `rejected`, `cancelled` or `unfinished`.
    pub state: &'static str,
    /// Why ([`End::reason`]).
    pub reason: &'static str,
    /// The jobs' tier.
    pub tier: String,
    /// The jobs' team.
    pub team: String,
    /// How many.
    pub count: usize,
    /// The first of them, by name.
    pub jobs: Vec<String>,
}

/// The jobs that did not finish, grouped by state, reason, tier and team, in that order.
pub fn tallies(model: &Model, jobs: &[TraceJob], outcomes: &[JobOutcome]) -> Vec<Tally> {
    let mut groups: BTreeMap<(&'static str, &'static str, &str, &str), Tally> = BTreeMap::new();
    for (job, outcome) in jobs.iter().zip(outcomes) {
        let Some(reason) = outcome.end.reason() else { continue };
        let (tier, team) = (model.tier(job.tier).name.as_str(), model.team(job.team).name.as_str());
        let tally = groups.entry((outcome.end.state(), reason, tier, team)).or_insert_with(|| Tally {
            state: outcome.end.state(),
            reason,
            tier: tier.to_owned(),
            team: team.to_owned(),
            count: 0,
            jobs: Vec::new(),
        });
        tally.count += 1;
        if tally.jobs.len() < NAMED {
            tally.jobs.push(outcome.name.clone());
        }
    }
    groups.into_values().collect()
}

/// The form `--jobs FILE` writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JobsFormat {
    /// CSV with a header line (`.csv`).
    Csv,
    /// One JSON object a line (`.jsonl`, `.ndjson`).
    JsonLines,
}

impl JobsFormat {
    /// The form a file's extension names; `None` for any other extension.
    pub fn of_extension(extension: &str) -> Option<JobsFormat> {
        match extension {
            "csv" => Some(JobsFormat::Csv),
            "jsonl" | "ndjson" => Some(JobsFormat::JsonLines),
            _ => None,
        }
    }
}

/// One line of `--jobs`; times in seconds from the start of the trace.
#[derive(Serialize)]
struct Line<'a> {
    job: &'a str,
    team: &'a str,
    tier: &'a str,
    gpus: u32,
    submit: u64,
    start: Option<u64>,
    end: Option<u64>,
    state: &'static str,
    reason: Option<&'static str>,
    nodes: Vec<&'a str>,
    preemptions: u32,
    cost: String,
}

/// The CSV header of `--jobs`: [`Line`]'s fields.
const CSV_HEADER: &str = "job,team,tier,gpus,submit,start,end,state,reason,nodes,preemptions,cost";

/// Every job's outcome in `format`, in trace order. The CSV's `nodes` are separated by spaces.
pub fn jobs_file(model: &Model, trace: &[TraceJob], outcomes: &[JobOutcome], format: JobsFormat) -> Result<String, String> {
    let currency = model.project.currency;
    let lines = trace.iter().zip(outcomes).map(|(job, outcome)| Line {
        job: &outcome.name,
        team: model.team(job.team).name.as_str(),
        tier: model.tier(job.tier).name.as_str(),
        gpus: job.gpus,
        submit: job.submit,
        start: outcome.start,
        end: outcome.ended,
        state: outcome.end.state(),
        reason: outcome.end.reason(),
        nodes: outcome.nodes.iter().map(|node| model.node(*node).name.as_str()).collect(),
        preemptions: outcome.preemptions,
        cost: Money { currency, minor: outcome.cost_minor }.to_string(),
    });
    match format {
        JobsFormat::JsonLines => {
            let mut text = String::new();
            for line in lines {
                text.push_str(&serde_json::to_string(&line).map_err(|error| error.to_string())?);
                text.push('\n');
            }
            Ok(text)
        }
        JobsFormat::Csv => {
            let mut writer = csv::Writer::from_writer(Vec::new());
            writer.write_record(CSV_HEADER.split(',')).map_err(|error| error.to_string())?;
            let optional = |value: Option<u64>| value.map(|value| value.to_string()).unwrap_or_default();
            for line in lines {
                let record = [
                    line.job.to_owned(),
                    line.team.to_owned(),
                    line.tier.to_owned(),
                    line.gpus.to_string(),
                    line.submit.to_string(),
                    optional(line.start),
                    optional(line.end),
                    line.state.to_owned(),
                    line.reason.unwrap_or_default().to_owned(),
                    line.nodes.join(" "),
                    line.preemptions.to_string(),
                    line.cost,
                ];
                writer.write_record(&record).map_err(|error| error.to_string())?;
            }
            let bytes = writer.into_inner().map_err(|error| error.to_string())?;
            String::from_utf8(bytes).map_err(|error| error.to_string())
        }
    }
}

/// A job whose outcome differs between two replays of one trace (the what-if's base and
/// head): finished on one side only, rejected for another reason, and so on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct JobChange {
    /// The job's name.
    pub job: String,
    /// On the base ([`End::describe`]).
    pub before: String,
    /// On the head.
    pub after: String,
}

/// The jobs whose state or reason differs between `before` and `after` (replays of one
/// trace, so their jobs are the same, in the same order): the total, and the first `most`.
pub fn changed_jobs(before: &[JobOutcome], after: &[JobOutcome], most: usize) -> (usize, Vec<JobChange>) {
    let mut changed = before.iter().zip(after).filter(|(before, after)| before.end != after.end);
    let listed: Vec<JobChange> = changed
        .by_ref()
        .take(most)
        .map(|(before, after)| JobChange { job: before.name.clone(), before: before.end.describe(), after: after.end.describe() })
        .collect();
    (listed.len() + changed.count(), listed)
}

/// The tallies as lines for people: `rejected (exceeds-budget), tier P0, team llm: 1: train-7`.
/// Job names come from the trace: the caller escapes the text for its medium.
pub fn tally_lines(tallies: &[Tally]) -> Vec<String> {
    tallies
        .iter()
        .map(|tally| {
            let mut line = format!(
                "{} ({}), tier {}, team {}: {}: {}",
                tally.state,
                tally.reason,
                tally.tier,
                tally.team,
                tally.count,
                tally.jobs.join(", ")
            );
            if tally.count > tally.jobs.len() {
                let _ = write!(line, " and {} more", tally.count - tally.jobs.len());
            }
            line
        })
        .collect()
}
