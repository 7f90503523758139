//! Recorded telemetry in the simulator: the throttling rule keeps new comm-heavy jobs off a
//! domain exactly while it is throttled (from a hold after the smoothed figure went above the
//! threshold, until it drops or goes stale), and the file is validated.

mod support;

use placid_engine::telemetry::Recorded;
use placid_engine::{EventKind, Job, Neutral, Simulation};
use placid_lang::model::{ClassId, DomainId, Model, NodeId, PoolId, TeamId, TierId};
use placid_lang::span::FileId;
use support::load;

const INVENTORY: &str = "node \"a\" arch=\"x86_64\" nvlink-domain=\"d1\" {\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n}\nnode \"b\" arch=\"x86_64\" nvlink-domain=\"d2\" {\n    gpu 0 model=\"H200\"\n    gpu 1 model=\"H200\"\n}\n";

const POLICY: &str = "pool \"all\" { select arch=\"x86_64\" }\ntier \"t\" {\n    priority 10\n    preemption \"never\"\n}\ncost-center \"cc\" { budget daily=(usd)100 }\nteam \"t\" {\n    share 1\n    cost-center \"cc\"\n    tiers \"t\"\n}\nclass \"heavy\" { comm \"high\" }\nclass \"light\" { comm \"low\" }\ntelemetry half-life=\"10s\" max-age=\"5m\" ttl=\"5s\" {\n    throttle domain-nvlink-above=0.85 for=\"60s\" comm=\"high\"\n}\n";

/// d1 saturated from t=0 (the first sample is the average) to t=600, then idle; d2 idle.
const SERIES: &str = "at,scope,name,utilization\n# d1 is saturated for ten minutes\n0,domain,d1,0.95\n300,domain,d1,0.97\n600,domain,d1,0.1\n660,domain,d1,0.1\n0,domain,d2,0.2\n";

fn recorded(model: &Model, text: &str) -> Result<Recorded, placid_lang::diag::Diagnostics> {
    Recorded::read(model, model.telemetry.as_ref().expect("the policy declares telemetry"), FileId(0), text)
}

fn job(model: &Model, class: &str, submit: u64) -> Job {
    let mut job = Job::new(TeamId::from_index(0), TierId::from_index(0), 2);
    job.class = Some(ClassId::from_index(model.classes.iter().position(|each| each.name.as_str() == class).unwrap()));
    job.pool = Some(PoolId::from_index(0));
    job.submit = submit;
    job.run = 3600;
    job
}

#[test]
fn throttling_starts_after_the_hold_and_ends_when_the_domain_drops() {
    let model = load(INVENTORY, POLICY);
    let recorded = recorded(&model, SERIES).unwrap();
    let d1 = DomainId::from_index(0);
    assert!(!recorded.throttled(d1, 59), "not before the hold");
    assert!(recorded.throttled(d1, 60) && recorded.throttled(d1, 599));
    assert!(!recorded.throttled(d1, 600), "a sample below the threshold ends it");
    assert!(!recorded.throttled(DomainId::from_index(1), 300));
    // Smoothed: the drop to 0.1 moves the figure only part of the way.
    let after_drop = recorded.domain(d1, 600);
    assert!(after_drop > 0.1 && after_drop < 0.97, "{after_drop}");
}

/// Job 0 fills node b (domain d2) for an hour, so a job of class `class` submitted at
/// `submit` can only go to node a (domain d1): when does it start there?
fn start_on_a(model: &Model, recorded: Option<&Recorded>, class: &str, submit: u64) -> Option<u64> {
    let mut filler = job(model, "light", 0);
    filler.pin = Some(vec![NodeId::from_index(1)]);
    let mut simulation = Simulation::new(model, Neutral);
    if let Some(recorded) = recorded {
        simulation.with_telemetry(recorded);
    }
    simulation.submit(filler);
    simulation.submit(job(model, class, submit));
    let mut start = None;
    simulation.run(&mut |event| {
        if let EventKind::Started(placement) = &event.kind
            && event.job.index() == 1
        {
            assert_eq!(placement.node_ids().map(|node| model.node(node).name.to_string()).collect::<Vec<_>>(), ["a"]);
            start = Some(event.time);
        }
    });
    start
}

#[test]
fn a_throttled_domain_takes_no_comm_high_job_while_throttled() {
    let model = load(INVENTORY, POLICY);
    let recorded = recorded(&model, SERIES).unwrap();
    // Without telemetry, or before the hold has passed, the heavy job starts at once.
    assert_eq!(start_on_a(&model, None, "heavy", 120), Some(120));
    assert_eq!(start_on_a(&model, Some(&recorded), "heavy", 30), Some(30));
    // Submitted while d1 is throttled, it waits for the throttle to lift at 600.
    assert_eq!(start_on_a(&model, Some(&recorded), "heavy", 120), Some(600));
    // A job below the rule's comm level is not refused.
    assert_eq!(start_on_a(&model, Some(&recorded), "light", 120), Some(120));
}

#[test]
fn stale_telemetry_never_throttles() {
    let model = load(INVENTORY, POLICY);
    // One saturated sample, then nothing: after max-age (5m) the figure is static.
    let recorded = recorded(&model, "at,scope,name,utilization\n0,domain,d1,0.99\n").unwrap();
    let d1 = DomainId::from_index(0);
    assert!(recorded.throttled(d1, 300));
    assert!(!recorded.throttled(d1, 301));
    assert_eq!(recorded.domain(d1, 301), placid_lang::expr::STATIC_UTILIZATION);
    assert_eq!(start_on_a(&model, Some(&recorded), "heavy", 120), Some(301));
}

#[test]
fn bad_samples_are_skipped_and_bad_files_refused() {
    let model = load(INVENTORY, POLICY);
    let recorded = recorded(&model, "at,scope,name,utilization\n0,domain,d1,0.5\n10,domain,d1,NaN\n20,domain,d1,-1\n").unwrap();
    assert_eq!(recorded.domain(DomainId::from_index(0), 20), 0.5, "NaN and negative samples change nothing");
    assert_eq!(recorded.node(NodeId::from_index(0), 20), placid_lang::expr::STATIC_UTILIZATION, "no node series");
    let codes = |text: &str| -> Vec<u16> { recorded_codes(&model, text) };
    assert_eq!(codes(""), [124]);
    assert_eq!(codes("at,node,utilization\n"), [121]);
    assert_eq!(codes("at,scope,name,utilization\n0,domain,nope,0.5\n"), [127]);
    assert_eq!(codes("at,scope,name,utilization\n0,rack,d1,0.5\n"), [122]);
    assert_eq!(codes("at,scope,name,utilization\nsoon,domain,d1,0.5\n"), [122]);
    assert_eq!(codes("at,scope,name,utilization\n0,domain,d1,lots\n"), [122]);
    assert_eq!(codes("at,scope,name,utilization\n9,domain,d1,0.5\n9,domain,d1,0.5\n"), [122]);
    assert_eq!(codes("at,scope,name,utilization\n0,domain,d1\n"), [125]);
}

fn recorded_codes(model: &Model, text: &str) -> Vec<u16> {
    match recorded(model, text) {
        Ok(_) => Vec::new(),
        Err(diagnostics) => diagnostics.iter().map(|diagnostic| diagnostic.code.number()).collect(),
    }
}
