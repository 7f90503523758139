//! A pass that carries on where the last one stopped (`queue::pass`) must change nothing:
//! random traces, saturated and not, on models with several overlapping pools, a reserving
//! tier, preemption by capacity and by quota, exemptions, budgets of teams, cost centers and
//! tiers, sharing jobs, time limits and dependencies, run once as the engine runs them and
//! once with every pass made in full, give the same events and leave every job in the same
//! state.

use std::cmp::Reverse;
use std::path::Path;

use placid_lang::model::{CapacityKind, ClassId, Model, PoolId, TeamId, TierId};
use placid_lang::source::MemoryWorld;
use proptest::prelude::*;

use super::{JobState, Simulation, Wake};
use crate::event::Event;
use crate::job::{Job, JobId};
use crate::rank::{Candidate, Neutral, Ranker};
use crate::synthetic::{self, Rng};

/// The model of `files` (name, text); they must lower without errors.
fn load(files: &[(String, String)]) -> Model {
    let mut world = MemoryWorld::new();
    for (name, text) in files {
        world.insert(name, text.clone());
    }
    let compilation = placid_lang::load(&world);
    assert!(!compilation.diagnostics.has_errors(), "{:?}", compilation.diagnostics);
    compilation.model
}

/// The cluster example: five pools (two overlapping the others), P0 reserving 12 GPUs of
/// `nvl-a`, P1 requeued after an exemption, P2 cancelled, budgets on teams, cost centers and
/// P2, NVLink gangs, rack gangs and node-local jobs on nodes of three prices.
fn cluster() -> Model {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../policy-examples/cluster");
    let mut files = Vec::new();
    for dir in ["", "inventory", "policy"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap().flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|extension| extension == "kdl") {
                let name = if dir.is_empty() {
                    entry.file_name().to_string_lossy().into_owned()
                } else {
                    format!("{dir}/{}", entry.file_name().to_string_lossy())
                };
                files.push((name, std::fs::read_to_string(&path).unwrap()));
            }
        }
    }
    load(&files)
}

/// The synthetic cluster of the benchmarks: one pool of 16 nodes, domain and node gangs.
fn synthetic_cluster() -> Model {
    project(&synthetic::inventory(16), synthetic::POLICY)
}

/// Two small nodes, an overlapping pool, a cost center whose budget holds jobs within the day,
/// and a strict tier that never backfills.
fn small() -> Model {
    let model = small_policy();
    project(&model.0, &model.1)
}

/// [`small`]'s inventory and policy.
fn small_policy() -> (String, String) {
    let node = |name: &str, domain: &str, price: u32| {
        format!(
            "node \"{name}\" arch=\"x86_64\" nvlink-domain=\"{domain}\" {{\n    cost gpu-hour=(usd){price}\n    cpu harts=16\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n    gpu 2 model=\"H200\"\n    gpu 3 model=\"H200\"\n}}\n"
        )
    };
    let inventory = node("a", "d1", 2) + &node("b", "d2", 3);
    let policy = r#"pool "all" { select arch="x86_64" }
pool "b-only" { select nvlink-domain="d2" }
tier "hi" {
    priority 100
    preemption window="1m" mode="requeue" exempt="5m"
    checkpoint every="10m"
}
tier "lo" {
    priority 10
    preemption window="30s" mode="requeue"
    checkpoint every="10m"
    backfill #true
}
tier "strict" {
    priority 10
    preemption window="30s" mode="cancel"
}
cost-center "cc" { budget daily=(usd)150 }
team "t" {
    share 2
    cost-center "cc"
    tiers "hi" "lo" "strict"
}
team "u" {
    share 1
    cost-center "cc"
    tiers "lo" "strict"
    budget daily=(usd)60
}
class "gang" { locality "nvlink-domain" }
class "node" { locality "node" }
"#;
    (inventory, policy.to_owned())
}

fn project(inventory: &str, policy: &str) -> Model {
    load(&[
        ("placid.kdl".into(), "project \"p\" currency=\"usd\"\ninventory \"nodes.kdl\"\ninclude \"policy.kdl\"\n".into()),
        ("nodes.kdl".into(), inventory.into()),
        ("policy.kdl".into(), policy.into()),
    ])
}

