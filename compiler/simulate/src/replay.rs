//! A trace, replayed: its jobs become engine jobs, the engine runs them, and the events are
//! measured. The one path behind `placid simulate --trace` and `placid diff --simulate`, so
//! the review table and the command always agree.

use std::collections::HashMap;

use placid_engine::{Job, JobId, Ranker, simulate};
use placid_lang::model::Model;

use crate::measure::{Report, measure};
use crate::trace::TraceJob;

/// The engine jobs of a trace, indexed like it: a job's `after` stages become the ids of every
/// job in those stages.
pub fn jobs(trace: &[TraceJob]) -> Vec<Job> {
    let mut stages: HashMap<&str, Vec<JobId>> = HashMap::new();
    for (index, job) in trace.iter().enumerate() {
        if let Some(stage) = job.stage.as_deref() {
            stages.entry(stage).or_default().push(job_id(index));
        }
    }
    trace
        .iter()
        .map(|row| {
            let mut job = Job::new(row.team, row.tier, row.gpus);
            job.class = row.class;
            job.pool = row.pool;
            job.submit = row.submit;
            job.run = row.run;
            job.limit = row.limit;
            job.tag = row.tag.clone();
            job.after = row.after.iter().flat_map(|stage| stages.get(stage.as_str()).into_iter().flatten().copied()).collect();
            job
        })
        .collect()
}

/// Replays `trace` through the engine on `model`, ranking nodes with `ranker`.
pub fn replay<R: Ranker>(model: &Model, ranker: R, trace: &[TraceJob]) -> Report {
    let jobs = jobs(trace);
    let events = simulate(model, ranker, jobs.clone());
    measure(model, &jobs, &events)
}

/// The id the engine gives the job at `index` of a trace: trace jobs are submitted in order.
fn job_id(index: usize) -> JobId {
    // The trace reader bounds a trace at `MAX_JOBS`, far below `u32::MAX`.
    JobId(u32::try_from(index).unwrap_or(u32::MAX))
}
