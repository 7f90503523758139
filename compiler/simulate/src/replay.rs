//! A trace, replayed: its jobs become engine jobs, the engine runs them, and the events are
//! measured. The one path behind `placid simulate --trace` and `placid diff --simulate`, so
//! the review table and the command always agree.

use std::collections::HashMap;

use placid_engine::{EventKind, Job, JobId, Ranker, Simulation};
use placid_lang::model::Model;

use crate::measure::{Measure, Report};
use crate::trace::TraceJob;

/// The engine jobs of a trace, indexed like it: a job's `after` stages become the ids of every
/// job in those stages. Made one at a time, so a replay never holds all of them twice.
pub fn jobs(trace: &[TraceJob]) -> impl Iterator<Item = Job> + '_ {
    let mut stages: HashMap<&str, Vec<JobId>> = HashMap::new();
    for (index, job) in trace.iter().enumerate() {
        if let Some(stage) = job.stage.as_deref() {
            stages.entry(stage).or_default().push(job_id(index));
        }
    }
    trace.iter().map(move |row| {
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
}

/// Replays `trace` through the engine on `model`, ranking nodes with `ranker`. `progress` is
/// told the number of jobs that have ended so far, every [`PROGRESS_EVERY`] of them.
pub fn replay<R: Ranker>(model: &Model, ranker: R, trace: &[TraceJob], progress: &mut dyn FnMut(usize)) -> Report {
    replay_with(model, ranker, trace, None, progress)
}

/// [`replay`] with a recorded telemetry series, whose throttling rule the run enforces
/// (`placid simulate --telemetry`; the ranker takes its figures itself).
pub fn replay_with<R: Ranker>(
    model: &Model,
    ranker: R,
    trace: &[TraceJob],
    telemetry: Option<&placid_engine::telemetry::Recorded>,
    progress: &mut dyn FnMut(usize),
) -> Report {
    let mut simulation = Simulation::new(model, ranker);
    if let Some(recorded) = telemetry {
        simulation.with_telemetry(recorded);
    }
    // The engine keeps the only copy of each job; the measure reads the trace's rows.
    simulation.make_room(trace.len());
    for job in jobs(trace) {
        simulation.submit(job);
    }
    let mut measure = Measure::new(model, trace);
    let mut ended = 0;
    simulation.run(&mut |event| {
        if matches!(event.kind, EventKind::Finished | EventKind::Cancelled | EventKind::Rejected(_)) {
            ended += 1;
            if ended % PROGRESS_EVERY == 0 {
                progress(ended);
            }
        }
        measure.observe(event);
    });
    let cut = simulation.cut();
    // The engine's records go before the report names every job.
    drop(simulation);
    progress(ended);
    measure.report(cut)
}

/// How often [`replay`] reports progress, in ended jobs.
pub const PROGRESS_EVERY: usize = 1024;

/// The id the engine gives the job at `index` of a trace: trace jobs are submitted in order.
fn job_id(index: usize) -> JobId {
    // The trace reader bounds a trace at `MAX_JOBS`, far below `u32::MAX`.
    JobId(u32::try_from(index).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use placid_engine::Neutral;
    use placid_lang::span::FileId;

    use crate::fixture::model;
    use crate::trace::read;

    /// Three 4-GPU jobs on one 8-GPU node priced (usd)2 a GPU-hour, where each team's quota is
    /// half the node: `vision`'s second job waits an hour for its first.
    #[test]
    fn the_report_counts_what_ran_where_and_what_it_cost() {
        let model = model();
        let text = "job,submit,team,tier,gpus,run\na,0,vision,P1,4,1h\nb,0,nlp,P1,4,1h\nc,0,vision,P1,4,1h\nd,0,nlp,P1,9,1h\n";
        let trace = read(&model, FileId(0), text).expect("a good trace");
        let mut calls = 0;
        let report = super::replay(&model, Neutral, &trace, &mut |_| calls += 1);
        assert_eq!(calls, 1, "one final progress report for a short trace");
        assert_eq!((report.jobs, report.finished, report.unfinished), (4, 3, 0));
        assert_eq!(report.rejected.values().sum::<usize>(), 1, "{:?}", report.rejected);
        assert_eq!((report.makespan_seconds, report.horizon_seconds), (7200, 7200));
        let wait = report.wait_by_tier["P1"];
        assert_eq!((wait.count, wait.p50, wait.p99), (3, 0, 3600));
        assert_eq!(report.wait_by_team["vision"].max, 3600);
        assert_eq!(report.wait_by_team["nlp"].max, 0);
        // Full for the first hour, half for the second.
        assert!((report.allocation - 0.75).abs() < 1e-12, "{}", report.allocation);
        assert!((report.gpu_hours - 12.0).abs() < 1e-12);
        assert_eq!(report.nvlink_gpu_hours, 0.0);
        assert_eq!(report.cost["vision"].spent.minor, 1600);
        assert_eq!(report.cost["nlp"].spent.minor, 800);
        // `c` waited for quota, not for capacity: the free GPUs of the second hour are not
        // fragmentation.
        assert_eq!(report.fragmented_gpus, 0.0);
    }

    #[test]
    fn a_stage_waits_for_the_stages_it_is_after() {
        let model = model();
        let text = "job,submit,team,tier,gpus,run,stage,after\na,0,vision,P1,1,1h,trials,\nb,0,vision,P1,1,2h,trials,\nc,0,vision,P1,1,1h,final,trials\n";
        let trace = read(&model, FileId(0), text).expect("a good trace");
        let report = super::replay(&model, Neutral, &trace, &mut |_| {});
        // `c` is submitted when the last trial ends at 2 h, and runs an hour.
        assert_eq!(report.makespan_seconds, 3 * 3600);
    }

    /// A job that can never run is named with its reason, and the job after it is counted
    /// as cancelled, not lost: every job of the trace is in one state.
    #[test]
    fn no_job_vanishes_from_the_report() {
        let model = model();
        let text =
            "job,submit,team,tier,gpus,run,stage,after\nhuge,0,vision,P1,9,1h,prep,\nnext,0,vision,P1,1,1h,,prep\nfine,0,nlp,P1,1,1h,,\n";
        let trace = read(&model, FileId(0), text).expect("a good trace");
        let report = super::replay(&model, Neutral, &trace, &mut |_| {});
        assert_eq!((report.jobs, report.finished, report.cancelled, report.unfinished), (3, 1, 1, 0));
        let lines = crate::outcome::tally_lines(&report.not_finished);
        assert_eq!(
            lines,
            [
                "cancelled (after-cannot-finish), tier P1, team vision: 1: next",
                "rejected (stage-exceeds-pool), tier P1, team vision: 1: huge"
            ]
        );
        let ends: Vec<(&str, &str)> = report.outcomes.iter().map(|outcome| (outcome.name.as_str(), outcome.end.state())).collect();
        assert_eq!(ends, [("huge", "rejected"), ("next", "cancelled"), ("fine", "finished")]);
        assert_eq!(report.outcomes[2].cost_minor, 200, "one GPU-hour at (usd)2");
    }
}