/// `count` random jobs for `model`, about `gap` seconds apart: any team, mostly at a tier it
/// may use, any class or none, any pool or none, 1 to 4 GPUs and now and then 8, 16 or a
/// share of one, sometimes CPU and memory per GPU, a capacity kind, a time limit (often below
/// the run, which times the job out), a job it runs after; runs of a minute to a day and a
/// half, so budgets meet day boundaries.
fn jobs(model: &Model, count: usize, gap: u64, seed: u64) -> Vec<Job> {
    let mut rng = Rng::new(seed);
    let mut time = 0;
    let mut jobs: Vec<Job> = Vec::with_capacity(count);
    for index in 0..count {
        time += rng.below(2 * gap + 1);
        let team = TeamId::from_index(rng.below(model.teams.len() as u64) as usize);
        let tiers = &model.team(team).tiers;
        let tier = if rng.below(10) == 0 {
            TierId::from_index(rng.below(model.tiers.len() as u64) as usize)
        } else {
            tiers[rng.below(tiers.len() as u64) as usize].value
        };
        let gpus = match rng.below(20) {
            0 => 16,
            1 | 2 => 8,
            _ => 1 + rng.below(4) as u32,
        };
        let mut job = Job::new(team, tier, gpus);
        job.class = (rng.below(3) > 0).then(|| ClassId::from_index(rng.below(model.classes.len() as u64) as usize));
        job.pool = (rng.below(2) == 0).then(|| PoolId::from_index(rng.below(model.pools.len() as u64) as usize));
        if rng.below(10) == 0 {
            job.gpus = 1;
            job.gpu_milli = 250 * (1 + rng.below(3) as u32);
        }
        if rng.below(6) == 0 {
            job.cpu_milli_per_gpu = 1000 * (1 + rng.below(8));
            job.memory_mib_per_gpu = 4096 * (1 + rng.below(8));
        }
        job.capacity = match rng.below(12) {
            0 => Some(CapacityKind::Spot),
            1 => Some(CapacityKind::OnDemand),
            _ => None,
        };
        job.submit = time;
        job.run = match rng.below(10) {
            0 => 60 + rng.below(36 * 3600),
            _ => 60 + rng.below(4 * 3600),
        };
        job.limit = match rng.below(4) {
            0 => Some(job.run + rng.below(3600)),
            1 => Some(60 + rng.below(job.run)),
            _ => None,
        };
        if index > 0 && rng.below(8) == 0 {
            let before = JobId(rng.below(index as u64) as u32);
            if rng.below(2) == 0 {
                job.after.push(before);
            } else {
                job.after_ended.push(before);
            }
        }
        job.metric = Some(rng.below(1000) as f64);
        jobs.push(job);
    }
    jobs
}

/// Scores nodes by a hash of the node and the job's GPUs, and refuses some: placement by
/// score, the general path (no index), with nodes a score filters out.
struct Hashed;

impl Ranker for Hashed {
    fn rank(&mut self, job: &Job, candidates: &[Candidate], scores: &mut Vec<Option<f64>>) {
        scores.clear();
        scores.extend(candidates.iter().map(|candidate| {
            let hash = Rng::new(candidate.node.index() as u64 * 31 + u64::from(job.gpus)).next_u64();
            (!hash.is_multiple_of(11)).then_some((hash % 5) as f64)
        }));
    }
}

/// What a run leaves: every event, and every job's state at the end.
type Outcome = (Vec<Event>, Vec<JobState>);

/// Where a run stops: ten days after the last submission. Not at the end, because a job
/// that fits its budgets only on nodes its filters refuse is held for budget every day,
/// for ever (its least cost is the pool's cheapest node's).
fn horizon(jobs: &[Job]) -> u64 {
    jobs.iter().map(|job| job.submit).max().unwrap_or(0) + 10 * crate::quota::DAY
}

/// Runs `jobs` as the engine does, and counts the steps that found only arrivals and a pass
/// left to carry on (those that may carry on; the pass also compares the queue).
fn carried<R: Ranker>(model: &Model, ranker: R, jobs: &[Job]) -> (Outcome, usize) {
    let mut simulation = Simulation::new(model, ranker);
    for job in jobs {
        simulation.submit(job.clone());
    }
    let mut events = Vec::new();
    let mut candidates = 0;
    let until = horizon(jobs);
    while let Some(Reverse((time, _))) = simulation.wakes.peek().copied().filter(|Reverse((time, _))| *time <= until) {
        let arrivals_only =
            simulation.wakes.iter().filter(|Reverse((at, _))| *at == time).all(|Reverse((_, wake))| matches!(wake, Wake::Arrive(_)));
        candidates += usize::from(arrivals_only && !simulation.changed && simulation.carry.is_some());
        simulation.run_until(time, &mut |event| events.push(event.clone()));
    }
    let states = simulation.records.iter().map(|record| record.state.clone()).collect();
    ((events, states), candidates)
}

/// Runs `jobs` with every pass made in full, as before passes carried on.
fn in_full<R: Ranker>(model: &Model, ranker: R, jobs: &[Job]) -> Outcome {
    let mut simulation = Simulation::new(model, ranker);
    for job in jobs {
        simulation.submit(job.clone());
    }
    let mut events = Vec::new();
    let until = horizon(jobs);
    while let Some(Reverse((time, _))) = simulation.wakes.peek().copied().filter(|Reverse((time, _))| *time <= until) {
        simulation.carry = None;
        simulation.step(time);
        events.append(&mut simulation.out);
    }
    let states = simulation.records.iter().map(|record| record.state.clone()).collect();
    (events, states)
}

