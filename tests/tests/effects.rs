//! No setting that does nothing (issue 19): every node and property the language accepts
//! (`placid_lang::lower::schema`) has an entry here, and changing it in a bundled example
//! changes what the entry says it reaches: an artifact of a target, the engine's results, or
//! the checker's diagnostics. A property added to the schema without an entry fails
//! `every_setting_has_an_entry`; an effect removed from a target fails
//! `every_setting_reaches_what_it_says`. docs/language.md ("Where each setting takes effect")
//! has a row per setting, and `the_language_reference_says_where_every_setting_takes_effect`
//! keeps each row naming at least what its entry proves.

use std::collections::{BTreeMap, BTreeSet};

use placid_lang::lower::schema;
use placid_tests::effects::{Edit, Mutation, Outcome, Reach, Step};

use Edit::{Append, Remove, RemoveProperty, Replace, Set, SetArgument};
use Reach::{Checker, Engine, Kubernetes, Prometheus, Runbooks, Slurm, Wasm};

/// What an entry proves about its setting.
enum Effect {
    /// Making `Mutation` changes at least each of these.
    Changes(Mutation, &'static [Reach]),
    /// A node whose meaning is all in its properties and children, which have entries of
    /// their own (it takes no argument that means anything alone).
    Parts,
    /// A fact recorded for people and tools that no target, engine rule or check reads, and why.
    Record(&'static str),
}

struct Entry {
    key: &'static str,
    effect: Effect,
}

const fn on(
    key: &'static str,
    example: &'static str,
    file: &'static str,
    at: &'static str,
    edit: Edit,
    reaches: &'static [Reach],
) -> Entry {
    Entry { key, effect: Effect::Changes(Mutation { example, given: &[], step: Step { file, at, edit } }, reaches) }
}

const fn given(
    key: &'static str,
    example: &'static str,
    given: &'static [Step],
    file: &'static str,
    at: &'static str,
    edit: Edit,
    reaches: &'static [Reach],
) -> Entry {
    Entry { key, effect: Effect::Changes(Mutation { example, given, step: Step { file, at, edit } }, reaches) }
}

const fn parts(key: &'static str) -> Entry {
    Entry { key, effect: Effect::Parts }
}

const fn record(key: &'static str, why: &'static str) -> Entry {
    Entry { key, effect: Effect::Record(why) }
}

const C: &str = "cluster";
const M: &str = "migration";
const PROJECT: &str = "placid.kdl";
const X86: &str = "inventory/x86-pcie.kdl";
const NVL_A: &str = "inventory/nvl-a.kdl";
const TIERS: &str = "policy/tiers.kdl";
const TEAMS: &str = "policy/teams.kdl";
const CLASSES: &str = "policy/classes.kdl";
const SCORING: &str = "policy/scoring.kdl";
const PLANS: &str = "policy/plans.kdl";
const ROUTES: &str = "policy/routes.kdl";
const ALERTS: &str = "policy/alerts.kdl";
const TESTS: &str = "policy/tests.kdl";
const MIGRATION: &str = "policy/migration.kdl";

/// Why the probe's CPU and GPU details are records: they describe the hardware for people and
/// for `placid-probe`'s drift checks (docs/probe.md); nothing is placed by them yet.
const PROBE_RECORD: &str = "written by placid-probe to describe the hardware (docs/probe.md); no target, engine rule or check reads it";

/// A GPU of `x86-04` in MIG mode with four `1g.12gb` instances.
const MIG_GPU: &[Step] = &[
    Step { file: X86, at: "node=x86-04/gpu=3", edit: Set("mig", "\"enabled\"") },
    Step { file: X86, at: "node=x86-04/gpu=3", edit: Append("mig-instance profile=\"1g.12gb\" count=4") },
];

/// That GPU, and the `eval` class on its instances.
const MIG: &[Step] = &[MIG_GPU[0], MIG_GPU[1], Step { file: CLASSES, at: "class=eval", edit: Append("mig \"1g.12gb\"") }];

/// A second pool on each side of the migration, for `from=` and `to=` to move to.
const MIGRATION_POOLS: &[Step] = &[Step {
    file: "policy/hardware.kdl",
    at: "",
    edit: Append("pool \"x86-all\" { select arch=\"x86_64\" }\npool \"rv-all\" { select arch=\"riscv64\" }"),
}];

/// A fact of a GPU that no scheduler placid emits for takes as a resource.
const GPU_MEMORY: &str = "a record of the hardware: Slurm's GRES, Kubernetes' device plugin and the engine count GPUs (and MIG instances, whose profile names their memory), not GPU memory";

/// The policy test's outcome as the checker sees it: the engine says the expectation can never
/// hold (E104), so the project does not check.
const IMPOSSIBLE: Reach = Checker("test-expectation-impossible");

/// The cluster example without its admission tests.
const NO_ADMISSION_TESTS: &[Step] = &[
    Step { file: TESTS, at: "test=research-is-refused-p1-by-admission", edit: Remove },
    Step { file: TESTS, at: "test=vision-p1-is-admitted", edit: Remove },
    Step { file: TESTS, at: "test=speech-is-refused-the-production-route-by-admission", edit: Remove },
];
/// A pool of the nodes labelled `zone=a`, and one such node.
const ZONE_POOL: &[Step] = &[
    Step { file: X86, at: "node=x86-02", edit: Append("label \"zone\" \"a\"") },
    Step { file: "policy/hardware.kdl", at: "", edit: Append("pool \"zone-a\" { select { label \"zone\" \"a\" } }") },
];

/// The eval stage without its own command, so that its class's counts.
const EVAL_WITHOUT_COMMAND: &[Step] = &[Step { file: PLANS, at: "plan=vit-train/stage=eval/command", edit: Remove }];

/// A cost center too poor for P0's reservation.
/// A telemetry block with a throttle, which no example declares (its settings act in the
/// extender and `placid simulate --telemetry`, tested in compiler/scoring/tests/extender_telemetry.rs
/// and compiler/engine/tests/telemetry.rs; here the checker's bounds show each is read).
const TELEMETRY: &[Step] = &[Step {
    file: "policy/hardware.kdl",
    at: "",
    edit: Append(
        "telemetry half-life=\"5m\" max-age=\"2m\" ttl=\"15s\" {\n    throttle domain-nvlink-above=0.85 for=\"10m\" comm=\"high\"\n}",
    ),
}];

const TINY_CENTER: &[Step] = &[Step { file: TEAMS, at: "", edit: Append("cost-center \"tiny\" { budget daily=(usd)100 }") }];

/// A third NVLink domain of one host, whose bisection (two GPUs of 900GB/s) is a quarter of
/// the others'.
const SMALL_DOMAIN: &[Step] = &[Step {
    file: NVL_A,
    at: "",
    edit: Append(
        "node \"rv-c-01\" arch=\"riscv64\" rack=\"r4\" chassis=\"c5\" nvlink-domain=\"nvl-c\" capacity=\"on-demand\" {
            cpu harts=64
            memory \"512GiB\"
            cost gpu-hour=(usd)3.10
            gpu 0 model=\"H200\" { nvlink peer=1 links=6 bandwidth=\"300GB/s\"; nvlink peer=2 links=6 bandwidth=\"300GB/s\"; nvlink peer=3 links=6 bandwidth=\"300GB/s\"; }
            gpu 1 model=\"H200\" { nvlink peer=0 links=6 bandwidth=\"300GB/s\"; nvlink peer=2 links=6 bandwidth=\"300GB/s\"; nvlink peer=3 links=6 bandwidth=\"300GB/s\"; }
            gpu 2 model=\"H200\" { nvlink peer=0 links=6 bandwidth=\"300GB/s\"; nvlink peer=1 links=6 bandwidth=\"300GB/s\"; nvlink peer=3 links=6 bandwidth=\"300GB/s\"; }
            gpu 3 model=\"H200\" { nvlink peer=0 links=6 bandwidth=\"300GB/s\"; nvlink peer=1 links=6 bandwidth=\"300GB/s\"; nvlink peer=2 links=6 bandwidth=\"300GB/s\"; }
        }",
    ),
}];

const ENTRIES: &[Entry] = &[
    // The project file.
    on("project", C, PROJECT, "project", SetArgument(0, "\"ml\""), &[Kubernetes]),
    on("project@currency", C, PROJECT, "project", Set("currency", "\"eur\""), &[Checker("currency-mismatch")]),
    on(
        "project@runbooks",
        C,
        PROJECT,
        "project",
        Set("runbooks", "\"https://git.example.com/ml/out/-/blob/main\""),
        &[Kubernetes, Prometheus],
    ),
    on("inventory", C, PROJECT, "inventory", SetArgument(0, "\"inventory/nvl-*.kdl\""), &[Checker("empty-pool")]),
    on("include", C, PROJECT, "include", SetArgument(0, "\"policy/[a-s]*.kdl\""), &[Checker("unresolved-reference")]),
    parts("target"),
    on("target=slurm", C, PROJECT, "target=slurm", Remove, &[Slurm]),
    on("target=slurm@version", C, PROJECT, "target=slurm", Set("version", "\"24.05\""), &[Slurm]),
    on("target=slurm@cluster", C, PROJECT, "target=slurm", Set("cluster", "\"gpu\""), &[Slurm]),
    on("target=slurm@accounting", C, PROJECT, "target=slurm", Set("accounting", "#false"), &[Slurm]),
    // A directory that is not there is an error, never ignored (E048).
    on(
        "target=slurm@templates",
        C,
        PROJECT,
        "target=slurm",
        Set("templates", "\"templates/slurm\""),
        &[Checker("slurm-template-override")],
    ),
    // Without the example's admission tests, which need the target (E035 without it).
    given("target=kubernetes", C, NO_ADMISSION_TESTS, PROJECT, "target=kubernetes", Remove, &[Kubernetes]),
    // Every version from 1.30 gets the same manifests; older ones are refused.
    on("target=kubernetes@version", C, PROJECT, "target=kubernetes", Set("version", "\"1.29\""), &[Checker("invalid-value")]),
    on("target=kubernetes@label-prefix", C, PROJECT, "target=kubernetes", Set("label-prefix", "\"acme.io\""), &[Kubernetes]),
    on("target=kubernetes@namespace", C, PROJECT, "target=kubernetes", Set("namespace", "\"ops\""), &[Kubernetes]),
    on("target=kubernetes/argo", C, PROJECT, "target=kubernetes/argo", Remove, &[Kubernetes]),
    on(
        "target=kubernetes/argo@repo",
        C,
        PROJECT,
        "target=kubernetes/argo",
        Set("repo", "\"https://git.example.com/x.git\""),
        &[Kubernetes],
    ),
    on("target=kubernetes/argo@path", C, PROJECT, "target=kubernetes/argo", Set("path", "\"out/k8s\""), &[Kubernetes]),
    on("target=kubernetes/argo@revision", C, PROJECT, "target=kubernetes/argo", Set("revision", "\"release\""), &[Kubernetes]),
    on("target=kubernetes/argo@namespace", C, PROJECT, "target=kubernetes/argo", Set("namespace", "\"gitops\""), &[Kubernetes]),
    parts("telemetry"),
    given(
        "telemetry@half-life",
        C,
        TELEMETRY,
        "policy/hardware.kdl",
        "telemetry",
        Set("half-life", "\"0s\""),
        &[Checker("telemetry-duration-out-of-range")],
    ),
    given(
        "telemetry@max-age",
        C,
        TELEMETRY,
        "policy/hardware.kdl",
        "telemetry",
        Set("max-age", "\"5s\""),
        &[Checker("telemetry-cache-outlives-age")],
    ),
    given(
        "telemetry@ttl",
        C,
        TELEMETRY,
        "policy/hardware.kdl",
        "telemetry",
        Set("ttl", "\"10m\""),
        &[Checker("telemetry-cache-outlives-age")],
    ),
    given(
        "telemetry/node-query",
        C,
        TELEMETRY,
        "policy/hardware.kdl",
        "telemetry",
        Append("node-query \"\""),
        &[Checker("telemetry-query-invalid")],
    ),
    given(
        "telemetry/domain-query",
        C,
        TELEMETRY,
        "policy/hardware.kdl",
        "telemetry",
        Append("domain-query \"\""),
        &[Checker("telemetry-query-invalid")],
    ),
    parts("telemetry/throttle"),
    given(
        "telemetry/throttle@domain-nvlink-above",
        C,
        TELEMETRY,
        "policy/hardware.kdl",
        "telemetry/throttle",
        Set("domain-nvlink-above", "1.5"),
        &[Checker("throttle-threshold-out-of-range")],
    ),
    given(
        "telemetry/throttle@for",
        C,
        TELEMETRY,
        "policy/hardware.kdl",
        "telemetry/throttle",
        Set("for", "\"2d\""),
        &[Checker("telemetry-duration-out-of-range")],
    ),
    given(
        "telemetry/throttle@comm",
        C,
        TELEMETRY,
        "policy/hardware.kdl",
        "telemetry/throttle",
        Set("comm", "\"bogus\""),
        &[Checker("invalid-value")],
    ),
    on("target=kubernetes/extender", C, PROJECT, "target=kubernetes/extender", Remove, &[Kubernetes, Checker("score-without-extender")]),
    on("target=kubernetes/extender@image", C, PROJECT, "target=kubernetes/extender", Set("image", "\"r.example/placid:2\""), &[Kubernetes]),
    on("target=kubernetes/extender@ignorable", C, PROJECT, "target=kubernetes/extender", Set("ignorable", "#true"), &[Kubernetes]),
    on(
        "target=kubernetes/extender@score",
        C,
        PROJECT,
        "target=kubernetes/extender",
        Set("score", "\"nope\""),
        &[Checker("unresolved-reference")],
    ),
    on("target=kubernetes/extender@replicas", C, PROJECT, "target=kubernetes/extender", Set("replicas", "3"), &[Kubernetes]),
    given(
        "target=kubernetes/extender@prometheus",
        C,
        TELEMETRY,
        PROJECT,
        "target=kubernetes/extender",
        Set("prometheus", "\"prom.monitoring.svc:9090\""),
        &[Kubernetes],
    ),
    on("target=kubernetes/steps", C, PROJECT, "target=kubernetes/steps", Remove, &[Checker("steps-image-missing")]),
    on("target=kubernetes/steps@image", C, PROJECT, "target=kubernetes/steps", Set("image", "\"r.example/sh:1\""), &[Kubernetes]),
    on("target=wasm", C, PROJECT, "target=wasm", Remove, &[Wasm]),
    // The inventory.
    parts("node"),
    on("node@arch", C, X86, "node=x86-01", Set("arch", "\"aarch64\""), &[Slurm, Kubernetes, Engine]),
    on("node@rack", C, X86, "node=x86-01", Set("rack", "\"r9\""), &[Slurm, Kubernetes]),
    on("node@chassis", C, X86, "node=x86-01", Set("chassis", "\"c9\""), &[Slurm]),
    on("node@nvlink-domain", C, X86, "node=x86-01", Set("nvlink-domain", "\"pcie\""), &[Slurm]),
    on("node@capacity", C, X86, "node=x86-01", Set("capacity", "\"spot\""), &[Slurm, Kubernetes, Engine]),
    on("node/cpu", C, X86, "node=x86-01/cpu", Remove, &[Slurm, Kubernetes]),
    on("node/cpu@harts", C, X86, "node=x86-01/cpu", Set("harts", "192"), &[Slurm, Kubernetes]),
    on("node/cpu@cores", C, X86, "node=x86-01/cpu", Set("cores", "96"), &[Slurm]),
    on("node/cpu@sockets", C, X86, "node=x86-01/cpu", Set("sockets", "1"), &[Slurm]),
    record("node/cpu@isa", PROBE_RECORD),
    on("node/cpu@numa-nodes", C, X86, "node=x86-01/cpu", Set("numa-nodes", "1"), &[Slurm]),
    record("node/cpu@model", PROBE_RECORD),
    record("node/cpu@vector", PROBE_RECORD),
    record("node/cpu/profile", PROBE_RECORD),
    record("node/cpu/profile@verdict", PROBE_RECORD),
    record("node/cpu/profile@missing", PROBE_RECORD),
    record("node/cpu/profile@unverifiable", PROBE_RECORD),
    record("node/cpu/numa", PROBE_RECORD),
    record("node/cpu/numa@cpus", PROBE_RECORD),
    record("node/cpu/numa@memory", PROBE_RECORD),
    on("node/memory", C, X86, "node=x86-01/memory", SetArgument(0, "\"768GiB\""), &[Slurm, Kubernetes]),
    parts("node/cost"),
    on("node/cost@gpu-hour", C, X86, "node=x86-01/cost", Set("gpu-hour", "(usd)2.50"), &[Slurm, Kubernetes, Prometheus, Runbooks]),
    on("node/cost@egress-tb", C, X86, "node=x86-01/cost", Set("egress-tb", "(usd)0.05"), &[Kubernetes, Prometheus]),
    on("node/gpu", C, X86, "node=x86-01/gpu=3", Remove, &[Slurm, Kubernetes, Engine]),
    on("node/gpu@model", C, X86, "node=x86-01/gpu=0", Set("model", "\"L4\""), &[Slurm]),
    record("node/gpu@memory", GPU_MEMORY),
    record("node/gpu@uuid", PROBE_RECORD),
    record("node/gpu@pci", PROBE_RECORD),
    on("node/gpu@numa", C, X86, "node=x86-01/gpu=0", Set("numa", "1"), &[Slurm]),
    given("node/gpu@mig", C, MIG, X86, "node=x86-04/gpu=3", Set("mig", "\"disabled\""), &[Checker("mig-unavailable")]),
    parts("node/gpu/nvlink"),
    on("node/gpu/nvlink@peer", C, NVL_A, "node=rv-a-01/gpu=0/nvlink", Set("peer", "0"), &[Checker("unresolved-reference")]),
    on("node/gpu/nvlink@links", C, NVL_A, "node=rv-a-01/gpu=0/nvlink", Set("links", "2"), &[Slurm]),
    on(
        "node/gpu/nvlink@bandwidth",
        C,
        NVL_A,
        "node=rv-a-01/gpu=0/nvlink",
        Set("bandwidth", "\"100GB/s\""),
        &[Kubernetes, Prometheus, Engine],
    ),
    parts("node/gpu/mig-instance"),
    given(
        "node/gpu/mig-instance@profile",
        C,
        MIG,
        X86,
        "node=x86-04/gpu=3/mig-instance",
        Set("profile", "\"2g.24gb\""),
        &[Checker("mig-unavailable")],
    ),
    given("node/gpu/mig-instance@count", C, MIG, X86, "node=x86-04/gpu=3/mig-instance", Set("count", "1"), &[Engine]),
    given("node/label", C, ZONE_POOL, X86, "node=x86-01", Append("label \"zone\" \"a\""), &[Slurm, Kubernetes]),
    // Pools.
    parts("pool"),
    parts("pool/select"),
    on("pool/select@arch", C, "policy/hardware.kdl", "pool=nvlink/select", Set("arch", "\"x86_64\""), &[Slurm, Kubernetes]),
    on(
        "pool/select@nvlink-domain",
        C,
        "policy/hardware.kdl",
        "pool=nvlink/select",
        Set("nvlink-domain", "\"nvl-a\""),
        &[Slurm, Kubernetes],
    ),
    on("pool/select@rack", C, "policy/hardware.kdl", "pool=nvlink/select", Set("rack", "\"r1\""), &[Slurm, Kubernetes]),
    on("pool/select@chassis", C, "policy/hardware.kdl", "pool=nvlink/select", Set("chassis", "\"c1\""), &[Slurm, Kubernetes]),
    on("pool/select@capacity", C, "policy/hardware.kdl", "pool=x86/select", Set("capacity", "\"on-demand\""), &[Slurm, Kubernetes, Engine]),
    on("pool/select@gpu-model", C, "policy/hardware.kdl", "pool=nvlink/select", Set("gpu-model", "\"H100\""), &[Checker("empty-pool")]),
    given(
        "pool/select/label",
        C,
        &[Step { file: X86, at: "node=x86-01", edit: Append("label \"zone\" \"a\"") }],
        "policy/hardware.kdl",
        "pool=mixed/select",
        Append("label \"zone\" \"a\""),
        &[Slurm, Kubernetes],
    ),
    // Tiers.
    parts("tier"),
    on("tier/priority", C, TIERS, "tier=P1/priority", SetArgument(0, "600"), &[Slurm, Kubernetes]),
    on("tier/preemption", C, TIERS, "tier=P0/preemption", Replace("preemption window=\"1m\""), &[Slurm, Kubernetes]),
    on("tier/preemption@window", C, TIERS, "tier=P2/preemption", Set("window", "\"5m\""), &[Slurm, Kubernetes, Engine]),
    on("tier/preemption@mode", C, TIERS, "tier=P1/preemption", Set("mode", "\"cancel\""), &[Slurm, Kubernetes]),
    on(
        "tier/preemption@exempt",
        C,
        TIERS,
        "tier=P2/preemption",
        Set("exempt", "\"10m\""),
        &[Slurm, Engine, Checker("exempt-not-on-kubernetes")],
    ),
    parts("tier/reserve"),
    // A reserving tier runs only in its reserved pools: the test that places it there cannot pass.
    given("tier/reserve@pool", M, MIGRATION_POOLS, "policy/tiers.kdl", "tier=serve/reserve", Set("pool", "\"x86-all\""), &[IMPOSSIBLE]),
    on("tier/reserve@gpus", C, TIERS, "tier=P0/reserve", Set("gpus", "8"), &[Slurm, Kubernetes, Engine]),
    parts("tier/checkpoint"),
    on("tier/checkpoint@every", C, TIERS, "tier=P1/checkpoint", Set("every", "\"45m\""), &[Slurm, Kubernetes, Prometheus]),
    on("tier/checkpoint@incremental", C, TIERS, "tier=P0/checkpoint", RemoveProperty("incremental"), &[Slurm, Kubernetes]),
    on("tier/backfill", C, TIERS, "tier=P1/backfill", SetArgument(0, "#false"), &[Slurm, Engine, Checker("backfill-off-on-slurm")]),
    given(
        "tier/cost-center",
        C,
        TINY_CENTER,
        TIERS,
        "tier=P0/cost-center",
        SetArgument(0, "\"tiny\""),
        &[Checker("reservation-over-budget")],
    ),
    parts("tier/budget"),
    on("tier/budget@daily", C, TIERS, "tier=P2/budget", Set("daily", "(usd)3000"), &[Slurm]),
    on("tier/max-time", C, TIERS, "tier=P1/max-time", SetArgument(0, "\"3d\""), &[Slurm]),
    // Cost centers and teams.
    parts("cost-center"),
    parts("cost-center/budget"),
    on("cost-center/budget@daily", C, TEAMS, "cost-center=research/budget", Set("daily", "(usd)3000"), &[Kubernetes, Prometheus]),
    parts("team"),
    on("team/share", C, TEAMS, "team=vision/share", SetArgument(0, "50"), &[Slurm, Kubernetes, Prometheus]),
    on("team/cost-center", C, TEAMS, "team=research/cost-center", SetArgument(0, "\"prod-ml\""), &[Slurm, Kubernetes]),
    on("team/tiers", C, TEAMS, "team=research/tiers", Replace("tiers \"P1\" \"P2\""), &[Slurm, Kubernetes]),
    parts("team/budget"),
    on("team/budget@daily", C, TEAMS, "team=speech/budget", Set("daily", "(usd)2500"), &[Slurm, Kubernetes]),
    on("team/namespace", C, TEAMS, "team=speech/namespace", SetArgument(0, "\"speech-2\""), &[Kubernetes]),
    on("team/account", C, TEAMS, "team=research/account", SetArgument(0, "\"res-2\""), &[Slurm]),
    on("admin-accounts", C, TEAMS, "admin-accounts", SetArgument(0, "\"ops-2\""), &[Slurm]),
    // Classes.
    parts("class"),
    on("class/nvlink", C, CLASSES, "class=data-parallel/nvlink", SetArgument(0, "\"none\""), &[Engine]),
    on(
        "class/nvlink@min-bandwidth",
        C,
        CLASSES,
        "class=model-parallel/nvlink",
        Set("min-bandwidth", "\"1000GB/s\""),
        &[Checker("nvlink-unavailable")],
    ),
    on("class/nvlink@lanes", C, CLASSES, "class=model-parallel/nvlink", Set("lanes", "4"), &[Slurm]),
    given(
        "class/nvlink@min-bisection",
        C,
        SMALL_DOMAIN,
        CLASSES,
        "class=model-parallel/nvlink",
        Set("min-bisection", "\"3600GB/s\""),
        &[Slurm],
    ),
    on("class/locality", C, CLASSES, "class=data-parallel/locality", SetArgument(0, "\"node\""), &[Slurm, Kubernetes, Engine]),
    on("class/comm", C, CLASSES, "class=data-parallel/comm", SetArgument(0, "\"high\""), &[Kubernetes]),
    given("class/mig", C, MIG_GPU, CLASSES, "class=eval", Append("mig \"1g.12gb\""), &[Kubernetes, Engine]),
    on("class/image", C, CLASSES, "class=model-parallel/image", SetArgument(0, "\"ghcr.io/acme/train:2.5\""), &[Kubernetes]),
    // What a class's stages run by default (the cluster example's stages all name a command).
    given("class/command", C, EVAL_WITHOUT_COMMAND, CLASSES, "class=eval", Append("command \"evaluate\""), &[Slurm, Kubernetes]),
    on("class/env", C, CLASSES, "class=model-parallel/env", Set("NCCL_DEBUG", "\"INFO\""), &[Slurm, Kubernetes]),
    on("class/cpus", C, CLASSES, "class=eval", Append("cpus 4"), &[Slurm, Kubernetes]),
    on("class/memory", C, CLASSES, "class=eval", Append("memory \"16GiB\""), &[Slurm, Kubernetes]),
    on("class/workdir", C, CLASSES, "class=eval", Append("workdir \"/workspace\""), &[Slurm, Kubernetes]),
    on(
        "class/platforms",
        C,
        CLASSES,
        "class=data-parallel/platforms",
        SetArgument(1, "\"linux/arm64\""),
        &[Checker("missing-riscv64-image")],
    ),
    // Scores.
    parts("score"),
    on("score/prefer", C, SCORING, "score=cost-aware/prefer", SetArgument(0, "\"max\""), &[Wasm]),
    on("score/expr", C, SCORING, "score=cost-aware/expr", SetArgument(0, "\"node.cost_per_gpu_hour\""), &[Wasm]),
    on("score/filter", C, SCORING, "score=cost-aware/filter=nvlink-if-required", Remove, &[Wasm]),
    on("score/penalty", C, SCORING, "score=cost-aware/penalty", SetArgument(0, "0.7"), &[Wasm]),
    on("score/penalty@when", C, SCORING, "score=cost-aware/penalty", Set("when", "\"job.comm == medium\""), &[Wasm]),
    // Plans.
    parts("plan"),
    on("plan@team", C, PLANS, "plan=asr-sweep", Set("team", "\"vision\""), &[Slurm, Kubernetes]),
    parts("plan/stage"),
    on("plan/stage@tier", C, PLANS, "plan=vit-train/stage=eval", Set("tier", "\"P1\""), &[Slurm, Kubernetes]),
    on("plan/stage@class", C, PLANS, "plan=vit-train/stage=eval", Set("class", "\"data-parallel\""), &[Slurm, Kubernetes]),
    on("plan/stage@pool", C, PLANS, "plan=vit-train/stage=eval", Set("pool", "\"mixed\""), &[Slurm, Kubernetes]),
    on("plan/stage@gpus", C, PLANS, "plan=vit-train/stage=eval", Set("gpus", "2"), &[Slurm, Kubernetes]),
    on("plan/stage@trials", C, PLANS, "plan=asr-sweep/stage=finalists", Set("trials", "2"), &[Slurm, Kubernetes]),
    on("plan/stage@capacity", C, PLANS, "plan=vit-train/stage=eval", Set("capacity", "\"spot\""), &[Slurm, Kubernetes]),
    on("plan/stage@after", C, PLANS, "plan=vit-train/stage=eval", Set("after", "\"prep\""), &[Slurm, Kubernetes]),
    on("plan/stage@score", C, PLANS, "plan=vit-train/stage=train", RemoveProperty("score"), &[Kubernetes, Checker("score-not-on-slurm")]),
    on("plan/stage@time", C, PLANS, "plan=vit-train/stage=eval", Set("time", "\"30m\""), &[Slurm]),
    on("plan/stage@max-time", C, PLANS, "plan=vit-train/stage=eval", Set("max-time", "\"2h\""), &[Slurm, Kubernetes]),
    on("plan/stage/after", C, PLANS, "plan=vit-train/stage=eval", Append("after \"prep\""), &[Slurm, Kubernetes]),
    parts("plan/stage/promote"),
    on("plan/stage/promote@top", C, PLANS, "plan=asr-sweep/stage=sweep/promote", Set("top", "2"), &[Slurm, Kubernetes]),
    on("plan/stage/promote@by", C, PLANS, "plan=asr-sweep/stage=sweep/promote", Set("by", "\"val-loss\""), &[Slurm, Kubernetes]),
    on("plan/stage/promote@order", C, PLANS, "plan=asr-sweep/stage=sweep/promote", Set("order", "\"max\""), &[Slurm, Kubernetes]),
    on("plan/stage/command", C, PLANS, "plan=vit-train/stage=eval/command", SetArgument(2, "\"9\""), &[Slurm, Kubernetes]),
    on("plan/stage/image", C, PLANS, "plan=vit-train/stage=eval", Append("image \"ghcr.io/acme/eval:2.5\""), &[Kubernetes]),
    on("plan/stage/env", C, PLANS, "plan=vit-train/stage=eval", Append("env SEED=\"7\""), &[Slurm, Kubernetes]),
    on("plan/stage/cpus", C, PLANS, "plan=vit-train/stage=train/cpus", SetArgument(0, "16"), &[Slurm, Kubernetes]),
    on("plan/stage/memory", C, PLANS, "plan=vit-train/stage=train/memory", SetArgument(0, "\"128GiB\""), &[Slurm, Kubernetes]),
    on("plan/stage/workdir", C, PLANS, "plan=vit-train/stage=eval", Append("workdir \"/data\""), &[Slurm, Kubernetes]),
    // Routes.
    parts("route"),
    on("route@tag", C, ROUTES, "route", Set("tag", "\"urgent\""), &[Slurm, Kubernetes]),
    on("route@tier", C, ROUTES, "route", Set("tier", "\"P1\""), &[Slurm, Kubernetes]),
    on("route@class", C, ROUTES, "route", Set("class", "\"eval\""), &[Slurm, Kubernetes]),
    // Metrics and alerts.
    parts("metric"),
    on("metric@query", C, ALERTS, "metric=budget-burn", Set("query", "\"placid_cost_daily\""), &[Prometheus, Kubernetes]),
    parts("alert"),
    on("alert@metric", C, ALERTS, "alert=nvlink-saturation", Set("metric", "\"budget-burn\""), &[Prometheus, Kubernetes]),
    on("alert@above", C, ALERTS, "alert=nvlink-saturation", Set("above", "\"80%\""), &[Prometheus, Kubernetes]),
    on(
        "alert@below",
        C,
        ALERTS,
        "alert=nvlink-saturation",
        Replace("alert \"nvlink-saturation\" metric=\"nvlink-utilization\" below=\"10%\" for=\"10m\" severity=\"warning\""),
        &[Prometheus, Kubernetes],
    ),
    on("alert@of", C, ALERTS, "alert=nvlink-saturation", Set("of", "\"baseline\""), &[Checker("alert-not-expressible")]),
    on("alert@for", C, ALERTS, "alert=nvlink-saturation", Set("for", "\"20m\""), &[Prometheus, Kubernetes]),
    on("alert@severity", C, ALERTS, "alert=nvlink-saturation", Set("severity", "\"critical\""), &[Prometheus, Kubernetes]),
    // Migrations.
    parts("migration"),
    given("migration@from", M, MIGRATION_POOLS, MIGRATION, "migration", Set("from", "\"x86-all\""), &[Runbooks]),
    given("migration@to", M, MIGRATION_POOLS, MIGRATION, "migration", Set("to", "\"rv-all\""), &[Runbooks]),
    on("migration/classes", M, MIGRATION, "migration/classes", Replace("classes \"finetune\""), &[Runbooks]),
    on("migration/services", M, MIGRATION, "migration/services", Replace("services \"llm-serve\" namespace=\"inference\""), &[Runbooks]),
    on("migration/services@namespace", M, MIGRATION, "migration/services", Set("namespace", "\"serving\""), &[Runbooks]),
    parts("migration/compatibility"),
    on("migration/compatibility/image-platform", M, MIGRATION, "migration/compatibility/image-platform", Remove, &[Runbooks]),
    on("migration/compatibility/binary-audit", M, MIGRATION, "migration/compatibility/binary-audit", Remove, &[Runbooks]),
    on("migration/compatibility/min-driver", M, MIGRATION, "migration/compatibility/min-driver", SetArgument(0, "\"580.65\""), &[Runbooks]),
    on("migration/compatibility/min-kernel", M, MIGRATION, "migration/compatibility/min-kernel", SetArgument(0, "\"6.12\""), &[Runbooks]),
    parts("migration/accept"),
    on("migration/accept@metric", M, MIGRATION, "migration/accept", Set("metric", "\"kernel-panics\""), &[Runbooks]),
    on("migration/accept@at-least", M, MIGRATION, "migration/accept", Set("at-least", "\"95%\""), &[Runbooks]),
    on(
        "migration/accept@at-most",
        M,
        MIGRATION,
        "migration/accept",
        Replace("accept metric=\"throughput-per-gpu\" at-most=\"200%\" of=\"baseline\""),
        &[Runbooks],
    ),
    on("migration/accept@of", M, MIGRATION, "migration/accept", RemoveProperty("of"), &[Runbooks]),
    on("migration/accept@for", M, MIGRATION, "migration/accept", Set("for", "\"48h\""), &[Runbooks]),
    parts("migration/rollback-when"),
    on("migration/rollback-when@metric", M, MIGRATION, "migration/rollback-when", Set("metric", "\"gpu-faults\""), &[Runbooks]),
    on("migration/rollback-when@above", M, MIGRATION, "migration/rollback-when", Set("above", "\"5%\""), &[Runbooks]),
    on(
        "migration/rollback-when@below",
        M,
        MIGRATION,
        "migration/rollback-when",
        Replace("rollback-when metric=\"error-rate\" below=\"2%\" for=\"10m\""),
        &[Runbooks],
    ),
    on("migration/rollback-when@of", M, MIGRATION, "migration/rollback-when", Set("of", "\"baseline\""), &[Runbooks]),
    on("migration/rollback-when@for", M, MIGRATION, "migration/rollback-when", Set("for", "\"20m\""), &[Runbooks]),
    on("migration/phase", M, MIGRATION, "migration/phase=canary", Remove, &[Runbooks]),
    on("migration/phase@weight", M, MIGRATION, "migration/phase=canary", Set("weight", "\"2%\""), &[Runbooks]),
    on("migration/phase@hold", M, MIGRATION, "migration/phase=canary", Set("hold", "\"6h\""), &[Runbooks]),
    // Policy tests: a change the test's expectation no longer matches changes its result.
    parts("test"),
    parts("test/running"),
    on("test/running@team", C, TESTS, "test=p1-preempts-a-p2-sweep/running", Set("team", "\"research\""), &[Engine]),
    on("test/running@tier", C, TESTS, "test=p1-preempts-a-p2-sweep/running", Set("tier", "\"P1\""), &[Engine]),
    on("test/running@class", C, TESTS, "test=p1-preempts-a-p2-sweep/running", Set("class", "\"eval\""), &[Engine]),
    on("test/running@gpus", C, TESTS, "test=short-job-backfills-without-delaying-the-head/running", Set("gpus", "16"), &[Engine]),
    on("test/running@pool", C, TESTS, "test=p1-preempts-a-p2-sweep/running", Set("pool", "\"x86\""), &[Engine]),
    on("test/running@run", C, TESTS, "test=short-job-backfills-without-delaying-the-head/running", Set("run", "\"10m\""), &[Engine]),
    on(
        "test/running/nodes",
        C,
        TESTS,
        "test=short-job-backfills-without-delaying-the-head/running/nodes",
        Replace("nodes \"x86-01\" \"x86-02\""),
        &[Engine],
    ),
    parts("test/job"),
    on("test/job@team", C, TESTS, "test=research-cannot-use-production-tier/job", Set("team", "\"vision\""), &[Engine]),
    on("test/job@tier", C, TESTS, "test=research-cannot-use-production-tier/job", Set("tier", "\"P2\""), &[Engine]),
    on("test/job@class", C, TESTS, "test=budget-holds-the-next-job/job=first", Set("class", "\"model-parallel\""), &[IMPOSSIBLE]),
    on("test/job@gpus", C, TESTS, "test=too-big-for-a-domain/job", Set("gpus", "16"), &[Engine]),
    on("test/job@pool", C, TESTS, "test=reserved-domain-takes-production/job", Set("pool", "\"nvl-b\""), &[IMPOSSIBLE]),
    on("test/job@at", C, TESTS, "test=short-job-backfills-without-delaying-the-head/job=short", Set("at", "\"2h\""), &[Engine]),
    on("test/job@run", C, TESTS, "test=short-job-backfills-without-delaying-the-head/job=short", Set("run", "\"3h\""), &[Engine]),
    on("test/job@tag", C, TESTS, "test=too-big-for-the-x86-pool/job", Set("tag", "\"prod-sla\""), &[Engine]),
    on("test/job/nodes", C, TESTS, "test=reserved-domain-takes-production/job", Append("nodes \"rv-a-01\""), &[IMPOSSIBLE]),
    on("test/at", C, TESTS, "test=preempted-sweep-frees-the-domain-after-its-window/at", SetArgument(0, "\"1m\""), &[Engine]),
    parts("test/expect"),
    on("test/expect@job", C, TESTS, "test=budget-holds-the-next-job/expect", Set("job", "\"second\""), &[Engine]),
    on("test/expect@pool", C, TESTS, "test=model-parallel-stays-in-one-domain/expect", Set("pool", "\"nvl-a\""), &[IMPOSSIBLE]),
    on("test/expect@same-domain", C, TESTS, "test=budget-holds-the-next-job/expect", Set("same-domain", "#true"), &[Engine]),
    on("test/expect@domain", C, TESTS, "test=reserved-domain-takes-production/expect", Set("domain", "\"nvl-b\""), &[Engine]),
    on("test/expect@rack", C, TESTS, "test=reserved-domain-takes-production/expect", Set("rack", "\"r2\""), &[Engine]),
    on("test/expect@chassis", C, TESTS, "test=reserved-domain-takes-production/expect", Set("chassis", "\"c2\""), &[Engine]),
    on("test/expect@reason", C, TESTS, "test=too-big-for-a-domain/expect", Set("reason", "\"exceeds-quota\""), &[Engine]),
    on("test/expect@message", C, TESTS, "test=research-is-refused-p1-by-admission/expect", Set("message", "\"grace period\""), &[Engine]),
    on("test/expect/nodes", C, TESTS, "test=reserved-domain-takes-production/expect", Append("nodes \"rv-a-04\""), &[Engine]),
    on("test/expect/victims", C, TESTS, "test=p1-preempts-a-p2-sweep/expect/victims", SetArgument(0, "\"train\""), &[Engine]),
];

/// Every key the language has: each declaration, each node of the schema and each child it
/// names (`tier/checkpoint`), and each property (`tier/checkpoint@every`).
fn language_keys() -> BTreeSet<String> {
    let mut keys: BTreeSet<String> = schema::POLICY_DECLARATIONS
        .iter()
        .chain(schema::PROJECT_DECLARATIONS)
        .chain(schema::INVENTORY_DECLARATIONS)
        .map(|name| (*name).to_owned())
        .collect();
    for node in schema::NODES {
        keys.insert(node.path.to_owned());
        keys.extend(node.properties.iter().map(|property| format!("{}@{property}", node.path)));
        keys.extend(node.children.iter().map(|child| format!("{}/{child}", node.path)));
    }
    keys
}

#[test]
fn every_setting_has_an_entry() {
    let keys = language_keys();
    let mut entries = BTreeSet::new();
    let mut problems = Vec::new();
    for entry in ENTRIES {
        if !entries.insert(entry.key) {
            problems.push(format!("`{}` has two entries", entry.key));
        }
        if !keys.contains(entry.key) {
            problems.push(format!("`{}` has an entry but is not in the language (placid_lang::lower::schema)", entry.key));
        }
        if let Effect::Record(why) = entry.effect
            && why.trim().is_empty()
        {
            problems.push(format!("`{}` is a record but says not why nothing reads it", entry.key));
        }
        // A node is `Parts` only when it has parts (`target` has one schema per kind, `target=slurm`):
        // a leaf's meaning is its argument.
        let has_parts = |path: &str| path == entry.key || path.strip_prefix(entry.key).is_some_and(|rest| rest.starts_with('='));
        if matches!(entry.effect, Effect::Parts) && !schema::NODES.iter().any(|node| has_parts(node.path)) {
            problems.push(format!("`{}` is listed as the sum of its parts, but has no properties or children", entry.key));
        }
    }
    for key in keys.iter().filter(|key| !entries.contains(key.as_str())) {
        problems.push(format!("`{key}` is accepted by the language but has no entry: add one that shows what it changes"));
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The rows of the table in docs/language.md, "Where each setting takes effect": setting, text.
fn documented_effects() -> BTreeMap<String, String> {
    let path = placid_tests::workspace_root().join("docs").join("language.md");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|error| panic!("cannot read {}: {error}", path.display()));
    let section = text.split_once("## Where each setting takes effect").map(|(_, rest)| rest).unwrap_or_default();
    let section = section.split("\n## ").next().unwrap_or_default();
    section
        .lines()
        .filter_map(|line| line.strip_prefix("| `"))
        .filter_map(|row| row.split_once("` | "))
        .map(|(key, effect)| (key.to_owned(), effect.trim_end_matches(" |").to_owned()))
        .collect()
}

/// The words docs/language.md uses for a reach.
fn documented_as(reach: Reach) -> String {
    match reach {
        Checker(name) => {
            let code = placid_lang::codes::Code::ALL.iter().find(|code| code.name() == name);
            code.map_or_else(|| format!("a code named {name}"), |code| format!("E{:03}", code.number()))
        }
        other => other.to_string(),
    }
}

#[test]
fn the_language_reference_says_where_every_setting_takes_effect() {
    let documented = documented_effects();
    let mut problems = Vec::new();
    for entry in ENTRIES {
        let Some(effect) = documented.get(entry.key) else {
            problems.push(format!("`{}` has no row in docs/language.md, \"Where each setting takes effect\"", entry.key));
            continue;
        };
        let effect = effect.to_lowercase();
        let words: Vec<String> = match &entry.effect {
            Effect::Changes(_, reaches) => reaches.iter().map(|reach| documented_as(*reach).to_lowercase()).collect(),
            Effect::Parts => vec!["its".to_owned()],
            Effect::Record(_) => vec!["record".to_owned()],
        };
        for word in words.iter().filter(|word| !effect.contains(word.as_str())) {
            problems.push(format!("docs/language.md says `{}` takes effect in \"{effect}\", which does not name {word}", entry.key));
        }
    }
    let keys = language_keys();
    problems.extend(
        documented
            .keys()
            .filter(|key| !keys.contains(key.as_str()))
            .map(|key| format!("docs/language.md has a row for `{key}`, which the language does not have")),
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn every_setting_reaches_what_it_says() {
    let mut bases: BTreeMap<String, Outcome> = BTreeMap::new();
    let mut failures = Vec::new();
    for entry in ENTRIES {
        let Effect::Changes(mutation, reaches) = &entry.effect else { continue };
        let traces = placid_tests::example(mutation.example).join("traces");
        let base_key = format!("{}{:?}", mutation.example, mutation.given);
        let base = bases.entry(base_key).or_insert_with(|| {
            let dir = tempfile::tempdir().expect("a temporary directory");
            mutation.base(dir.path());
            let outcome = Outcome::of(dir.path(), &traces);
            assert!(!outcome.errors, "`{}`: the project it starts from has errors: {:?}", entry.key, outcome.diagnostics());
            outcome
        });
        let dir = tempfile::tempdir().expect("a temporary directory");
        mutation.changed(dir.path());
        let changed = Outcome::of(dir.path(), &traces);
        let found = changed.reaches(base);
        let missing: Vec<String> = reaches.iter().filter(|reach| !found.contains(reach)).map(ToString::to_string).collect();
        let expects_an_error = reaches.iter().any(|reach| matches!(reach, Checker(_)));
        if !missing.is_empty() || (changed.errors && !expects_an_error) {
            let found: Vec<String> = found.iter().map(ToString::to_string).collect();
            failures.push(format!(
                "`{}`: {} {} should change {} but changed [{}]{}",
                entry.key,
                mutation.example,
                mutation.step,
                missing.join(", "),
                found.join(", "),
                if changed.errors { format!("; it made errors: {:?}", changed.new_diagnostics(base)) } else { String::new() },
            ));
        }
    }
    assert!(failures.is_empty(), "{} setting(s) do not reach what their entry says:\n{}", failures.len(), failures.join("\n"));
}
