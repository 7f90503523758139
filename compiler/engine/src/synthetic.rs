//! A synthetic cluster and workload, for the engine's benchmarks and property tests: the
//! same generator behind both, so the figures and the invariants are about one workload.
//! Deterministic (a fixed-seed SplitMix64), with no dependency.

use placid_lang::model::{ClassId, Model, PoolId, TeamId, TierId};

use crate::job::Job;

/// GPUs per synthetic node.
pub const GPUS_PER_NODE: usize = 8;
/// Nodes per synthetic NVLink domain.
pub const NODES_PER_DOMAIN: usize = 8;

/// The inventory (KDL) of `nodes` nodes of [`GPUS_PER_NODE`] GPUs, in NVLink domains of
/// [`NODES_PER_DOMAIN`] nodes and racks of two domains.
pub fn inventory(nodes: usize) -> String {
    let mut text = String::with_capacity(nodes * 260);
    for index in 0..nodes {
        let domain = index / NODES_PER_DOMAIN;
        text.push_str(&format!(
            "node \"n{index:06}\" arch=\"x86_64\" rack=\"r{}\" chassis=\"c{domain}\" nvlink-domain=\"d{domain}\" capacity=\"on-demand\" {{\n    cpu harts=128\n    cost gpu-hour=(usd)2\n",
            domain / 2
        ));
        for gpu in 0..GPUS_PER_NODE {
            text.push_str(&format!("    gpu {gpu} model=\"H200\"\n"));
        }
        text.push_str("}\n");
    }
    text
}

/// The policy (KDL): one pool, a never-preempted tier, a requeued one with checkpoints and a
/// cancelled backfill tier; four teams of equal share; a node-local and a domain-local class.
pub const POLICY: &str = r#"pool "all" { select arch="x86_64" }
tier "prod" {
    priority 1000
    preemption "never"
}
tier "train" {
    priority 500
    preemption window="1m" mode="requeue" exempt="5m"
    checkpoint every="10m"
}
tier "batch" {
    priority 100
    preemption window="30s" mode="cancel"
    backfill #true
}
cost-center "cc"
team "t0" {
    share 1
    cost-center "cc"
    tiers "prod" "train" "batch"
}
team "t1" {
    share 1
    cost-center "cc"
    tiers "train" "batch"
}
team "t2" {
    share 2
    cost-center "cc"
    tiers "train" "batch"
}
team "t3" {
    share 1
    cost-center "cc"
    tiers "batch"
}
class "single" { locality "node" }
class "gang" { locality "nvlink-domain" }
"#;

/// A SplitMix64 generator.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed`.
    pub fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    /// The next value.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A value in `0..bound` (`bound` > 0).
    pub fn below(&mut self, bound: u64) -> u64 {
        self.next_u64() % bound
    }
}

/// `count` jobs for the synthetic `model`, arriving about every `gap` seconds: mostly
/// node-local jobs of 1 to 8 GPUs, some domain gangs of 16 to 64, running 10 minutes to 4
/// hours, at every tier the team may use.
pub fn jobs(model: &Model, count: usize, gap: u64, seed: u64) -> Vec<Job> {
    let mut rng = Rng::new(seed);
    let class = |name: &str| model.classes.iter().position(|class| class.name.as_str() == name).map(ClassId::from_index);
    let (single, gang) = (class("single"), class("gang"));
    let mut time = 0;
    (0..count)
        .map(|_| {
            time += rng.below(2 * gap + 1);
            let team = TeamId::from_index(rng.below(model.teams.len() as u64) as usize);
            let tiers = &model.team(team).tiers;
            let tier: TierId = tiers[rng.below(tiers.len() as u64) as usize].value;
            let is_gang = rng.below(10) == 0;
            let gpus = if is_gang { 16 << rng.below(3) } else { 1 << rng.below(4) };
            let mut job = Job::new(team, tier, gpus as u32);
            job.class = if is_gang { gang } else { single };
            job.pool = Some(PoolId::from_index(0));
            job.submit = time;
            job.run = 600 + rng.below(4 * 3600);
            job
        })
        .collect()
}
