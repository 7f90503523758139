//! Plans as jobs: each stage becomes its `trials` jobs, a stage's jobs run after every job of
//! the stages it names in `after`, and a stage with `promote top=K by=M` reports its best K
//! trials (Pattern C) once all of them have ended.

use placid_lang::model::{Dependency, Model, PlanId};

use crate::job::{Job, JobId, Seconds, StageRef};
use crate::rank::Ranker;
use crate::sim::Simulation;

pub use crate::promotion::Promotion;

/// Trial `trial` of stage `stage` of plan `plan_id`, as a job submitted at 0: its team, tier,
/// class, pool, capacity kind, GPUs and score, limited to the stage's run-time limit (its
/// sbatch `--time`) and running for its expected `time`, or to the limit without one. Its
/// `cpus` and `memory`, asked of each node of the gang ([`Model::gang`]), are spread over
/// that node's GPUs, rounded down so that a node holding exactly one gang member's share fits.
pub fn stage_job(model: &Model, plan_id: PlanId, stage: usize, trial: u32) -> Job {
    let plan = model.plan(plan_id);
    let declared = &plan.stages[stage];
    let mut job = Job::new(plan.team.value, declared.tier.value, declared.gpus.value);
    job.class = declared.class.as_ref().map(|class| class.value);
    job.pool = Some(declared.pool.value);
    job.capacity = declared.capacity;
    job.score = declared.score.as_ref().map(|score| score.value);
    let launch = model.launch(declared);
    let per_node = u64::from(model.gang(declared).gpus_per_node);
    job.cpu_milli_per_gpu = launch.cpus.map_or(0, |cpus| u64::from(cpus.value) * 1000 / per_node);
    job.memory_mib_per_gpu = launch.memory.map_or(0, |memory| memory.value.0 / (1024 * 1024) / per_node);
    job.stage = Some(StageRef { plan: plan_id, stage, trial });
    let limit = declared.run_time_limit(model.tier(declared.tier.value)).seconds;
    job.limit = Some(limit);
    job.run = declared.time.as_ref().map_or(limit, |time| time.value.seconds);
    job
}

/// Submits every trial of `plan` at `submit`, each running for `run(stage index, trial)` and
/// reporting `metric(stage index, trial)`, and registers its promotions. Returns the jobs of
/// each stage, by stage index.
pub fn submit<R: Ranker>(
    simulation: &mut Simulation<'_, R>,
    model: &Model,
    plan_id: PlanId,
    submit: Seconds,
    run: &dyn Fn(usize, u32) -> Seconds,
    metric: &dyn Fn(usize, u32) -> Option<f64>,
) -> Vec<Vec<JobId>> {
    let plan = model.plan(plan_id);
    let mut stages: Vec<Vec<JobId>> = Vec::with_capacity(plan.stages.len());
    for (index, stage) in plan.stages.iter().enumerate() {
        // `after` names earlier stages only (the checker refuses forward references, E029);
        // each is waited for as it says (`Stage::waited_for`).
        let (mut after, mut after_ended): (Vec<JobId>, Vec<JobId>) = (Vec::new(), Vec::new());
        for before in stage.after.iter().filter(|before| before.value < index) {
            let jobs = stages[before.value].iter().copied();
            match plan.stages[before.value].waited_for() {
                Dependency::Succeeded => after.extend(jobs),
                Dependency::Ended => after_ended.extend(jobs),
            }
        }
        let mut jobs = Vec::with_capacity(stage.trials as usize);
        for trial in 0..stage.trials.max(1) {
            let mut job = stage_job(model, plan_id, index, trial);
            job.submit = submit;
            job.run = run(index, trial);
            job.metric = metric(index, trial);
            job.after = after.clone();
            job.after_ended = after_ended.clone();
            jobs.push(simulation.submit(job));
        }
        if let Some(promote) = &stage.promote {
            simulation.promote(Promotion { trials: jobs.clone(), top: promote.top, order: promote.order });
        }
        stages.push(jobs);
    }
    stages
}