fn same(model: &Model, jobs: &[Job], hashed: bool) -> Result<usize, TestCaseError> {
    let (outcome, candidates) = if hashed { carried(model, Hashed, jobs) } else { carried(model, Neutral, jobs) };
    let full = if hashed { in_full(model, Hashed, jobs) } else { in_full(model, Neutral, jobs) };
    prop_assert_eq!(outcome.0.len(), full.0.len());
    for (index, (left, right)) in outcome.0.iter().zip(&full.0).enumerate() {
        prop_assert_eq!(left, right, "event {}", index);
    }
    prop_assert_eq!(outcome.1, full.1);
    Ok(candidates)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn a_carried_pass_changes_nothing(which in 0usize..3, seed in any::<u64>(), count in 1usize..120, gap in prop_oneof![0u64..20, 20u64..600, 600u64..7200], hashed in any::<bool>()) {
        let model = match which {
            0 => cluster(),
            1 => synthetic_cluster(),
            _ => small(),
        };
        same(&model, &jobs(&model, count, gap, seed), hashed)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    #[test]
    fn a_carried_pass_changes_nothing_past_the_pass_depth(seed in any::<u64>(), count in 600usize..800, hashed in any::<bool>()) {
        // More jobs wait than a pass looks at: arrivals land past its depth.
        let model = cluster();
        let jobs = jobs(&model, count, 1, seed);
        let candidates = same(&model, &jobs, hashed)?;
        prop_assert!(candidates > count / 4, "only {} steps could carry a pass on", candidates);
    }
}

#[test]
fn a_pass_is_not_carried_past_a_job_leaving_the_backfill_window() {
    // On `small`, team t may hold all 8 GPUs. R1 and R2 hold 2 GPUs and 12 CPUs of each node;
    // the 4-GPU gang H is the head, reserved on node a when R1 ends at 1000 s, leaving 2 GPUs
    // of quota spare. J (2 GPUs, 4 CPUs each, 500 s) fits no node now; it ends by the head's
    // start, so it takes none of that spare quota. When K (2 GPUs, 3,000 s) arrives at 600 s,
    // J would no longer end by 1000 s: a pass made in full gives J the spare quota, and K
    // waits for priority; a pass carrying the one at 2 s on would start K on node b. Quota is
    // charged per cell: the head's spare quota binds only jobs of its cell, so here both nodes
    // are one cell (b at a's price, no pool `b-only`).
    let (inventory, policy) = small_policy();
    let model = project(&inventory.replace("(usd)3", "(usd)2"), &policy.replace("pool \"b-only\" { select nvlink-domain=\"d2\" }\n", ""));
    let class = |name: &str| model.classes.iter().position(|class| class.name.as_str() == name).map(ClassId::from_index);
    let job = |gpus: u32, cpu: u64, submit: u64, run: u64, class: Option<ClassId>| {
        let mut job = Job::new(TeamId::from_index(0), TierId::from_index(1), gpus);
        job.pool = Some(PoolId::from_index(0));
        job.class = class;
        job.cpu_milli_per_gpu = cpu;
        job.submit = submit;
        job.run = run;
        job.limit = Some(run);
        job
    };
    let jobs = vec![
        job(2, 6000, 0, 1000, class("node")),
        job(2, 6000, 0, 5000, class("node")),
        job(4, 0, 1, 600, class("gang")),
        job(2, 4000, 2, 500, class("node")),
        job(2, 0, 600, 3000, class("node")),
    ];
    let ((events, states), _) = carried(&model, Neutral, &jobs);
    assert_eq!((events.clone(), states), in_full(&model, Neutral, &jobs));
    let k = events.iter().find(|event| event.job == JobId(4) && event.time == 600 && event.kind != crate::event::EventKind::Submitted);
    assert_eq!(k.map(|event| &event.kind), Some(&crate::event::EventKind::Held(crate::event::Hold::Priority)), "{events:#?}");
}

/// A run stopped at its bound of verdicts is the whole run up to the instant it stopped at:
/// the same events, none later, and work left (docs/limits.md).
#[test]
fn a_run_cut_at_its_bound_is_the_whole_run_up_to_the_cut() {
    let model = cluster();
    let jobs = jobs(&model, 400, 1, 7);
    let run = |most: Option<u64>| {
        let mut simulation = Simulation::new(&model, Neutral);
        if let Some(most) = most {
            simulation.limit_verdicts(most);
        }
        for job in &jobs {
            simulation.submit(job.clone());
        }
        let mut events = Vec::new();
        simulation.run(&mut |event| events.push(event.clone()));
        (events, simulation.cut(), simulation.verdicts)
    };
    let (whole, none, verdicts) = run(None);
    assert_eq!(none, None, "the whole run stays within the bound");
    let (cut_events, cut, reached) = run(Some(verdicts / 2));
    let cut = cut.expect("a run past its bound stops");
    assert!(reached >= verdicts / 2 && reached < verdicts, "{reached} of {verdicts}");
    assert!(cut_events.len() < whole.len());
    assert_eq!(cut_events.as_slice(), &whole[..cut_events.len()]);
    assert!(cut_events.iter().all(|event| event.time <= cut));
    assert!(whole[cut_events.len()].time > cut, "the cut falls between instants");
}
