//! The engine's invariants over random workloads on the synthetic cluster (no GPU is ever
//! held twice, quotas are never exceeded, gangs are all or nothing inside one unit, backfill
//! never delays the head), and the rules of docs/semantics.md on small scenarios.

use std::collections::{BTreeMap, HashMap};

use placid_engine::event::Placement;
use placid_engine::quota::Quotas;
use placid_engine::synthetic;
use placid_engine::{Candidate, Event, EventKind, Hold, Job, JobId, JobState, Neutral, Ranker, Reject, Simulation, simulate};
use placid_lang::model::{Locality, Model, PoolId, TeamId, TierId};
use proptest::prelude::*;

#[path = "support/mod.rs"]
mod support;
use support::{example, load};

fn synthetic_model(nodes: usize) -> Model {
    load(&synthetic::inventory(nodes), synthetic::POLICY)
}

/// Scores every node 0 like [`Neutral`], without telling the engine so.
struct Unannounced;

impl Ranker for Unannounced {
    fn rank(&mut self, _job: &Job, candidates: &[Candidate], scores: &mut Vec<Option<f64>>) {
        scores.clear();
        scores.resize(candidates.len(), Some(0.0));
    }
}

/// Replays `events` and checks every invariant at every event.
fn check_invariants(model: &Model, jobs: &[Job], events: &[Event]) {
    let quotas = Quotas::new(model);
    let mut holder: HashMap<(usize, u32), JobId> = HashMap::new();
    let mut held: BTreeMap<JobId, Placement> = BTreeMap::new();
    let mut used: HashMap<placid_engine::quota::Charge, u64> = HashMap::new();
    for event in events {
        let job = &jobs[event.job.index()];
        match &event.kind {
            EventKind::Started(placement) => {
                let gpus: usize = placement.nodes.iter().map(|share| share.gpus.len()).sum();
                assert_eq!(gpus, job.gpus as usize, "a gang is all or nothing");
                if let Some(class) = job.class
                    && model.class(class).locality == Locality::NvlinkDomain
                {
                    assert!(placement.domain.is_some(), "a domain gang stays in one domain");
                }
                if job.class.is_some_and(|class| model.class(class).locality == Locality::Node) {
                    assert_eq!(placement.nodes.len(), 1, "a node-local job stays on one node");
                }
                for share in &placement.nodes {
                    for gpu in &share.gpus {
                        let previous = holder.insert((share.node.index(), *gpu), event.job);
                        assert!(previous.is_none(), "GPU {gpu} of node {} held twice", share.node.index());
                    }
                }
                for (charge, milli) in quotas.charges(job, placement, false) {
                    let total = used.entry(charge).or_default();
                    *total += milli;
                    assert!(*total <= quotas.limit(charge), "quota of {charge:?} exceeded");
                }
                held.insert(event.job, placement.clone());
            }
            EventKind::Finished | EventKind::Requeued | EventKind::Cancelled => {
                if let Some(placement) = held.remove(&event.job) {
                    for share in &placement.nodes {
                        for gpu in &share.gpus {
                            holder.remove(&(share.node.index(), *gpu));
                        }
                    }
                    for (charge, milli) in quotas.charges(job, &placement, false) {
                        *used.get_mut(&charge).unwrap() -= milli;
                    }
                }
            }
            _ => {}
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn no_gpu_is_held_twice_and_quotas_hold(seed in any::<u64>(), count in 1usize..150) {
        let model = synthetic_model(32);
        let jobs = synthetic::jobs(&model, count, 120, seed);
        let events = simulate(&model, Neutral, jobs.clone());
        check_invariants(&model, &jobs, &events);
        // Every job reaches an end: nothing is left pending or running.
        let ended = events.iter().filter(|event| matches!(event.kind, EventKind::Finished | EventKind::Cancelled | EventKind::Rejected(_))).count();
        prop_assert_eq!(ended, jobs.len());
    }

    #[test]
    fn the_best_fit_index_places_as_the_full_scan(seed in any::<u64>(), count in 1usize..200) {
        // A ranker that scores every node 0 but does not say so takes the general path
        // (candidates, scores, sort); `Neutral` takes the free-GPU buckets. Same events.
        let model = synthetic_model(24);
        let jobs = synthetic::jobs(&model, count, 30, seed);
        prop_assert_eq!(simulate(&model, Neutral, jobs.clone()), simulate(&model, Unannounced, jobs));
    }

    #[test]
    fn the_unit_totals_follow_every_take_and_give(seed in any::<u64>(), count in 1usize..120) {
        let model = synthetic_model(24);
        let mut simulation = Simulation::new(&model, Neutral);
        for job in synthetic::jobs(&model, count, 30, seed) {
            simulation.submit(job);
        }
        for step in 1..40u64 {
            simulation.run_until(step * 600, &mut |_| {});
            let cluster = simulation.cluster();
            for locality in [Locality::Node, Locality::Chassis, Locality::NvlinkDomain, Locality::Rack, Locality::Any] {
                let mut totals: HashMap<Option<u32>, u64> = HashMap::new();
                for (index, _) in model.nodes.iter().enumerate() {
                    let node = placid_lang::model::NodeId::from_index(index);
                    *totals.entry(cluster.unit(locality, node)).or_default() += u64::from(cluster.free(node).whole);
                }
                totals.remove(&None);
                let most = totals.values().copied().max().unwrap_or(0);
                prop_assert_eq!(cluster.most_whole_in(locality), most, "{:?} at {}", locality, step * 600);
            }
        }
    }

    #[test]
    fn backfill_never_delays_the_head(seed in any::<u64>(), count in 2usize..60) {
        // One team, one tier: the queue is first come, first served, so a later job starts
        // before an earlier one only by backfill.
        let model = synthetic_model(16);
        let mut jobs = synthetic::jobs(&model, count, 60, seed);
        for job in &mut jobs {
            job.team = TeamId::from_index(3);
            job.tier = TierId::from_index(2);
        }
        let events = simulate(&model, Neutral, jobs.clone());
        let first_held = events.iter().find(|event| matches!(event.kind, EventKind::Held(Hold::Capacity | Hold::Quota))).map(|event| event.job);
        if let Some(head) = first_held {
            let start = |events: &[Event]| events.iter().find(|event| event.job == head && matches!(event.kind, EventKind::Started(_))).map(|event| event.time);
            let alone = simulate(&model, Neutral, jobs[..=head.index()].to_vec());
            prop_assert!(start(&events) <= start(&alone), "later jobs delayed the head {:?}", head);
        }
    }
}

const INVENTORY: &str = "node \"a\" arch=\"x86_64\" nvlink-domain=\"d1\" {\n    cost gpu-hour=(usd)2\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n    gpu 2 model=\"H200\"\n    gpu 3 model=\"H200\"\n}\nnode \"b\" arch=\"x86_64\" nvlink-domain=\"d2\" {\n    cost gpu-hour=(usd)2\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n    gpu 2 model=\"H200\"\n    gpu 3 model=\"H200\"\n}\n";

const POLICY: &str = "pool \"all\" { select arch=\"x86_64\" }\npool \"b-only\" { select nvlink-domain=\"d2\" }\ntier \"hi\" {\n    priority 100\n    preemption window=\"1m\" mode=\"requeue\"\n    checkpoint every=\"10m\"\n}\ntier \"lo\" {\n    priority 10\n    preemption window=\"30s\" mode=\"requeue\"\n    checkpoint every=\"10m\"\n    backfill #true\n}\ntier \"strict\" {\n    priority 10\n    preemption window=\"30s\" mode=\"cancel\"\n}\ncost-center \"cc\" { budget daily=(usd)100 }\nteam \"t\" {\n    share 1\n    cost-center \"cc\"\n    tiers \"hi\" \"lo\" \"strict\"\n}\nteam \"u\" {\n    share 1\n    cost-center \"cc\"\n    tiers \"lo\"\n}\nclass \"gang\" { locality \"nvlink-domain\" }\n";

fn job(model: &Model, team: &str, tier: &str, gpus: u32, submit: u64, run: u64) -> Job {
    let team = TeamId::from_index(model.teams.iter().position(|each| each.name.as_str() == team).unwrap());
    let tier = TierId::from_index(model.tiers.iter().position(|each| each.name.as_str() == tier).unwrap());
    let mut job = Job::new(team, tier, gpus);
    job.pool = Some(PoolId::from_index(0));
    job.submit = submit;
    job.run = run;
    job
}

#[test]
fn work_lost_is_the_time_since_the_last_checkpoint() {
    let model = load(INVENTORY, POLICY);
    // A low job runs 25 minutes, then a high job needs all 8 GPUs; the low job stops after
    // its 30 s window at 25m30s, 5m30s after its checkpoint at 20 minutes.
    let jobs = vec![job(&model, "t", "lo", 8, 0, 3 * 3600), job(&model, "t", "hi", 8, 25 * 60, 600)];
    let events = simulate(&model, Neutral, jobs);
    let lost = events.iter().find_map(|event| match event.kind {
        EventKind::Preempted { by, stops, lost_gpu_seconds } => Some((by, stops, lost_gpu_seconds)),
        _ => None,
    });
    assert_eq!(lost, Some((JobId(1), 25 * 60 + 30, 8 * 330)));
    // Requeued, it resumes from the checkpoint and runs the 2h40m it had left after the high
    // job: 25m30s + 10m + 2h40m.
    let finished = events.iter().find(|event| event.job == JobId(0) && event.kind == EventKind::Finished).map(|event| event.time);
    assert_eq!(finished, Some(25 * 60 + 30 + 600 + (3 * 3600 - 20 * 60)));
}

/// Node `b` is 3/4 busy through the overlapping pool `b-only` (whose queue is its own), `a`
/// half busy for an hour through `all`: a 4-GPU gang of one domain cannot fit although 3
/// GPUs are free, so it is the head.
fn fragmented(model: &Model, last: Job) -> Simulation<'_, Neutral> {
    let gang = model.classes.iter().position(|class| class.name.as_str() == "gang").map(placid_lang::model::ClassId::from_index);
    let mut simulation = Simulation::new(model, Neutral);
    let mut on_b = job(model, "t", "lo", 3, 0, 3600);
    on_b.pool = Some(PoolId::from_index(1));
    simulation.submit(on_b);
    let mut on_a = job(model, "u", "lo", 2, 0, 3600);
    on_a.pin = Some(vec![placid_lang::model::NodeId::from_index(0)]);
    simulation.submit(on_a);
    let mut big = job(model, "u", "lo", 4, 5, 600);
    big.class = gang;
    simulation.submit(big);
    simulation.submit(last);
    simulation.run_until(20, &mut |_| {});
    simulation
}

#[test]
fn a_gang_waits_rather_than_spreading() {
    let model = load(INVENTORY, POLICY);
    let simulation = fragmented(&model, job(&model, "t", "lo", 1, 10, 60));
    // Quota is charged per cell: `b`'s cohort has 1 GPU left and `u` may hold 2 more in `a`'s,
    // so no cell admits the 4-GPU gang, as Kueue would hold it; it waits, unspread, for quota.
    assert_eq!(simulation.state(JobId(2)), Some(&JobState::Pending(Some(Hold::Quota))));
}

#[test]
fn a_strict_tier_never_starts_out_of_order() {
    let model = load(INVENTORY, POLICY);
    // A short 1-GPU job would backfill, but its tier has no backfill.
    let simulation = fragmented(&model, job(&model, "t", "strict", 1, 10, 60));
    assert_eq!(simulation.state(JobId(3)), Some(&JobState::Pending(Some(Hold::Priority))));
    // The same job at the backfill tier starts at once, as it ends before the head's start.
    let simulation = fragmented(&model, job(&model, "t", "lo", 1, 10, 60));
    assert!(matches!(simulation.state(JobId(3)), Some(JobState::Running(_))));
    // A long one on the node the head's reservation holds would delay it: it waits.
    let mut long = job(&model, "t", "lo", 1, 10, 7200);
    long.pin = Some(vec![placid_lang::model::NodeId::from_index(1)]);
    let simulation = fragmented(&model, long);
    assert_eq!(simulation.state(JobId(3)), Some(&JobState::Pending(Some(Hold::Priority))));
}

#[test]
fn budgets_hold_until_the_next_day_and_reject_what_never_fits() {
    let model = load(INVENTORY, POLICY);
    // $100 a day at $2 a GPU-hour: 8 GPUs for 6 hours ($96) start, 1 GPU for 3 hours ($6) then
    // waits for the next day; 8 GPUs for 7 hours ($112) never fit.
    let jobs =
        vec![job(&model, "t", "lo", 8, 0, 6 * 3600), job(&model, "t", "lo", 1, 10, 3 * 3600), job(&model, "t", "lo", 8, 20, 7 * 3600)];
    let events = simulate(&model, Neutral, jobs);
    let held = events.iter().any(|event| event.job == JobId(1) && event.kind == EventKind::Held(Hold::Budget));
    let started = events.iter().find(|event| event.job == JobId(1) && matches!(event.kind, EventKind::Started(_))).map(|event| event.time);
    assert!(held);
    assert_eq!(started, Some(86_400));
    assert!(events.iter().any(|event| event.job == JobId(2) && event.kind == EventKind::Rejected(Reject::ExceedsBudget)));
}

#[test]
fn a_job_whose_filters_reach_only_dear_nodes_is_judged_by_their_price() {
    // `research` (budget $2,500 a day) asks `x86` for 8 on-demand GPUs for 200 hours: $1,120
    // on the pool's spot nodes ($0.70), which its capacity kind leaves out, but $3,040 on the
    // on-demand nodes ($1.90) it can get. Judged by the pool's cheapest price it was held for
    // its budget every day, and the run never ended.
    let model = example("cluster");
    let pool = PoolId::from_index(model.pools.iter().position(|pool| pool.name.as_str() == "x86").unwrap());
    let mut dear = job(&model, "research", "P2", 8, 0, 200 * 3600);
    dear.pool = Some(pool);
    dear.capacity = Some(placid_lang::model::CapacityKind::OnDemand);
    let mut cheap = dear.clone();
    cheap.capacity = Some(placid_lang::model::CapacityKind::Spot);
    let events = simulate(&model, Neutral, vec![dear, cheap]);
    assert!(events.iter().any(|event| event.job == JobId(0) && event.kind == EventKind::Rejected(Reject::ExceedsBudget)), "{events:?}");
    assert!(events.iter().any(|event| event.job == JobId(1) && event.kind == EventKind::Finished), "{events:?}");
}

#[test]
fn a_disallowed_tier_is_rejected() {
    let model = load(INVENTORY, POLICY);
    let events = simulate(&model, Neutral, vec![job(&model, "u", "hi", 1, 0, 60)]);
    assert!(events.iter().any(|event| event.kind == EventKind::Rejected(Reject::TierNotAllowed)));
}

#[test]
fn a_plan_runs_after_its_dependencies_and_promotes_the_best() {
    // `asr-sweep`: 64 sweep trials of 2 GPUs, the best 4 by `val-wer` (lowest) promoted, then
    // 4 finalists of 8 GPUs after the sweep.
    let model = example("cluster");
    let plan = placid_lang::model::PlanId::from_index(model.plans.iter().position(|plan| plan.name.as_str() == "asr-sweep").unwrap());
    let mut simulation = Simulation::new(&model, Neutral);
    // Trial i reports a val-wer of (i * 37) mod 64: trials 0, 45, 26 and 7 are the best four.
    let stages = placid_engine::plan::submit(
        &mut simulation,
        &model,
        plan,
        0,
        &|stage, trial| if stage == 0 { 600 + u64::from(trial) } else { 3600 },
        &|_, trial| Some(f64::from(trial * 37 % 64)),
    );
    let mut events = Vec::new();
    simulation.run(&mut |event| events.push(event.clone()));
    let promoted: Vec<JobId> = events.iter().filter(|event| event.kind == EventKind::Promoted).map(|event| event.job).collect();
    let expected: Vec<JobId> = [0, 45, 26, 7].iter().map(|trial| stages[0][*trial]).collect();
    assert_eq!(promoted, expected);
    let last_sweep_end = events
        .iter()
        .filter(|event| stages[0].contains(&event.job) && event.kind == EventKind::Finished)
        .map(|event| event.time)
        .max()
        .unwrap();
    let first_final = events
        .iter()
        .filter(|event| stages[1].contains(&event.job) && matches!(event.kind, EventKind::Started(_)))
        .map(|event| event.time)
        .min()
        .unwrap();
    assert!(first_final >= last_sweep_end, "finalists started at {first_final}, before the sweep ended at {last_sweep_end}");
    assert_eq!(events.iter().filter(|event| event.kind == EventKind::Finished).count(), 68);
}

#[test]
fn a_class_with_lanes_or_bisection_is_placed_only_where_the_links_have_them() {
    // Node `a` (domain d1): each GPU 6 links of 300GB/s to its pair, a bisection of 600GB/s;
    // node `b` (domain d2): 18 links of 900GB/s, a bisection of 1800GB/s. `b` is dearer, so
    // without the filters every job would go to `a`.
    let gpus = |links: u32, bandwidth: &str| -> String {
        (0..4u32)
            .map(|index| {
                format!(
                    "    gpu {index} model=\"H200\" {{\n        nvlink peer={} links={links} bandwidth=\"{bandwidth}\"\n    }}\n",
                    index ^ 1
                )
            })
            .collect()
    };
    let inventory = format!(
        "node \"a\" arch=\"x86_64\" nvlink-domain=\"d1\" {{\n    cost gpu-hour=(usd)1\n{}}}\nnode \"b\" arch=\"x86_64\" nvlink-domain=\"d2\" {{\n    cost gpu-hour=(usd)3\n{}}}\n",
        gpus(6, "300GB/s"),
        gpus(18, "900GB/s")
    );
    let policy = POLICY.to_owned()
        + "class \"plain\" { nvlink \"required\"; }\nclass \"lanes\" { nvlink \"required\" lanes=12; }\nclass \"bisected\" { nvlink \"required\" min-bisection=\"1800GB/s\"; }\n";
    let model = load(&inventory, &policy);
    let placed_on = |class: &str| -> Vec<String> {
        let mut each = job(&model, "t", "hi", 4, 0, 60);
        each.class = model.classes.iter().position(|it| it.name.as_str() == class).map(placid_lang::model::ClassId::from_index);
        let events = simulate(&model, Neutral, vec![each]);
        events
            .iter()
            .filter_map(|event| match &event.kind {
                EventKind::Started(placement) => Some(placement.nodes.iter().map(|share| model.node(share.node).name.to_string())),
                _ => None,
            })
            .flatten()
            .collect()
    };
    assert_eq!(placed_on("plain"), ["a"]);
    assert_eq!(placed_on("lanes"), ["b"]);
    assert_eq!(placed_on("bisected"), ["b"]);
}

#[test]
fn a_gang_goes_to_the_first_domain_that_holds_it_cheapest_first() {
    // docs/semantics.md §5.4: units are tried cheapest first, then in inventory order, as
    // Slurm tries a class constraint's domains in the order job_submit.lua lists them; the
    // fullest domain (best fit) is not preferred.
    let domain_of_second = |inventory: &str| -> String {
        let model = load(inventory, POLICY);
        let gang = model.classes.iter().position(|class| class.name.as_str() == "gang").map(placid_lang::model::ClassId::from_index);
        let mut first = job(&model, "t", "hi", 2, 0, 600);
        first.class = gang;
        first.pin = Some(vec![model.node_by_name("b").expect("node b")]);
        let mut second = job(&model, "t", "hi", 2, 1, 600);
        second.class = gang;
        let events = simulate(&model, Neutral, vec![first, second]);
        events
            .iter()
            .find_map(|event| match &event.kind {
                EventKind::Started(placement) if event.job == JobId(1) => {
                    placement.domain.map(|domain| model.domain(domain).name.to_string())
                }
                _ => None,
            })
            .expect("the second gang starts")
    };
    // One price: d1, listed first, although d2 is fuller.
    assert_eq!(domain_of_second(INVENTORY), "d1");
    // d2 cheaper: d2.
    assert_eq!(domain_of_second(&INVENTORY.replacen("(usd)2", "(usd)3", 1)), "d2");
}

#[test]
fn a_sweep_trial_cut_at_its_limit_does_not_stop_the_plan_but_a_single_job_does() {
    // docs/semantics.md §9: the stages after a sweep wait for its trials to end however
    // (Slurm's afterany); the stages after a single job wait for its success (afterok).
    let model = example("cluster");
    let plan_named =
        |name: &str| placid_lang::model::PlanId::from_index(model.plans.iter().position(|plan| plan.name.as_str() == name).unwrap());
    let run_plan = |plan: placid_lang::model::PlanId, run: &dyn Fn(usize, u32) -> u64| {
        let mut simulation = Simulation::new(&model, Neutral);
        let stages = placid_engine::plan::submit(&mut simulation, &model, plan, 0, run, &|_, trial| Some(f64::from(trial)));
        let mut events = Vec::new();
        simulation.run(&mut |event| events.push(event.clone()));
        let started = |stage: usize| {
            events.iter().filter(|event| stages[stage].contains(&event.job) && matches!(event.kind, EventKind::Started(_))).count()
        };
        let cancelled =
            |stage: usize| events.iter().filter(|event| stages[stage].contains(&event.job) && event.kind == EventKind::Cancelled).count();
        (started(1), cancelled(1))
    };
    // asr-sweep: trial 3 of the sweep runs past its 90-minute limit; the 4 finalists run.
    let sweep = run_plan(plan_named("asr-sweep"), &|stage, trial| if stage == 0 && trial == 3 { 6000 } else { 600 });
    assert_eq!(sweep, (4, 0));
    // vit-train: `prep` (one job, 2 h at most) runs 3 h and is cut; `train` is cancelled.
    let train = run_plan(plan_named("vit-train"), &|stage, _| if stage == 0 { 3 * 3600 } else { 600 });
    assert_eq!(train, (0, 1));
}
