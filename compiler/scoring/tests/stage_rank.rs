//! A stage's score ranks the engine's candidates through its Wasm plugin (docs/semantics.md,
//! "Ranking"): bit for bit what the native evaluator computes on the same rows, on any free
//! capacity, and it decides where the engine places the stage's trials.

use placid_engine::cluster::Cluster;
use placid_engine::plan::stage_job;
use placid_engine::quota::Quotas;
use placid_engine::{Candidate, Job, JobState, Neutral, Ranker, Simulation};
use placid_lang::checked::Checked;
use placid_lang::model::{NodeId, PlanId};
use placid_scoring::stage_rank::StageScores;
use placid_targets::wasm::Program;
use placid_targets::wasm::native::Evaluator;
use proptest::prelude::*;

mod support;
use support::checked_example;

static VIT: std::sync::LazyLock<Checked> = std::sync::LazyLock::new(|| checked_example("vit-sweep"));
static CLUSTER: std::sync::LazyLock<Checked> = std::sync::LazyLock::new(|| checked_example("cluster"));

/// Every scored stage's first trial, with the nodes its pool reaches.
fn scored_stages(model: &Checked) -> Vec<(Job, Vec<NodeId>)> {
    let quotas = Quotas::new(model);
    let mut stages = Vec::new();
    for (plan, declared) in model.plans.iter().enumerate() {
        for (index, stage) in declared.stages.iter().enumerate() {
            if stage.score.is_some() {
                let job = stage_job(model, PlanId::from_index(plan), index, 0);
                stages.push((job, quotas.reach[stage.pool.value.index()].clone()));
            }
        }
    }
    assert!(!stages.is_empty(), "the example has no scored stage");
    stages
}

/// What the engine should see from the native evaluator on the rows the ranker built:
/// higher is better, a filtered or undefined score refuses the node.
fn native(model: &Checked, job: &Job, params: &[f64], rows: &[f64]) -> Vec<Option<f64>> {
    let score = model.score(job.score.expect("a scored job"));
    let program = Program::new(score).expect("the score compiles");
    let mut outcomes = Vec::new();
    Evaluator::new(&program).evaluate_batch(params, rows, &mut outcomes);
    let prefers_min = score.direction == placid_lang::model::Direction::Min;
    outcomes
        .iter()
        .map(|outcome| {
            (outcome.failed == 0 && outcome.score.is_finite()).then_some(if prefers_min { -outcome.score } else { outcome.score })
        })
        .collect()
}

fn same(left: &[Option<f64>], right: &[Option<f64>]) -> bool {
    left.len() == right.len() && left.iter().zip(right).all(|(a, b)| a.map(f64::to_bits) == b.map(f64::to_bits))
}

/// The candidates of `reach` with a fraction of each node's capacity free.
fn candidates(model: &Checked, reach: &[NodeId], fractions: &[(u8, u8)]) -> Vec<Candidate> {
    let empty = Cluster::new(model);
    reach
        .iter()
        .zip(fractions.iter().cycle())
        .map(|(&node, &(gpus, cpu))| {
            let full = empty.candidate(node);
            let free_gpus = full.free_gpus * u32::from(gpus) / 8;
            Candidate {
                node,
                free_gpus,
                free_gpu_milli: u64::from(free_gpus) * 1000,
                free_cpu_milli: full.free_cpu_milli * u64::from(cpu) / 8,
                free_memory_mib: full.free_memory_mib,
            }
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn the_plugin_ranks_as_the_native_evaluator_on_any_free_capacity(
        fractions in proptest::collection::vec((0u8..=8, 0u8..=8), 1..24),
        gpus in 1u32..=32,
    ) {
        for model in [&*VIT, &*CLUSTER] {
            let mut ranker = StageScores::new(model).expect("the plugins load");
            for (mut job, reach) in scored_stages(model) {
                job.gpus = gpus;
                let candidates = candidates(model, &reach, &fractions);
                let mut wasm = Vec::new();
                ranker.rank(&job, &candidates, &mut wasm);
                let (params, rows) = ranker.batch(&job, &candidates).expect("a scored job");
                let native = native(model, &job, params, rows);
                prop_assert!(same(&wasm, &native), "wasm {wasm:?}\nnative {native:?}");
            }
            prop_assert_eq!(ranker.failures(), 0);
        }
    }
}

/// Where the first trial of each scored stage of `model` lands, alone on an empty cluster.
fn placed(model: &Checked, mut ranker: impl Ranker) -> Vec<Vec<NodeId>> {
    let mut places = Vec::new();
    for (job, _) in scored_stages(model) {
        let job_name = (job.gpus, job.pool);
        let mut simulation = Simulation::new(model, &mut ranker);
        let id = simulation.submit(job);
        simulation.run_until(1, &mut |_| {});
        match simulation.state(id) {
            Some(JobState::Running(placement)) => places.push(placement.nodes.iter().map(|share| share.node).collect()),
            other => panic!("the trial of {:?} did not start: {other:?}", job_name),
        }
    }
    places
}

#[test]
fn the_stage_score_decides_where_its_trials_land() {
    let model = &*VIT;
    let through_plugin = placed(model, StageScores::new(model).expect("the plugins load"));
    // On an empty cluster the single-GPU trial goes to the best node by the native score.
    let (job, reach) = scored_stages(model).into_iter().next().expect("a scored stage");
    let mut ranker = StageScores::new(model).expect("the plugins load");
    let empty = Cluster::new(model);
    let all: Vec<Candidate> = reach.iter().map(|&node| empty.candidate(node)).collect();
    let (params, rows) = ranker.batch(&job, &all).expect("a scored job");
    let scores = native(model, &job, params, rows);
    let best = scores.iter().flatten().copied().fold(f64::NEG_INFINITY, f64::max);
    let node = through_plugin[0][0];
    let position = reach.iter().position(|each| *each == node).expect("placed in its pool");
    assert_eq!(scores[position], Some(best), "placed on {} though a node scores better", model.node(node).name);
}

/// A stage score that prefers the dearest node ranks the nodes of the cell its job is
/// admitted on, and does not move it to a dearer cell: Kueue assigns the flavor (the first of
/// the queue's, cheapest first, with room) before the kube-scheduler scores the flavor's
/// nodes, and the engine does the same (docs/semantics.md §4 and §5).
const DEAREST: &str = "score \"dearest\" {\n    prefer \"max\"\n    expr \"node.cost_per_gpu_hour\"\n}\nplan \"dear\" team=\"vision\" {\n    stage \"eval\" tier=\"P2\" class=\"eval\" pool=\"x86\" gpus=1 score=\"dearest\" time=\"20m\" max-time=\"1h\" {\n        command \"true\"\n    }\n}\n";

#[test]
fn a_score_ranks_within_the_cell_and_does_not_outbid_its_price() {
    let model = support::example_with(&[("policy/dear.kdl", DEAREST)], "dearest").model;
    let scored = placed(&model, StageScores::new(&model).expect("the plugins load"));
    let neutral = placed(&model, Neutral);
    let price = |places: &[Vec<NodeId>]| model.node(places[0][0]).cost_per_gpu_hour.map(|price| price.minor);
    let cheapest = model
        .pool(scored_stages(&model)[0].0.pool.expect("a pool"))
        .nodes
        .iter()
        .filter_map(|node| model.node(*node).cost_per_gpu_hour)
        .map(|price| price.minor)
        .min();
    assert_eq!(price(&scored), cheapest, "scored on {:?}, unscored on {:?}", scored, neutral);
    assert_eq!(price(&neutral), cheapest, "unscored on {:?}", neutral);
}

/// The cluster example with telemetry and a stage scored on `domain.nvlink_utilization`
/// over both NVLink domains (pool `nvlink`).
const BUSY: &str = "telemetry half-life=\"1m\" max-age=\"10m\" {\n    throttle domain-nvlink-above=0.85 for=\"5m\" comm=\"high\"\n}\nscore \"busy-aware\" {\n    prefer \"min\"\n    expr \"domain.nvlink_utilization * 100 + node.nvlink_utilization\"\n}\nplan \"busy\" team=\"vision\" {\n    stage \"train\" tier=\"P1\" class=\"model-parallel\" pool=\"nvlink\" gpus=8 score=\"busy-aware\" time=\"1h\" max-time=\"2h\"\n}\n";

#[test]
fn the_engine_ranks_on_the_recorded_figures_as_the_native_evaluator() {
    let model = support::example_with(&[("policy/busy.kdl", BUSY)], "busy-aware").model;
    let series = "at,scope,name,utilization\n0,domain,nvl-b,0.2\n0,node,rv-b-01,0.5\n300,domain,nvl-b,0.6\n";
    let recorded =
        placid_engine::telemetry::Recorded::read(&model, model.telemetry.as_ref().expect("declared"), placid_lang::span::FileId(0), series)
            .expect("the series reads");
    let mut ranker = StageScores::new(&model).expect("the plugins load");
    ranker.with_telemetry(&recorded);
    ranker.at(60);
    let (job, reach) = scored_stages(&model)
        .into_iter()
        .find(|(job, _)| model.score(job.score.expect("scored")).name.as_str() == "busy-aware")
        .expect("the busy stage");
    let candidates = candidates(&model, &reach, &[(8, 8)]);
    // The team reaches nvl-b only; rv-b-01 is busier itself.
    let mut rank_at = |now| {
        ranker.at(now);
        let mut wasm = Vec::new();
        ranker.rank(&job, &candidates, &mut wasm);
        let (params, rows) = ranker.batch(&job, &candidates).expect("a scored job");
        assert!(same(&wasm, &native(&model, &job, params, rows)), "{wasm:?}");
        let by_name = |name: &str| {
            let index = candidates.iter().position(|candidate| model.node(candidate.node).name.as_str() == name).expect("a candidate");
            wasm[index].expect("a score")
        };
        (by_name("rv-b-01"), by_name("rv-b-02"))
    };
    // Higher is better for the engine (the score prefers min).
    assert_eq!(rank_at(60), (-20.5, -20.0));
    // At 300 s the domain's sample of 0.6 moves the smoothed figure most of the way (five
    // half-lives): 0.2 + (1 - 2^-5) x 0.4.
    let (_, later) = rank_at(360);
    let mut average = placid_lang::telemetry::Ewma::new(60.0);
    let _ = average.update(0.0, 0.2);
    let expected = average.update(300.0, 0.6).expect("a good sample");
    assert!((expected - (0.2 + (1.0 - 1.0 / 32.0) * 0.4)).abs() < 1e-12);
    assert_eq!(later, -(expected * 100.0), "the same Ewma as the extender's");
}
